"""Graph store and passage source on Neo4j (official ``neo4j`` driver).

Nodes are ``:BrainNode`` with ``tenantId``, ``nodeId`` (unique together), ``nodeType`` (indexed),
``projectKey``, ``title``, ``url``, ``secured``, ``acl`` (list) and ``text`` / ``properties`` as JSON
strings (Neo4j properties cannot be maps). Edges are typed relationships with a JSON ``properties``.
All Cypher is in :mod:`brain_graph.stores.cypher`.

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


def _node_row(node: NodeRecord) -> dict[str, Any]:
    return {
        "tenantId": node.tenant_id,
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

    # -- writes ----------------------------------------------------------------------------------

    def _ensure_schema(self, session: neo4j.Session) -> None:
        if self._schema_ready:
            return
        for statement in cypher.SCHEMA:
            self._tick()
            session.run(statement).consume()
        self._schema_ready = True

    def write(
        self, nodes: Sequence[NodeRecord], edges: Sequence[EdgeRecord], *, replace_tenants: Sequence[str]
    ) -> None:
        """Create the schema if needed, delete ``replace_tenants`` (batches of :data:`DELETE_BATCH` nodes),
        MERGE the nodes, then the edges grouped by type (type validated, then interpolated), each batch of
        :data:`WRITE_BATCH` rows in its own transaction, so memory stays bounded whatever the size. Not
        atomic: readers may see a partly loaded tenant, and a failed load is repaired by loading again."""
        statements: list[tuple[str, dict[str, Any]]] = []
        rows = [_node_row(node) for node in nodes]
        for start in range(0, len(rows), WRITE_BATCH):
            statements.append((cypher.MERGE_NODES, {"rows": rows[start : start + WRITE_BATCH]}))
        ordered = sorted(edges, key=lambda e: (e.edge_type, e.tenant_id, e.from_node_id, e.to_node_id))
        for edge_type, group in groupby(ordered, key=lambda e: e.edge_type):
            query = cypher.merge_edges(edge_type)
            edge_rows = [
                {
                    "tenantId": e.tenant_id,
                    "fromNodeId": e.from_node_id,
                    "toNodeId": e.to_node_id,
                    "properties": _dumps(dict(e.properties)),
                }
                for e in group
            ]
            for start in range(0, len(edge_rows), WRITE_BATCH):
                statements.append((query, {"rows": edge_rows[start : start + WRITE_BATCH]}))

        def work(driver: neo4j.Driver) -> None:
            with driver.session(database=self.database) as session:
                self._ensure_schema(session)
                deleted = DELETE_BATCH if replace_tenants else 0
                while deleted >= DELETE_BATCH:
                    params = {"tenants": sorted(set(replace_tenants)), "batch": DELETE_BATCH}
                    deleted = int(self._commit(session, cypher.DELETE_TENANTS, params)[0]["deleted"])
                for query, params in statements:
                    self._commit(session, query, params)

        self._with_retry(work)

    def _commit(self, session: neo4j.Session, query: str, params: Mapping[str, Any]) -> list[neo4j.Record]:
        """One statement in its own explicit write transaction."""
        self._tick()
        with session.begin_transaction() as tx:
            records = list(tx.run(query, dict(params)))
            tx.commit()
        return records

    def drop_tenants(self, tenants: Sequence[str]) -> None:
        """Delete every node and edge of these tenants."""
        self.write([], [], replace_tenants=tenants)

    def count(self, tenants: Sequence[str]) -> tuple[int, int]:
        """(nodes, edges) stored for these tenants."""
        params = {"tenants": sorted(set(tenants))}
        nodes = self._read(cypher.COUNT_NODES, params)[0]["count"]
        edges = self._read(cypher.COUNT_EDGES, params)[0]["count"]
        return int(nodes), int(edges)

    def close(self) -> None:
        """Close the driver (a later call opens a new one)."""
        with self._lock:
            driver, self._driver = self._driver, None
        if driver is not None:
            driver.close()
