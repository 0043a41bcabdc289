"""The embedded default backend: one SQLite file holding nodes, edges and vectors.

No server is needed. Every load is checked first (:func:`~brain_graph.write_checks.check_load`), then
written in one SQLite transaction, so a refused, failing or interrupted load leaves the previous
contents intact. Profiles follow the embedder-identity rule of
:func:`~brain_graph.stores.base.profile_conflict`: one identity per profile for all tenants.
Vector search is an exact scan of the tenant's vectors (fine up to tens of thousands of nodes; use the
Neo4j + Weaviate backend beyond that).
"""

from __future__ import annotations

import json
import sqlite3
from array import array
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from brain_graph.edges import IN_CLUSTER
from brain_graph.errors import BackendUnavailableError
from brain_graph.profiles import CLUSTER
from brain_graph.security import AccessScope
from brain_graph.stores.base import (
    Adjacency,
    ClusterMembership,
    EdgeRecord,
    NodeRecord,
    ProfileIndexInfo,
    VectorHit,
    VectorQuery,
    VectorRecord,
    check_query_matches,
    cosine,
    edge_sort_key,
    profile_conflict,
    similarity_from_cosine,
)
from brain_graph.write_checks import check_load

SCHEMA_VERSION = 1
_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS nodes (
    tenant_id TEXT NOT NULL, node_id TEXT NOT NULL, node_type TEXT NOT NULL, project_key TEXT,
    title TEXT, url TEXT, secured INTEGER NOT NULL, acl TEXT NOT NULL, text TEXT NOT NULL,
    properties TEXT NOT NULL, PRIMARY KEY (tenant_id, node_id)
);
CREATE TABLE IF NOT EXISTS edges (
    tenant_id TEXT NOT NULL, edge_type TEXT NOT NULL, from_node_id TEXT NOT NULL, to_node_id TEXT NOT NULL,
    properties TEXT NOT NULL, PRIMARY KEY (tenant_id, from_node_id, edge_type, to_node_id)
);
CREATE INDEX IF NOT EXISTS edges_by_target ON edges (tenant_id, to_node_id, edge_type);
CREATE TABLE IF NOT EXISTS vectors (
    tenant_id TEXT NOT NULL, profile_id TEXT NOT NULL, node_id TEXT NOT NULL, project_key TEXT,
    secured INTEGER NOT NULL, acl TEXT NOT NULL, vector BLOB NOT NULL,
    PRIMARY KEY (tenant_id, profile_id, node_id)
);
CREATE TABLE IF NOT EXISTS profiles (
    profile_id TEXT PRIMARY KEY, embedder_name TEXT NOT NULL, dimension INTEGER NOT NULL
);
"""
_NODE_COLUMNS = "tenant_id, node_id, node_type, project_key, title, url, secured, acl, text, properties"
_CLUSTER_COLUMNS = ", ".join(f"c.{column.strip()}" for column in _NODE_COLUMNS.split(","))


def _dumps(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def _node_from_row(row: sqlite3.Row) -> NodeRecord:
    return NodeRecord(
        tenant_id=row["tenant_id"],
        node_id=row["node_id"],
        node_type=row["node_type"],
        project_key=row["project_key"],
        title=row["title"],
        url=row["url"],
        secured=bool(row["secured"]),
        acl=tuple(json.loads(row["acl"])),
        text=json.loads(row["text"]),
        properties=json.loads(row["properties"]),
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


def _visible(scope: AccessScope, row: sqlite3.Row) -> bool:
    return scope.may_see(row["tenant_id"], bool(row["secured"]), json.loads(row["acl"]))


class EmbeddedStore:
    """Vector index, graph store and passage source over one SQLite file."""

    name = "embedded"

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path).expanduser()

    @property
    def vector_index(self) -> EmbeddedStore:
        return self

    @property
    def graph_store(self) -> EmbeddedStore:
        return self

    @property
    def passage_source(self) -> EmbeddedStore:
        return self

    @contextmanager
    def _read(self) -> Iterator[sqlite3.Connection | None]:
        """A read-only connection, or None when no store has been written yet (an empty store)."""
        if not self.path.exists():
            yield None
            return
        try:
            connection = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True, timeout=10)
        except sqlite3.Error as error:
            raise BackendUnavailableError("embedded store", f"{self.path}: {error}") from error
        connection.row_factory = sqlite3.Row
        try:
            yield connection
        except sqlite3.OperationalError as error:
            if "no such table" in str(error):
                raise BackendUnavailableError("embedded store", f"{self.path} is not a brain-graph store") from error
            raise BackendUnavailableError("embedded store", f"{self.path}: {error}") from error
        finally:
            connection.close()

    # -- VectorIndex ---------------------------------------------------------------------------

    def query(
        self, queries: Sequence[VectorQuery], *, scope: AccessScope, project_key: str | None, top_k: int
    ) -> list[VectorHit]:
        with self._read() as db:
            if db is None or not queries:
                return []
            indexed = {
                row["profile_id"]: ProfileIndexInfo(row["profile_id"], row["embedder_name"], row["dimension"])
                for row in db.execute("SELECT profile_id, embedder_name, dimension FROM profiles")
            }
            for query in queries:
                check_query_matches(query, indexed.get(query.profile_id))
            vectors_by_profile = {query.profile_id: query.vector for query in queries}
            rows = db.execute(
                "SELECT v.tenant_id, v.profile_id, v.node_id, v.secured, v.acl, v.vector FROM vectors v"
                " WHERE v.tenant_id = ? AND v.profile_id IN (SELECT value FROM json_each(?))"
                " AND (? IS NULL OR v.project_key = ?)",
                (scope.tenant_id, json.dumps(sorted(vectors_by_profile)), project_key, project_key),
            ).fetchall()
        per_profile: dict[str, list[VectorHit]] = {}
        for row in rows:
            if not _visible(scope, row):
                continue
            stored = array("f")
            stored.frombytes(row["vector"])
            score = similarity_from_cosine(cosine(vectors_by_profile[row["profile_id"]], stored))
            per_profile.setdefault(row["profile_id"], []).append(VectorHit(row["node_id"], row["profile_id"], score))
        hits: list[VectorHit] = []
        for profile_hits in per_profile.values():
            profile_hits.sort(key=lambda hit: (-hit.score, hit.node_id))
            hits.extend(profile_hits[:top_k])
        return hits

    # -- GraphStore / PassageSource ------------------------------------------------------------

    def get_nodes(self, node_ids: Sequence[str], *, scope: AccessScope) -> list[NodeRecord]:
        with self._read() as db:
            if db is None or not node_ids:
                return []
            rows = db.execute(
                f"SELECT {_NODE_COLUMNS} FROM nodes WHERE tenant_id = ?"
                " AND node_id IN (SELECT value FROM json_each(?))",
                (scope.tenant_id, json.dumps(list(node_ids))),
            ).fetchall()
        return [_node_from_row(row) for row in rows if _visible(scope, row)]

    def get_texts(self, node_ids: Sequence[str], *, scope: AccessScope) -> dict[str, NodeRecord]:
        return {node.node_id: node for node in self.get_nodes(node_ids, scope=scope)}

    def neighbors(
        self,
        frontier: Sequence[str],
        *,
        scope: AccessScope,
        edge_types: Sequence[str],
        exclude: Sequence[str],
        limit: int,
    ) -> list[Adjacency]:
        with self._read() as db:
            if db is None or not frontier or not edge_types or limit <= 0:
                return []
            rows = db.execute(
                "WITH f AS (SELECT CAST(key AS INTEGER) AS idx, value AS node_id FROM json_each(?)),"
                " adj AS ("
                "  SELECT f.idx, e.edge_type, e.to_node_id AS neighbor_id FROM f JOIN edges e"
                "   ON e.tenant_id = ? AND e.from_node_id = f.node_id"
                "  UNION ALL"
                "  SELECT f.idx, e.edge_type, e.from_node_id AS neighbor_id FROM f JOIN edges e"
                "   ON e.tenant_id = ? AND e.to_node_id = f.node_id)"
                " SELECT adj.idx, adj.edge_type, adj.neighbor_id, n.tenant_id, n.secured, n.acl"
                " FROM adj JOIN nodes n ON n.tenant_id = ? AND n.node_id = adj.neighbor_id"
                " WHERE adj.edge_type IN (SELECT value FROM json_each(?))",
                (
                    json.dumps(list(frontier)),
                    scope.tenant_id,
                    scope.tenant_id,
                    scope.tenant_id,
                    json.dumps(list(edge_types)),
                ),
            ).fetchall()
        excluded = set(exclude)
        best: dict[str, Adjacency] = {}
        for row in rows:
            if row["neighbor_id"] in excluded or not _visible(scope, row):
                continue
            candidate = Adjacency(row["idx"], row["edge_type"], row["neighbor_id"])
            current = best.get(candidate.neighbor_id)
            if current is None or candidate < current:
                best[candidate.neighbor_id] = candidate
        return sorted(best.values())[:limit]

    def edges_among(
        self, node_ids: Sequence[str], *, scope: AccessScope, edge_types: Sequence[str]
    ) -> list[EdgeRecord]:
        with self._read() as db:
            if db is None or not node_ids or not edge_types:
                return []
            ids = json.dumps(list(node_ids))
            rows = db.execute(
                "SELECT tenant_id, edge_type, from_node_id, to_node_id, properties FROM edges"
                " WHERE tenant_id = ? AND edge_type IN (SELECT value FROM json_each(?))"
                " AND from_node_id IN (SELECT value FROM json_each(?))"
                " AND to_node_id IN (SELECT value FROM json_each(?))",
                (scope.tenant_id, json.dumps(list(edge_types)), ids, ids),
            ).fetchall()
        edges = [
            EdgeRecord(
                row["tenant_id"],
                row["edge_type"],
                row["from_node_id"],
                row["to_node_id"],
                json.loads(row["properties"]),
            )
            for row in rows
        ]
        return sorted(edges, key=edge_sort_key)

    def cluster_memberships(self, node_ids: Sequence[str], *, scope: AccessScope) -> list[ClusterMembership]:
        with self._read() as db:
            if db is None or not node_ids:
                return []
            cluster_rows = db.execute(
                f"SELECT e.from_node_id AS member_id, {_CLUSTER_COLUMNS}"
                " FROM edges e JOIN nodes c ON c.tenant_id = e.tenant_id AND c.node_id = e.to_node_id"
                " WHERE e.tenant_id = ? AND e.edge_type = ? AND c.node_type = ?"
                " AND e.from_node_id IN (SELECT value FROM json_each(?))",
                (scope.tenant_id, IN_CLUSTER, CLUSTER, json.dumps(list(node_ids))),
            ).fetchall()
            clusters = {row["node_id"]: _node_from_row(row) for row in cluster_rows if _visible(scope, row)}
            member_rows = db.execute(
                "SELECT e.to_node_id AS cluster_id, m.tenant_id, m.secured, m.acl FROM edges e"
                " JOIN nodes m ON m.tenant_id = e.tenant_id AND m.node_id = e.from_node_id"
                " WHERE e.tenant_id = ? AND e.edge_type = ? AND e.to_node_id IN (SELECT value FROM json_each(?))",
                (scope.tenant_id, IN_CLUSTER, json.dumps(sorted(clusters))),
            ).fetchall()
        sizes: dict[str, int] = {}
        for row in member_rows:
            if _visible(scope, row):
                sizes[row["cluster_id"]] = sizes.get(row["cluster_id"], 0) + 1
        memberships = [
            ClusterMembership(row["member_id"], clusters[row["node_id"]], sizes.get(row["node_id"], 0))
            for row in cluster_rows
            if row["node_id"] in clusters
        ]
        return sorted(memberships, key=lambda m: (m.cluster.node_id, m.member_id))

    # -- loading -------------------------------------------------------------------------------

    def load(
        self,
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
        self.path.parent.mkdir(parents=True, exist_ok=True)
        connection = sqlite3.connect(self.path, timeout=30, isolation_level=None)
        try:
            connection.execute("PRAGMA journal_mode=WAL")
            connection.executescript(_SCHEMA)  # idempotent, outside the data transaction
            connection.execute("BEGIN IMMEDIATE")
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
                f"INSERT OR REPLACE INTO nodes ({_NODE_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (
                        n.tenant_id,
                        n.node_id,
                        n.node_type,
                        n.project_key,
                        n.title,
                        n.url,
                        int(n.secured),
                        _dumps(list(n.acl)),
                        _dumps(dict(n.text)),
                        _dumps(dict(n.properties)),
                    )
                    for n in nodes
                ],
            )
            connection.executemany(
                "INSERT OR REPLACE INTO edges (tenant_id, edge_type, from_node_id, to_node_id, properties)"
                " VALUES (?, ?, ?, ?, ?)",
                [(e.tenant_id, e.edge_type, e.from_node_id, e.to_node_id, _dumps(dict(e.properties))) for e in edges],
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
                        _dumps(list(v.acl)),
                        array("f", v.vector).tobytes(),
                    )
                    for v in vectors
                ],
            )
            connection.execute("COMMIT")
        except BaseException:
            if connection.in_transaction:
                connection.execute("ROLLBACK")
            raise
        finally:
            connection.close()

    def close(self) -> None:
        """Nothing to release: connections are opened per call."""
