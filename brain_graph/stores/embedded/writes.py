"""Writes of the embedded store: a load in one SQLite transaction, and deletions; and the checks of
the store's path shared with the reads (a path that cannot be a store is a one-line
:class:`~brain_graph.core.errors.ConfigurationError` naming it, exit code 2 in the CLI)."""

from __future__ import annotations

import json
import sqlite3
from array import array
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from brain_graph.core.errors import BackendUnavailableError, BrainGraphError, ConfigurationError, DatasetError
from brain_graph.core.passage_heads import stored_heads
from brain_graph.stores.base import ChangeSet, EdgeRecord, NodeRecord, ProfileIndexInfo, VectorRecord
from brain_graph.stores.codec import canonical_json
from brain_graph.stores.embedded.schema import (
    BUMP_DATA_VERSION,
    BUMP_FILE_VERSION,
    BUMP_TENANT_VERSIONS,
    BUMP_VECTOR_VERSIONS,
    FORGET_VECTOR_WRITES,
    MARK_DATA_VERSION_SEEN,
    SCHEMA,
    SCHEMA_VERSION,
    TRACK_VECTOR_WRITES,
    VECTOR_FACET_COLUMNS,
    WRITTEN_NODE_COLUMNS,
    migrate,
)
from brain_graph.stores.identity import identity_change_refused, profile_conflict
from brain_graph.stores.write_checks import (
    check_changes,
    check_load,
    dangling_edge_error,
    outside_ends,
    record_tenants,
)

SQLITE_BUSY = 5
SQLITE_LOCKED = 6
SQLITE_READONLY = 8
SQLITE_IOERR = 10
SQLITE_FULL = 13
SQLITE_CANTOPEN = 14
SQLITE_NOTADB = 26
BACKEND = "embedded store"
WRITE_LOCK_WAIT_S = 30.0  # how long a write waits for another writer of the file to finish


def store_path_problem(path: Path) -> str | None:
    """Why ``path`` cannot be a store file: it is a directory, or the nearest existing folder on its
    way is not a folder (``BRAIN_GRAPH_HOME`` naming a file); ``None`` otherwise."""
    if path.is_dir():
        return f"embedded store {path} is a directory, not a store file"
    for parent in path.parents:
        if parent.is_dir():
            return None
        if parent.exists():
            return f"embedded store {path}: {parent} is not a folder"
    return None


def check_store_path(path: Path) -> None:
    """Raise :class:`ConfigurationError` when ``path`` cannot be a store file (:func:`store_path_problem`)."""
    problem = store_path_problem(path)
    if problem is not None:
        raise ConfigurationError(problem)


def open_error(path: Path, error: sqlite3.Error) -> ConfigurationError | None:
    """The configuration error an SQLite error opening ``path`` means (a file that is not a SQLite
    database, a file that cannot be opened), or ``None`` for any other error."""
    code = (getattr(error, "sqlite_errorcode", None) or 0) & 0xFF
    if code == SQLITE_NOTADB:
        return ConfigurationError(
            f"embedded store {path} is not a SQLite database; point --store, BRAIN_GRAPH_STORE_PATH or "
            "BRAIN_GRAPH_HOME at a brain-graph store (or at a file that does not exist yet, to create one)"
        )
    if code == SQLITE_CANTOPEN:
        return ConfigurationError(f"embedded store {path} cannot be opened ({error})")
    return None


def write_error(path: Path, error: sqlite3.OperationalError) -> BrainGraphError | None:
    """What an SQLite error of a write means: the store cannot be written now (another process holds
    its write lock past :data:`WRITE_LOCK_WAIT_S`; the file is read-only, full or failing:
    :class:`BackendUnavailableError`), or the file is not a brain-graph store (its tables differ:
    :class:`ConfigurationError`); ``None`` for anything else (a bug: raised as it is). Nothing of the
    write was kept."""
    code = (getattr(error, "sqlite_errorcode", None) or 0) & 0xFF
    if code in (SQLITE_BUSY, SQLITE_LOCKED):
        return BackendUnavailableError(BACKEND, f"{path} is being written by another process; retry when it is done")
    if code in (SQLITE_READONLY, SQLITE_IOERR, SQLITE_FULL):
        return BackendUnavailableError(BACKEND, f"{path}: {error}")
    if any(sign in str(error) for sign in ("no such table", "no such column", "has no column")):
        return ConfigurationError(f"embedded store {path} is not a brain-graph store ({error})")
    return None


def _connect_for_writing(path: Path) -> sqlite3.Connection:
    """A connection to the store at ``path``, created with its schema if needed."""
    check_store_path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise ConfigurationError(f"embedded store {path}: its folder cannot be created ({error.strerror})") from None
    connection: sqlite3.Connection | None = None
    try:
        connection = sqlite3.connect(path, timeout=WRITE_LOCK_WAIT_S, isolation_level=None)
        connection.execute("PRAGMA journal_mode=WAL")
        connection.executescript(SCHEMA)  # idempotent, outside the data transaction
        migrate(connection)
        connection.executescript(TRACK_VECTOR_WRITES)  # this connection's writes to vectors, by (tenant, profile)
    except BaseException as error:
        if connection is not None:
            connection.close()
        mapped: Exception | None = open_error(path, error) if isinstance(error, sqlite3.Error) else None
        if mapped is None and isinstance(error, sqlite3.OperationalError):
            mapped = write_error(path, error)
        if mapped is None:
            raise
        raise mapped from None
    return connection


@contextmanager
def _transaction(path: Path, tenants: Iterable[str] | None = None) -> Iterator[sqlite3.Connection]:
    """A write transaction on the store at ``path`` (created with its schema if needed), committed
    when the block ends, rolled back when it raises. It stores new data versions (see
    :mod:`~brain_graph.stores.embedded.schema`) for ``tenants``, the tenants the block writes (None:
    the whole file's), and for each (tenant, profile) whose vector rows it changed, so readers drop
    what they cached of those only. SQLite failing to lock,
    write or commit (another writer past the wait, a read-only or full disk) is a
    :class:`BackendUnavailableError` naming the store."""
    connection = _connect_for_writing(path)
    try:
        connection.execute("BEGIN IMMEDIATE")
        yield connection
        connection.execute(BUMP_DATA_VERSION)  # readers keying on data_version alone: all they cached is stale
        connection.execute(MARK_DATA_VERSION_SEEN)  # stored by a writer of per-tenant tokens
        if tenants is None:
            connection.execute(BUMP_FILE_VERSION)  # readers' cached vectors of the file are stale
        else:
            connection.execute(BUMP_TENANT_VERSIONS, (json.dumps(sorted(set(tenants))),))
        connection.execute(BUMP_VECTOR_VERSIONS)  # readers' cached indexes of the profiles written are stale
        connection.execute(FORGET_VECTOR_WRITES)
        connection.execute("COMMIT")
    except BaseException as error:
        if connection.in_transaction:
            connection.execute("ROLLBACK")
        mapped = write_error(path, error) if isinstance(error, sqlite3.OperationalError) else None
        if mapped is None:
            raise
        raise mapped from None
    finally:
        connection.close()


def delete_where(path: Path, tables: Sequence[str], column: str, values: Sequence[str]) -> None:
    """Delete the rows of ``tables`` whose ``column`` is one of ``values``, in one transaction.
    ``tables`` and ``column`` are names of this module's schema, never input."""
    with _transaction(path, values if column == "tenant_id" else None) as connection:
        for table in tables:
            connection.execute(
                f"DELETE FROM {table} WHERE {column} IN (SELECT value FROM json_each(?))", (json.dumps(list(values)),)
            )


def _record_profiles(connection: sqlite3.Connection, profiles: Sequence[ProfileIndexInfo]) -> bool:
    """Record each profile's embedder identity, refusing a new one while a tenant holds vectors of the
    recorded one (run after the replaced tenants' rows were deleted, in the same transaction); whether
    an identity was new or changed."""
    changed = False
    for info in profiles:
        row = connection.execute(
            "SELECT embedder_name, dimension FROM profiles WHERE profile_id = ?", (info.profile_id,)
        ).fetchone()
        if row is not None and (row[0], row[1]) != (info.embedder_name, info.dimension):
            holders = connection.execute(
                "SELECT DISTINCT tenant_id FROM vectors WHERE profile_id = ? ORDER BY tenant_id", (info.profile_id,)
            ).fetchall()
            if holders:
                recorded = ProfileIndexInfo(info.profile_id, row[0], row[1])
                raise profile_conflict(recorded, info, [holder[0] for holder in holders])
        changed = changed or row is None or (row[0], row[1]) != (info.embedder_name, info.dimension)
        connection.execute(
            "INSERT OR REPLACE INTO profiles (profile_id, embedder_name, dimension) VALUES (?, ?, ?)",
            (info.profile_id, info.embedder_name, info.dimension),
        )
    return changed


def write_load(
    path: Path,
    nodes: Sequence[NodeRecord],
    edges: Sequence[EdgeRecord],
    vectors: Iterable[VectorRecord],
    profiles: Sequence[ProfileIndexInfo],
    *,
    replace: bool,
) -> None:
    """Check, then write everything in one transaction (``vectors`` iterated once, as they are
    written: a stream that raises rolls the load back); with ``replace``, the loaded tenants are
    emptied first. A profile's new embedder identity is refused while another tenant holds vectors; an
    edge to a node neither in ``nodes`` nor stored in its tenant refuses the load."""
    if not replace:
        vectors = merged = vectors if isinstance(vectors, Sequence) else list(vectors)  # read twice
    check_load(nodes, edges, vectors, profiles)
    written = record_tenants(nodes) | record_tenants(edges) | record_tenants(vectors)
    with _transaction(path, written) as connection:
        connection.execute(
            "INSERT OR REPLACE INTO meta (key, value) VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),)
        )
        if replace:
            tenants = json.dumps(sorted(record_tenants(nodes)))
            for table in ("nodes", "edges", "vectors"):
                connection.execute(
                    f"DELETE FROM {table} WHERE tenant_id IN (SELECT value FROM json_each(?))", (tenants,)
                )
        if _record_profiles(connection, profiles):
            connection.execute(BUMP_FILE_VERSION)  # a profile's identity is new: every reader reads again
        _upsert_nodes(connection, nodes)
        error = dangling_edge_error(edges, _missing_nodes(connection, outside_ends(nodes, edges)))
        if error is not None:
            raise error  # an edge to a node neither loaded nor stored: the transaction is rolled back
        _upsert_edges(connection, edges)
        _upsert_vectors(connection, vectors)
        if not replace:
            _vectors_follow_their_nodes(connection, ChangeSet(upsert_nodes=nodes, upsert_vectors=merged))


def _vector_blob(vector: VectorRecord) -> bytes:
    """The float32 bytes of a vector (a numpy row or any sequence of floats)."""
    if isinstance(vector.vector, np.ndarray):
        return np.asarray(vector.vector, dtype=np.float32).tobytes()
    return array("f", vector.vector).tobytes()


def _json_list(values: Sequence[str]) -> str:
    """:func:`canonical_json` of a list (most ACLs are empty: no encoder call)."""
    return canonical_json(list(values)) if values else "[]"


def _json_map(values: Mapping[str, Any]) -> str:
    """:func:`canonical_json` of a map (most edge properties are empty: no encoder call)."""
    return canonical_json(dict(values)) if values else "{}"


def _upsert_nodes(connection: sqlite3.Connection, nodes: Sequence[NodeRecord]) -> None:
    """Rows are made one at a time as SQLite takes them (no list of every row in memory)."""
    connection.executemany(
        f"INSERT OR REPLACE INTO nodes ({WRITTEN_NODE_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            (
                n.tenant_id,
                n.node_id,
                n.node_type,
                n.project_key,
                n.title,
                n.url,
                int(n.secured),
                _json_list(n.acl),
                _json_map(n.text),
                _json_map(n.properties),
                n.namespace,
                _json_list(n.tags),
                n.updated_at,
                stored_heads(n.node_type, n.text),
            )
            for n in nodes
        ),
    )


def _upsert_edges(connection: sqlite3.Connection, edges: Sequence[EdgeRecord]) -> None:
    connection.executemany(
        "INSERT OR REPLACE INTO edges (tenant_id, edge_type, from_node_id, to_node_id, properties)"
        " VALUES (?, ?, ?, ?, ?)",
        ((e.tenant_id, e.edge_type, e.from_node_id, e.to_node_id, _json_map(e.properties)) for e in edges),
    )


def _upsert_vectors(connection: sqlite3.Connection, vectors: Iterable[VectorRecord]) -> None:
    """Each vector with its facets, as given (:attr:`~brain_graph.stores.base.VectorRecord.facets`)."""
    connection.executemany(
        "INSERT OR REPLACE INTO vectors (tenant_id, profile_id, node_id, project_key, secured, acl, vector,"
        f" content_hash, lexical, {', '.join(VECTOR_FACET_COLUMNS)}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            (
                v.tenant_id,
                v.profile_id,
                v.node_id,
                v.project_key,
                int(v.secured),
                _json_list(v.acl),
                _vector_blob(v),
                v.content_hash,
                v.lexical,
                v.facets.node_type,
                v.facets.namespace,
                _json_list(v.facets.tags),
                v.facets.updated_at,
            )
            for v in vectors
        ),
    )


def changed_tenants(changes: ChangeSet) -> set[str]:
    """Every tenant a change writes (their readers' cached data is stale after it)."""
    tenants = {node.tenant_id for node in changes.upsert_nodes}
    tenants.update(edge.tenant_id for edge in (*changes.upsert_edges, *changes.delete_edges))
    tenants.update(key.tenant_id for key in changes.delete_nodes)
    tenants.update(vector.tenant_id for vector in changes.upsert_vectors)
    tenants.update(key.tenant_id for key in changes.delete_vectors)
    return tenants


def _check_identities(connection: sqlite3.Connection, profiles: Sequence[ProfileIndexInfo]) -> bool:
    """Refuse a profile identity other than the recorded one; record the identity of a new profile
    (whether there was one)."""
    recorded = False
    for info in profiles:
        row = connection.execute(
            "SELECT embedder_name, dimension FROM profiles WHERE profile_id = ?", (info.profile_id,)
        ).fetchone()
        if row is None:
            connection.execute(
                "INSERT INTO profiles (profile_id, embedder_name, dimension) VALUES (?, ?, ?)",
                (info.profile_id, info.embedder_name, info.dimension),
            )
            recorded = True
        elif (row[0], row[1]) != (info.embedder_name, info.dimension):
            raise identity_change_refused(ProfileIndexInfo(info.profile_id, row[0], row[1]), info)
    return recorded


def _missing_end(connection: sqlite3.Connection, edges: Sequence[EdgeRecord]) -> EdgeRecord | None:
    """The first edge one of whose ends is not a node of its tenant (checked after the node writes)."""
    ends = sorted({(e.tenant_id, node_id) for e in edges for node_id in (e.from_node_id, e.to_node_id)})
    missing = _missing_nodes(connection, ends)
    return next(
        (e for e in edges if (e.tenant_id, e.from_node_id) in missing or (e.tenant_id, e.to_node_id) in missing), None
    )


def _missing_nodes(connection: sqlite3.Connection, ends: Sequence[tuple[str, str]]) -> set[tuple[str, str]]:
    """The (tenant, node id) of ``ends`` that are not nodes, read in batches of 10,000."""
    missing: set[tuple[str, str]] = set()
    for start in range(0, len(ends), 10_000):
        rows = connection.execute(
            "SELECT t, i FROM (SELECT json_extract(value, '$[0]') AS t, json_extract(value, '$[1]') AS i"
            " FROM json_each(?)) WHERE NOT EXISTS (SELECT 1 FROM nodes n WHERE n.tenant_id = t AND n.node_id = i)",
            (json.dumps(ends[start : start + 10_000]),),
        ).fetchall()
        missing.update((row[0], row[1]) for row in rows)
    return missing


def write_changes(path: Path, changes: ChangeSet) -> None:
    """Apply a :class:`~brain_graph.stores.base.ChangeSet` in one transaction (see its docstring)."""
    check_changes(changes)
    if not changes:
        return
    with _transaction(path, changed_tenants(changes)) as connection:
        connection.execute(
            "INSERT OR REPLACE INTO meta (key, value) VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),)
        )
        if _check_identities(connection, changes.profiles):
            connection.execute(BUMP_FILE_VERSION)  # a new profile: every reader reads again
        connection.executemany(
            "DELETE FROM edges WHERE tenant_id = ? AND from_node_id = ? AND edge_type = ? AND to_node_id = ?",
            [(e.tenant_id, e.from_node_id, e.edge_type, e.to_node_id) for e in changes.delete_edges],
        )
        deleted = [(key.tenant_id, key.node_id) for key in changes.delete_nodes]
        profile_ids = [row[0] for row in connection.execute("SELECT profile_id FROM profiles")] if deleted else []
        for statement in (
            "DELETE FROM nodes WHERE tenant_id = ? AND node_id = ?",
            "DELETE FROM edges WHERE tenant_id = ? AND from_node_id = ?",
            "DELETE FROM edges INDEXED BY edges_by_target WHERE tenant_id = ? AND to_node_id = ?",
        ):
            connection.executemany(statement, deleted)
        connection.executemany(
            "DELETE FROM vectors WHERE tenant_id = ? AND profile_id = ? AND node_id = ?",
            [(tenant, profile, node) for tenant, node in deleted for profile in profile_ids],
        )
        _upsert_nodes(connection, changes.upsert_nodes)
        missing = _missing_end(connection, changes.upsert_edges)
        if missing is not None:
            raise DatasetError(
                f"edge {missing.edge_type} {missing.from_node_id[:80]!r} -> {missing.to_node_id[:80]!r} of tenant "
                f"{missing.tenant_id[:80]!r}: an end is not a node (write the node in the same change or before)"
            )
        _upsert_edges(connection, changes.upsert_edges)
        connection.executemany(
            "DELETE FROM vectors WHERE tenant_id = ? AND profile_id = ? AND node_id = ?",
            [(key.tenant_id, key.profile_id, key.node_id) for key in changes.delete_vectors],
        )
        _upsert_vectors(connection, changes.upsert_vectors)
        _vectors_follow_their_nodes(connection, changes)


def _vectors_follow_their_nodes(connection: sqlite3.Connection, changes: ChangeSet) -> None:
    """The graph is the only source of a vector's filter metadata: every vector of an upserted node (any
    profile) and every upserted vector takes its node's project, secured flag and ACL; an upserted
    vector whose node does not exist is dropped (a writer raced with a delete). Run last, in the same
    transaction, so no interleaving of writers leaves a vector more visible than its node."""
    keys = {(n.tenant_id, n.node_id) for n in changes.upsert_nodes}
    keys.update((v.tenant_id, v.node_id) for v in changes.upsert_vectors)
    if not keys:
        return
    rows = [[tenant, node] for tenant, node in sorted(keys)]
    for start in range(0, len(rows), 10_000):
        batch = json.dumps(rows[start : start + 10_000])
        connection.execute(
            "UPDATE vectors SET project_key = n.project_key, secured = n.secured, acl = n.acl FROM"
            " (SELECT json_extract(value, '$[0]') AS t, json_extract(value, '$[1]') AS i FROM json_each(?)) k"
            " JOIN nodes n ON n.tenant_id = k.t AND n.node_id = k.i"
            " WHERE vectors.tenant_id = k.t AND vectors.node_id = k.i AND (vectors.project_key IS NOT n.project_key"
            " OR vectors.secured != n.secured OR vectors.acl != n.acl)",
            (batch,),
        )
        connection.execute(
            "DELETE FROM vectors WHERE rowid IN (SELECT v.rowid FROM"
            " (SELECT json_extract(value, '$[0]') AS t, json_extract(value, '$[1]') AS i FROM json_each(?)) k"
            " JOIN vectors v ON v.tenant_id = k.t AND v.node_id = k.i"
            " WHERE NOT EXISTS (SELECT 1 FROM nodes n WHERE n.tenant_id = k.t AND n.node_id = k.i))",
            (batch,),
        )
