"""Graph store and passage source on Neo4j (official ``neo4j`` driver).

Nodes are ``:BrainNode`` with ``tenantId``, ``generation``, ``nodeId`` (unique together), ``nodeType``
(indexed), ``projectKey``, ``title``, ``url``, ``secured``, ``acl`` (list) and ``text`` /
``properties`` as JSON strings (Neo4j properties cannot be maps). Edges are typed relationships with a
JSON ``properties``, always between nodes of one generation. ``(:BrainTenant {tenantId, generation,
nextGeneration})`` is the tenant's pointer: reads see only the generation it names (see
:mod:`brain_graph.stores.cypher`), loads write a new generation and flip the pointer
(:meth:`Neo4jGraphStore.take_generations`, :meth:`~Neo4jGraphStore.write`, :meth:`~Neo4jGraphStore.flip`,
:meth:`~Neo4jGraphStore.delete_older`). All Cypher is in :mod:`brain_graph.stores.cypher`.

Every read is ONE auto-commit statement in a READ session (routed to a reader in a cluster), whatever
the number of ids, with the server-side transaction timeout set to ``timeout_s``. Results equal the
embedded store's: the order is the documented total order (re-applied in Python after the database
ordered and limited). The driver connects lazily; connection failures become
:class:`~brain_graph.errors.BackendUnavailableError` (``backend="neo4j"``). A failure on a pooled
connection (e.g. the server was restarted) is retried once at once on a new connection, so the next
search after a restart succeeds; a down server is reported without waiting for retries.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from itertools import groupby
from typing import Any, LiteralString, TypeVar

import neo4j
from neo4j.exceptions import DriverError, Neo4jError, ServiceUnavailable, SessionExpired

from brain_graph.errors import BackendUnavailableError
from brain_graph.profiles import CLUSTER
from brain_graph.security import AccessScope
from brain_graph.stores import cypher
from brain_graph.stores.base import Adjacency, ClusterMembership, EdgeRecord, NodeRecord, edge_sort_key

BACKEND = "neo4j"
T = TypeVar("T")
WRITE_BATCH = 2000
DELETE_BATCH = 5000


def _dumps(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def node_from_map(data: Mapping[str, Any]) -> NodeRecord:
    """A node record from the map a read returns."""
    return NodeRecord(
        tenant_id=data["tenantId"],
        node_id=data["nodeId"],
        node_type=data["nodeType"],
        project_key=data.get("projectKey"),
        title=data.get("title"),
        url=data.get("url"),
        secured=bool(data.get("secured")),
        acl=tuple(data.get("acl") or ()),
        text=json.loads(data.get("text") or "{}"),
        properties=json.loads(data.get("properties") or "{}"),
    )


def sort_key(node_id: str) -> str:
    """A string whose Cypher order (UTF-16 code units) is the code-point order of ``node_id``."""
    return node_id.encode("utf-8").hex()


def _node_row(node: NodeRecord, generation: int) -> dict[str, Any]:
    return {
        "tenantId": node.tenant_id,
        "generation": generation,
        "nodeId": node.node_id,
        "sortKey": sort_key(node.node_id),
        "nodeType": node.node_type,
        "projectKey": node.project_key,
        "title": node.title,
        "url": node.url,
        "secured": node.secured,
        "acl": list(node.acl),
        "text": _dumps(dict(node.text)),
        "properties": _dumps(dict(node.properties)),
    }


def _edge_row(edge: EdgeRecord, generation: int) -> dict[str, Any]:
    return {
        "tenantId": edge.tenant_id,
        "generation": generation,
        "fromNodeId": edge.from_node_id,
        "toNodeId": edge.to_node_id,
        "properties": _dumps(dict(edge.properties)),
    }


@dataclass(frozen=True)
class Flip:
    """A tenant's pointer after a flip: the ``current`` generation, and whether nodes from before
    generations may remain (removed by the next clean-up)."""

    current: int
    legacy: bool


def _scope_params(scope: AccessScope) -> dict[str, Any]:
    return {
        "tenantId": scope.tenant_id,
        "allSecured": scope.all_secured,
        "identities": list(scope.sorted_identities),
    }


class Neo4jGraphStore:
    """:class:`~brain_graph.stores.base.GraphStore` and :class:`~brain_graph.stores.base.PassageSource`."""

    def __init__(self, *, uri: str, user: str, password: str, database: str = "neo4j", timeout_s: float = 5.0) -> None:
        self.uri = uri
        self.database = database
        self.timeout_s = timeout_s
        self._auth = (user, password)
        self._driver: neo4j.Driver | None = None
        self._lock = threading.Lock()
        self._schema_ready = False
        self.round_trips = 0

    # -- plumbing --------------------------------------------------------------------------------

    def _get_driver(self) -> neo4j.Driver:
        with self._lock:
            if self._driver is None:
                self._driver = neo4j.GraphDatabase.driver(
                    self.uri,
                    auth=self._auth,
                    connection_timeout=self.timeout_s,
                    connection_acquisition_timeout=self.timeout_s,
                    max_transaction_retry_time=0.0,
                    notifications_min_severity="OFF",
                    user_agent="brain-graph",
                )
            return self._driver

    def _tick(self) -> None:
        with self._lock:
            self.round_trips += 1

    def _unavailable(self, error: Exception) -> BackendUnavailableError:
        text = str(getattr(error, "message", None) or error) or type(error).__name__
        detail = " ".join(text.split())
        return BackendUnavailableError(BACKEND, f"{self.uri}: {type(error).__name__}: {detail[:300]}")

    def _with_retry(self, work: Callable[[neo4j.Driver], T]) -> T:
        """Run ``work``; map driver errors. A connection failure that happens at once (a pooled
        connection the server closed, e.g. after a restart) is retried once on a new connection; a slow
        one (an unresponsive server) is not, so the whole call stays within ``timeout_s``."""
        started = time.monotonic()
        for attempt in range(2):
            try:
                return work(self._get_driver())
            except (ServiceUnavailable, SessionExpired) as error:
                if attempt == 0 and time.monotonic() - started < min(1.0, self.timeout_s / 4):
                    continue
                raise self._unavailable(error) from None
            except (DriverError, Neo4jError) as error:
                raise self._unavailable(error) from None
        raise AssertionError("unreachable")  # pragma: no cover

    def _read(self, query: LiteralString, params: Mapping[str, Any]) -> list[neo4j.Record]:
        """One auto-commit statement in a READ session."""

        def work(driver: neo4j.Driver) -> list[neo4j.Record]:
            self._tick()
            with driver.session(database=self.database, default_access_mode=neo4j.READ_ACCESS) as session:
                return list(session.run(neo4j.Query(query, timeout=self.timeout_s), dict(params)))

        return self._with_retry(work)

    # -- GraphStore / PassageSource ----------------------------------------------------------------

    def get_nodes(self, node_ids: Sequence[str], *, scope: AccessScope) -> list[NodeRecord]:
        if not node_ids:
            return []
        rows = self._read(cypher.GET_NODES, {**_scope_params(scope), "nodeIds": list(dict.fromkeys(node_ids))})
        return [node_from_map(row["node"]) for row in rows]

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
        if not frontier or not edge_types or limit <= 0:
            return []
        rows = self._read(
            cypher.NEIGHBORS,
            {
                **_scope_params(scope),
                "frontier": list(frontier),
                "edgeTypes": sorted(set(edge_types)),
                "exclude": sorted(set(exclude)),
                "limit": limit,
            },
        )
        return sorted(Adjacency(int(row["frontierIndex"]), row["edgeType"], row["neighborId"]) for row in rows)

    def edges_among(
        self, node_ids: Sequence[str], *, scope: AccessScope, edge_types: Sequence[str]
    ) -> list[EdgeRecord]:
        if not node_ids or not edge_types:
            return []
        rows = self._read(
            cypher.EDGES_AMONG,
            {"tenantId": scope.tenant_id, "nodeIds": sorted(set(node_ids)), "edgeTypes": sorted(set(edge_types))},
        )
        edges = [
            EdgeRecord(
                scope.tenant_id,
                row["edgeType"],
                row["fromNodeId"],
                row["toNodeId"],
                json.loads(row["properties"] or "{}"),
            )
            for row in rows
        ]
        return sorted(edges, key=edge_sort_key)

    def cluster_memberships(self, node_ids: Sequence[str], *, scope: AccessScope) -> list[ClusterMembership]:
        if not node_ids:
            return []
        rows = self._read(
            cypher.CLUSTER_MEMBERSHIPS,
            {**_scope_params(scope), "nodeIds": sorted(set(node_ids)), "clusterType": CLUSTER},
        )
        memberships = [ClusterMembership(row["memberId"], node_from_map(row["cluster"]), row["size"]) for row in rows]
        return sorted(memberships, key=lambda m: (m.cluster.node_id, m.member_id))

    # -- generations -----------------------------------------------------------------------------

    def current_generation(self, tenant_id: str) -> int | None:
        """The generation searches of a tenant see (None: the tenant has no data). One statement."""
        rows = self._read(cypher.CURRENT_GENERATION, {"tenantId": tenant_id})
        generation = rows[0]["generation"] if rows else None
        return None if generation is None else int(generation)

    def _run_write(self, work: Callable[[neo4j.Session], T]) -> T:
        """``work`` in a write session, after the schema is in place."""

        def run(driver: neo4j.Driver) -> T:
            with driver.session(database=self.database) as session:
                self._ensure_schema(session)
                return work(session)

        return self._with_retry(run)

    def _generation_map(self, query: LiteralString, tenants: Sequence[str]) -> dict[str, int]:
        if not tenants:
            return {}
        rows = self._run_write(lambda session: self._commit(session, query, {"tenants": sorted(set(tenants))}))
        return {row["tenantId"]: int(row["generation"]) for row in rows}

    def current_generations(self, tenants: Sequence[str]) -> dict[str, int]:
        """The current generation of each tenant that has one (read on the leader, for a load)."""
        return self._generation_map(cypher.CURRENT_GENERATIONS, tenants)

    def take_generations(self, tenants: Sequence[str]) -> dict[str, int]:
        """A fresh generation number per tenant (creating its pointer), not visible to searches yet."""
        return self._generation_map(cypher.TAKE_GENERATIONS, tenants)

    def flip(self, generations: Mapping[str, int]) -> dict[str, Flip]:
        """Make each tenant's generation the current one, if it is newer than the current one, in ONE
        transaction for all tenants; returns what is current afterwards."""
        if not generations:
            return {}
        rows = [{"tenantId": tenant, "generation": g} for tenant, g in sorted(generations.items())]
        records = self._run_write(lambda session: self._commit(session, cypher.FLIP, {"rows": rows}))
        return {r["tenantId"]: Flip(int(r["current"]), bool(r["legacy"])) for r in records}

    def delete_older(self, tenant_id: str, flip: Flip) -> None:
        """Delete a tenant's generations older than ``flip.current`` (and, once, its nodes from before
        generations), in batches of :data:`DELETE_BATCH` nodes."""

        def work(session: neo4j.Session) -> None:
            params = {"tenantId": tenant_id, "current": flip.current, "batch": DELETE_BATCH}
            self._delete_batches(session, cypher.DELETE_OLDER, params)
            if flip.legacy:
                self._delete_batches(session, cypher.DELETE_LEGACY, params)
                self._commit(session, cypher.LEGACY_REMOVED, {"tenantId": tenant_id})

        self._run_write(work)

    def _delete_batches(self, session: neo4j.Session, query: LiteralString, params: Mapping[str, Any]) -> None:
        """Run a ``... LIMIT $batch DETACH DELETE`` statement until it deletes less than a batch."""
        deleted = DELETE_BATCH
        while deleted >= DELETE_BATCH:
            deleted = int(self._commit(session, query, params)[0]["deleted"])

    # -- writes ----------------------------------------------------------------------------------

    def _ensure_schema(self, session: neo4j.Session) -> None:
        if self._schema_ready:
            return
        for statement in cypher.SCHEMA:
            self._tick()
            session.run(statement).consume()
        self._schema_ready = True

    @staticmethod
    def _write_statements(
        nodes: Sequence[NodeRecord], edges: Sequence[EdgeRecord], generations: Mapping[str, int]
    ) -> list[tuple[str, dict[str, Any]]]:
        """The node MERGE batches, then the edge MERGE batches grouped by type."""
        statements: list[tuple[str, dict[str, Any]]] = []
        rows = [_node_row(node, generations[node.tenant_id]) for node in nodes]
        for start in range(0, len(rows), WRITE_BATCH):
            statements.append((cypher.MERGE_NODES, {"rows": rows[start : start + WRITE_BATCH]}))
        ordered = sorted(edges, key=lambda e: (e.edge_type, e.tenant_id, e.from_node_id, e.to_node_id))
        for edge_type, group in groupby(ordered, key=lambda e: e.edge_type):
            query = cypher.merge_edges(edge_type)
            edge_rows = [_edge_row(edge, generations[edge.tenant_id]) for edge in group]
            for start in range(0, len(edge_rows), WRITE_BATCH):
                statements.append((query, {"rows": edge_rows[start : start + WRITE_BATCH]}))
        return statements

    def write(self, nodes: Sequence[NodeRecord], edges: Sequence[EdgeRecord], generations: Mapping[str, int]) -> None:
        """MERGE the nodes, then the edges grouped by type (type validated, then interpolated), into the
        generation ``generations`` names for their tenant; each batch of :data:`WRITE_BATCH` rows in its
        own transaction, so memory stays bounded whatever the size. Idempotent. Into a new generation
        this is invisible to searches until :meth:`flip`."""
        statements = self._write_statements(nodes, edges, generations)

        def work(session: neo4j.Session) -> None:
            for query, params in statements:
                self._commit(session, query, params)

        self._run_write(work)

    def _commit(self, session: neo4j.Session, query: str, params: Mapping[str, Any]) -> list[neo4j.Record]:
        """One statement in its own explicit write transaction."""
        self._tick()
        with session.begin_transaction() as tx:
            records = list(tx.run(query, dict(params)))
            tx.commit()
        return records

    def drop_tenants(self, tenants: Sequence[str]) -> None:
        """Delete every node and edge of these tenants (all generations) and their pointers."""
        params = {"tenants": sorted(set(tenants)), "batch": DELETE_BATCH}

        def work(session: neo4j.Session) -> None:
            self._delete_batches(session, cypher.DELETE_TENANTS, params)
            self._commit(session, cypher.DELETE_POINTERS, params)

        if tenants:
            self._run_write(work)

    def count(self, tenants: Sequence[str]) -> tuple[int, int]:
        """(nodes, edges) of the current generations of these tenants."""
        params = {"tenants": sorted(set(tenants))}
        nodes = self._read(cypher.COUNT_NODES, params)[0]["count"]
        edges = self._read(cypher.COUNT_EDGES, params)[0]["count"]
        return int(nodes), int(edges)

    def stored_generations(self, tenant_id: str) -> list[int]:
        """Every generation of a tenant that has nodes stored (0: nodes from before generations)."""
        rows = self._read(cypher.STORED_GENERATIONS, {"tenantId": tenant_id})
        return sorted(int(row["generation"]) for row in rows)

    def close(self) -> None:
        """Close the driver (a later call opens a new one)."""
        with self._lock:
            driver, self._driver = self._driver, None
        if driver is not None:
            driver.close()
