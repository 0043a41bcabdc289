"""Writes of the embedded store: a load in one SQLite transaction, and deletions."""

from __future__ import annotations

import json
import sqlite3
from array import array
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from brain_graph.stores.base import EdgeRecord, NodeRecord, ProfileIndexInfo, VectorRecord
from brain_graph.stores.codec import canonical_json
from brain_graph.stores.embedded.schema import NODE_COLUMNS, SCHEMA, SCHEMA_VERSION
from brain_graph.stores.identity import profile_conflict
from brain_graph.write_checks import check_load


@contextmanager
def _transaction(path: Path) -> Iterator[sqlite3.Connection]:
    """A write transaction on the store at ``path`` (created with its schema if needed), committed
    when the block ends, rolled back when it raises."""
    path.parent.mkdir(parents=True, exist_ok=True)
    connection = sqlite3.connect(path, timeout=30, isolation_level=None)
    try:
        connection.execute("PRAGMA journal_mode=WAL")
        connection.executescript(SCHEMA)  # idempotent, outside the data transaction
        connection.execute("BEGIN IMMEDIATE")
        yield connection
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
