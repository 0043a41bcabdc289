"""Writes of the embedded store: a load in one SQLite transaction, and deletions; and the checks of
the store's path shared with the reads (a path that cannot be a store is a one-line
:class:`~brain_graph.errors.ConfigurationError` naming it, exit code 2 in the CLI)."""

from __future__ import annotations

import json
import sqlite3
from array import array
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from brain_graph.errors import ConfigurationError
from brain_graph.stores.base import EdgeRecord, NodeRecord, ProfileIndexInfo, VectorRecord
from brain_graph.stores.codec import canonical_json
from brain_graph.stores.embedded.schema import BUMP_DATA_VERSION, NODE_COLUMNS, SCHEMA, SCHEMA_VERSION
from brain_graph.stores.identity import profile_conflict
from brain_graph.write_checks import check_load

SQLITE_CANTOPEN = 14
SQLITE_NOTADB = 26


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


def _connect_for_writing(path: Path) -> sqlite3.Connection:
    """A connection to the store at ``path``, created with its schema if needed."""
    check_store_path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise ConfigurationError(f"embedded store {path}: its folder cannot be created ({error.strerror})") from None
    connection: sqlite3.Connection | None = None
    try:
        connection = sqlite3.connect(path, timeout=30, isolation_level=None)
        connection.execute("PRAGMA journal_mode=WAL")
        connection.executescript(SCHEMA)  # idempotent, outside the data transaction
    except BaseException as error:
        if connection is not None:
            connection.close()
        mapped = open_error(path, error) if isinstance(error, sqlite3.Error) else None
        if mapped is None:
            raise
        raise mapped from None
    return connection


@contextmanager
def _transaction(path: Path) -> Iterator[sqlite3.Connection]:
    """A write transaction on the store at ``path`` (created with its schema if needed), committed
    when the block ends, rolled back when it raises."""
    connection = _connect_for_writing(path)
    try:
        connection.execute("BEGIN IMMEDIATE")
        yield connection
        connection.execute(BUMP_DATA_VERSION)  # readers' cached vectors of the file are now stale
        connection.execute("COMMIT")
    except BaseException:
        if connection.in_transaction:
            connection.execute("ROLLBACK")
        raise
    finally:
        connection.close()


def delete_where(path: Path, tables: Sequence[str], column: str, values: Sequence[str]) -> None:
    """Delete the rows of ``tables`` whose ``column`` is one of ``values``, in one transaction.
    ``tables`` and ``column`` are names of this module's schema, never input."""
    with _transaction(path) as connection:
        for table in tables:
            connection.execute(
                f"DELETE FROM {table} WHERE {column} IN (SELECT value FROM json_each(?))", (json.dumps(list(values)),)
            )


def _record_profiles(connection: sqlite3.Connection, profiles: Sequence[ProfileIndexInfo]) -> None:
    """Record each profile's embedder identity, refusing a new one while a tenant holds vectors of the
    recorded one (run after the replaced tenants' rows were deleted, in the same transaction)."""
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
        connection.execute(
            "INSERT OR REPLACE INTO profiles (profile_id, embedder_name, dimension) VALUES (?, ?, ?)",
            (info.profile_id, info.embedder_name, info.dimension),
        )


def write_load(
    path: Path,
    nodes: Sequence[NodeRecord],
    edges: Sequence[EdgeRecord],
    vectors: Sequence[VectorRecord],
    profiles: Sequence[ProfileIndexInfo],
    *,
    replace: bool,
) -> None:
    """Check, then write everything in one transaction; with ``replace``, the loaded tenants are
    emptied first. A profile's new embedder identity is refused while another tenant holds vectors."""
    check_load(nodes, edges, vectors, profiles)
    with _transaction(path) as connection:
        connection.execute(
            "INSERT OR REPLACE INTO meta (key, value) VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),)
        )
        if replace:
            tenants = json.dumps(sorted({node.tenant_id for node in nodes}))
            for table in ("nodes", "edges", "vectors"):
                connection.execute(
                    f"DELETE FROM {table} WHERE tenant_id IN (SELECT value FROM json_each(?))", (tenants,)
                )
        _record_profiles(connection, profiles)
        connection.executemany(
            f"INSERT OR REPLACE INTO nodes ({NODE_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (
                    n.tenant_id,
                    n.node_id,
                    n.node_type,
                    n.project_key,
                    n.title,
                    n.url,
                    int(n.secured),
                    canonical_json(list(n.acl)),
                    canonical_json(dict(n.text)),
                    canonical_json(dict(n.properties)),
                )
                for n in nodes
            ],
        )
        connection.executemany(
            "INSERT OR REPLACE INTO edges (tenant_id, edge_type, from_node_id, to_node_id, properties)"
            " VALUES (?, ?, ?, ?, ?)",
            [
                (e.tenant_id, e.edge_type, e.from_node_id, e.to_node_id, canonical_json(dict(e.properties)))
                for e in edges
            ],
        )
        connection.executemany(
            "INSERT OR REPLACE INTO vectors (tenant_id, profile_id, node_id, project_key, secured, acl, vector)"
            " VALUES (?, ?, ?, ?, ?, ?, ?)",
            [
                (
                    v.tenant_id,
                    v.profile_id,
                    v.node_id,
                    v.project_key,
                    int(v.secured),
                    canonical_json(list(v.acl)),
                    array("f", v.vector).tobytes(),
                )
                for v in vectors
            ],
        )
