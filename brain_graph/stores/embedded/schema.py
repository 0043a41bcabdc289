"""The SQLite schema of the embedded store, and rows to records."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from brain_graph.core.filters import NodeFacets
from brain_graph.stores.base import NodeRecord

SCHEMA_VERSION = 5  # 2: vectors.content_hash; 3: nodes.heads; 4: vectors.lexical; 5: facets of nodes and vectors
SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS nodes (
    tenant_id TEXT NOT NULL, node_id TEXT NOT NULL, node_type TEXT NOT NULL, project_key TEXT,
    title TEXT, url TEXT, secured INTEGER NOT NULL, acl TEXT NOT NULL, text TEXT NOT NULL,
    properties TEXT NOT NULL, heads TEXT, namespace TEXT, tags TEXT NOT NULL DEFAULT '[]', updated_at INTEGER,
    PRIMARY KEY (tenant_id, node_id)
);
CREATE TABLE IF NOT EXISTS edges (
    tenant_id TEXT NOT NULL, edge_type TEXT NOT NULL, from_node_id TEXT NOT NULL, to_node_id TEXT NOT NULL,
    properties TEXT NOT NULL, PRIMARY KEY (tenant_id, from_node_id, edge_type, to_node_id)
);
CREATE INDEX IF NOT EXISTS edges_by_target ON edges (tenant_id, to_node_id, edge_type);
CREATE TABLE IF NOT EXISTS vectors (
    tenant_id TEXT NOT NULL, profile_id TEXT NOT NULL, node_id TEXT NOT NULL, project_key TEXT,
    secured INTEGER NOT NULL, acl TEXT NOT NULL, vector BLOB NOT NULL, content_hash TEXT NOT NULL DEFAULT '',
    lexical TEXT NOT NULL DEFAULT '', node_type TEXT NOT NULL DEFAULT '', namespace TEXT,
    tags TEXT NOT NULL DEFAULT '[]', updated_at INTEGER, PRIMARY KEY (tenant_id, profile_id, node_id)
);
CREATE INDEX IF NOT EXISTS vectors_by_node ON vectors (tenant_id, node_id);
CREATE TABLE IF NOT EXISTS profiles (
    profile_id TEXT PRIMARY KEY, embedder_name TEXT NOT NULL, dimension INTEGER NOT NULL
);
"""
# Columns of schema versions 2 to 5, added to a store that lacks them when it is next written. A
# vector of an older store reads with the facets of no node (NodeFacets(): node type ''), which no
# node has, so the indexer writes it again with its node's.
MIGRATIONS = (
    ("vectors", "content_hash", "ALTER TABLE vectors ADD COLUMN content_hash TEXT NOT NULL DEFAULT ''"),
    ("nodes", "heads", "ALTER TABLE nodes ADD COLUMN heads TEXT"),
    ("vectors", "lexical", "ALTER TABLE vectors ADD COLUMN lexical TEXT NOT NULL DEFAULT ''"),
    ("nodes", "namespace", "ALTER TABLE nodes ADD COLUMN namespace TEXT"),
    ("nodes", "tags", "ALTER TABLE nodes ADD COLUMN tags TEXT NOT NULL DEFAULT '[]'"),
    ("nodes", "updated_at", "ALTER TABLE nodes ADD COLUMN updated_at INTEGER"),
    ("vectors", "node_type", "ALTER TABLE vectors ADD COLUMN node_type TEXT NOT NULL DEFAULT ''"),
    ("vectors", "namespace", "ALTER TABLE vectors ADD COLUMN namespace TEXT"),
    ("vectors", "tags", "ALTER TABLE vectors ADD COLUMN tags TEXT NOT NULL DEFAULT '[]'"),
    ("vectors", "updated_at", "ALTER TABLE vectors ADD COLUMN updated_at INTEGER"),
)
# Readers cache what they read from the file (the vector matrices) under random tokens of the ``meta``
# table, so they can tell whether it is still current (:mod:`brain_graph.stores.embedded.vectors`):
# ``file_version`` for the whole file (a write that records a profile's identity, or names no tenants)
# and ``data_version:<tenant id>`` for one tenant (every write stores a new one for each tenant it
# touches): a write to one tenant leaves the other tenants' matrices current. ``data_version`` is
# the whole-file token that readers without these tokens key on alone: every write stores a new one
# and records it as ``data_version_seen``; a ``data_version`` other than the one seen comes from a
# writer without these tokens, and makes the whole file stale. Tokens are absent until a write of
# this schema touches the store (docs/internals/embedded-store.md).
DATA_VERSION_KEY = "data_version"
SEEN_VERSION_KEY = "data_version_seen"
FILE_VERSION_KEY = "file_version"
TENANT_VERSION_PREFIX = "data_version:"
_TOKEN = "lower(hex(randomblob(16)))"
BUMP_DATA_VERSION = f"INSERT OR REPLACE INTO meta (key, value) VALUES ('{DATA_VERSION_KEY}', {_TOKEN})"
_DATA_VERSION = f"(SELECT value FROM meta WHERE key = '{DATA_VERSION_KEY}')"
MARK_DATA_VERSION_SEEN = f"INSERT OR REPLACE INTO meta (key, value) VALUES ('{SEEN_VERSION_KEY}', {_DATA_VERSION})"
BUMP_FILE_VERSION = f"INSERT OR REPLACE INTO meta (key, value) VALUES ('{FILE_VERSION_KEY}', {_TOKEN})"
BUMP_TENANT_VERSIONS = (
    f"INSERT OR REPLACE INTO meta (key, value) SELECT '{TENANT_VERSION_PREFIX}' || value, {_TOKEN} FROM json_each(?)"
)
# ``vectors_version:["<tenant id>","<profile id>"]``: a new token whenever a write changes a vector row
# of that tenant and profile (vectors, their facet and visibility columns, lexical documents), recorded
# by temporary triggers of the writing connection (TRACK_VECTOR_WRITES): the key of the profile's
# cached indexes and vector files, so a write to one profile of a tenant leaves its others current.
VECTOR_VERSION_PREFIX = "vectors_version:"
TRACK_VECTOR_WRITES = """
CREATE TEMP TABLE IF NOT EXISTS written_vectors (
    tenant_id TEXT NOT NULL, profile_id TEXT NOT NULL, PRIMARY KEY (tenant_id, profile_id)
) WITHOUT ROWID;
CREATE TEMP TRIGGER IF NOT EXISTS vector_inserted AFTER INSERT ON main.vectors BEGIN
    INSERT OR IGNORE INTO written_vectors VALUES (NEW.tenant_id, NEW.profile_id);
END;
CREATE TEMP TRIGGER IF NOT EXISTS vector_deleted AFTER DELETE ON main.vectors BEGIN
    INSERT OR IGNORE INTO written_vectors VALUES (OLD.tenant_id, OLD.profile_id);
END;
CREATE TEMP TRIGGER IF NOT EXISTS vector_updated AFTER UPDATE ON main.vectors BEGIN
    INSERT OR IGNORE INTO written_vectors VALUES (OLD.tenant_id, OLD.profile_id), (NEW.tenant_id, NEW.profile_id);
END;
"""
BUMP_VECTOR_VERSIONS = (
    f"INSERT OR REPLACE INTO meta (key, value) SELECT '{VECTOR_VERSION_PREFIX}' || json_array(tenant_id, profile_id),"
    f" {_TOKEN} FROM temp.written_vectors"
)
FORGET_VECTOR_WRITES = "DELETE FROM temp.written_vectors"
# (file token, a data_version no writer of these tokens stored or NULL, tenant token, a JSON object of
# the vectors_version token or null of tenant :tenant for each profile id of :profiles, a JSON array)
READ_DATA_VERSIONS = (
    f"SELECT (SELECT value FROM meta WHERE key = '{FILE_VERSION_KEY}'),"
    f" (SELECT d.value FROM meta d WHERE d.key = '{DATA_VERSION_KEY}'"
    f"  AND d.value IS NOT (SELECT value FROM meta WHERE key = '{SEEN_VERSION_KEY}')),"
    f" (SELECT value FROM meta WHERE key = '{TENANT_VERSION_PREFIX}' || :tenant),"
    " (SELECT json_group_object(p.value, (SELECT m.value FROM meta m"
    f"  WHERE m.key = '{VECTOR_VERSION_PREFIX}' || json_array(:tenant, p.value))) FROM json_each(:profiles) p)"
)
# A node's own facet fields, as given (``tags`` a JSON array, ``updated_at`` microseconds since the
# epoch); absent until a write of schema version 5 touches the store: a read of them on such a store
# fails with "no such column" (:func:`lacks_facets`) and is made again with :data:`UNSTORED` in their
# place (:func:`read_nodes`), so a store of the current schema pays nothing for the check.
NODE_FACET_COLUMNS = ("namespace", "tags", "updated_at")
UNSTORED = {"node_type": "''", "namespace": "NULL", "tags": "'[]'", "updated_at": "NULL"}  # facet column defaults
_BASE_NODE_COLUMNS = "tenant_id, node_id, node_type, project_key, title, url, secured, acl, text, properties"
NODE_COLUMNS = _BASE_NODE_COLUMNS + ", " + ", ".join(NODE_FACET_COLUMNS)
OLDER_NODE_COLUMNS = _BASE_NODE_COLUMNS + ", " + ", ".join(f"{UNSTORED[c]} AS {c}" for c in NODE_FACET_COLUMNS)
# ``heads``: the passage heads of a node with a long text (brain_graph.core.passage_heads), else NULL;
# the column is absent until a write of schema version 3 touches the store (readers check).
WRITTEN_NODE_COLUMNS = NODE_COLUMNS + ", heads"
META_COLUMNS = (
    "tenant_id",
    "node_id",
    "node_type",
    "project_key",
    "title",
    "url",
    "secured",
    "acl",
    "properties",
    *NODE_FACET_COLUMNS,
)
# A vector's facets (what seed filters match: brain_graph.core.filters.NodeFacets, normalised), as
# stored with it since schema version 5; :func:`vector_facet_columns` of a store without them reads
# every vector with the facets of no node.
VECTOR_FACET_COLUMNS = ("node_type", "namespace", "tags", "updated_at")
_DECODER = json.JSONDecoder()

Read = TypeVar("Read")
Result = TypeVar("Result")


def stored_json(text: str) -> Any:
    """``json.loads(text)`` of a JSON column: the same value or error; the JSON this store writes
    (canonical, no white space around it) is decoded without ``json.loads``' per-call overhead (a search
    decodes about a hundred small values)."""
    try:
        value, end = _DECODER.raw_decode(text)
    except (ValueError, TypeError):
        return json.loads(text)  # white space first, bytes, or not JSON: as json.loads has it
    return value if end == len(text) else json.loads(text)


def migrate(connection: sqlite3.Connection) -> None:
    """Add the columns of :data:`MIGRATIONS` the store lacks."""
    for table, column, statement in MIGRATIONS:
        if column not in table_columns(connection, table):
            connection.execute(statement)


def table_columns(connection: sqlite3.Connection, table: str) -> set[str]:
    """The column names of one of this schema's tables (``table`` is never input)."""
    return {row[1] for row in connection.execute(f"PRAGMA table_info({table})")}


def has_column(connection: sqlite3.Connection, table: str, column: str) -> bool:
    """Whether the table has ``column`` (one row read)."""
    [(found,)] = connection.execute(
        "SELECT count(*) FROM pragma_table_info(:table) WHERE name = :column", {"table": table, "column": column}
    ).fetchall()
    return bool(found)


def vector_facet_columns(stored: bool) -> str:
    """The select list of :data:`VECTOR_FACET_COLUMNS`: the columns when ``stored`` (the store has
    them: :func:`stores_vector_facets`), else their defaults under their names."""
    return ", ".join(column if stored else f"{UNSTORED[column]} AS {column}" for column in VECTOR_FACET_COLUMNS)


def stores_vector_facets(connection: sqlite3.Connection) -> bool:
    """Whether the store's vectors have their facet columns (schema version 5; one row read)."""
    return has_column(connection, "vectors", "updated_at")


def stored_facets(row: sqlite3.Row) -> NodeFacets:
    """The facets of a row holding :data:`VECTOR_FACET_COLUMNS`."""
    return NodeFacets(row["node_type"], row["namespace"], stored_tags(row["tags"]), row["updated_at"])


def stored_tags(text: str) -> tuple[str, ...]:
    """The tags of a ``tags`` column (a JSON array; most nodes have none)."""
    return () if text == "[]" else tuple(stored_json(text))


def lacks_facets(error: sqlite3.OperationalError) -> bool:
    """Whether ``error`` is a read of a node facet column (:data:`NODE_FACET_COLUMNS`) that a store
    written before schema version 5 lacks."""
    message = str(error)
    return message.startswith("no such column: ") and message.rsplit(".", 1)[-1].split()[-1] in NODE_FACET_COLUMNS


def read_nodes(read: Callable[[Read], Result], current: Read, older: Read) -> Result:
    """``read(current)``, or ``read(older)`` (the same read with :data:`UNSTORED` facet columns) on a
    store whose nodes lack the facet columns (:func:`lacks_facets`)."""
    try:
        return read(current)
    except sqlite3.OperationalError as error:
        if not lacks_facets(error):
            raise
    return read(older)


def node_record(row: sqlite3.Row) -> NodeRecord:
    """The full record (``text`` included) of a row holding :data:`NODE_COLUMNS`."""
    meta = node_meta(row)
    return NodeRecord(
        tenant_id=meta.tenant_id,
        node_id=meta.node_id,
        node_type=meta.node_type,
        project_key=meta.project_key,
        title=meta.title,
        url=meta.url,
        secured=meta.secured,
        acl=meta.acl,
        text=stored_json(row["text"]),
        properties=meta.properties,
        namespace=meta.namespace,
        tags=meta.tags,
        updated_at=meta.updated_at,
    )


def meta_columns(alias: str, *, facets: bool = True) -> str:
    """The metadata columns of a node (everything but ``text``) of table alias ``alias``; without
    ``facets`` (a store of schema version 4 or older), its facet columns' defaults under their names."""
    return ", ".join(
        f"{alias}.{column}" if facets or column not in NODE_FACET_COLUMNS else f"{UNSTORED[column]} AS {column}"
        for column in META_COLUMNS
    )


def node_meta_values(values: Sequence[Any]) -> NodeRecord:
    """The metadata record of the values of :data:`META_COLUMNS`, in that order (``text`` left empty)."""
    tenant_id, node_id, node_type, project_key, title, url, secured, acl, properties, *facets = values
    namespace, tags, updated_at = facets
    return NodeRecord(
        tenant_id=tenant_id,
        node_id=node_id,
        node_type=node_type,
        project_key=project_key,
        title=title,
        url=url,
        secured=bool(secured),
        acl=() if acl == "[]" else tuple(stored_json(acl)),  # most nodes: public, no ACL
        properties=stored_json(properties),
        namespace=namespace,
        tags=stored_tags(tags),
        updated_at=updated_at,
    )


def node_meta(row: sqlite3.Row) -> NodeRecord:
    """The metadata record of a row holding :data:`META_COLUMNS` (``text`` left empty)."""
    return node_meta_values([row[column] for column in META_COLUMNS])
