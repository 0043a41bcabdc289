"""The edges among a search's admitted nodes never read all the out-edges of an admitted hub on Neo4j
(measured in the server's database hits, not time): before, a 20,000-edge hub among 51 admitted nodes
cost 240,858 database hits for the statement. The embedded store's counterpart is
``tests/unit/test_embedded_hub_reads.py``."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, LiteralString

import pytest

from brain_graph.security import AccessScope
from brain_graph.stores.access import cypher_params
from brain_graph.stores.base import EdgeRecord, NodeRecord
from brain_graph.stores.neo4j import cypher
from brain_graph.stores.neo4j.graph import heads_params
from brain_graph.stores.neo4j_weaviate import Neo4jWeaviateBackend
from tests.integration.servers import connect, unique_prefix

pytestmark = pytest.mark.integration

TYPES = ["DEPENDS_ON", "REFERENCES"]
ADMITTED = ["hub"] + [f"n{index:05d}" for index in range(0, 150, 3)]


def hub_edges(tenant: str, size: int, *, loops: bool) -> list[EdgeRecord]:
    """Node ``hub`` with ``size`` neighbours: out-edges of both types, as many in-edges, and with
    ``loops`` a self-loop on the hub and on one of its neighbours."""
    edges = [EdgeRecord(tenant, edge_type, "hub", f"n{index:05d}") for index in range(size) for edge_type in TYPES]
    edges += [EdgeRecord(tenant, "REFERENCES", f"n{index:05d}", "hub") for index in range(size)]
    if loops:
        edges += [EdgeRecord(tenant, "DEPENDS_ON", "hub", "hub"), EdgeRecord(tenant, "REFERENCES", "n00003", "n00003")]
    return edges


class HubTenants:
    """Tenants holding a hub, loaded on demand, dropped at the end of the module."""

    def __init__(self, backend: Neo4jWeaviateBackend) -> None:
        self.backend = backend
        self.tenants: list[str] = []
        self._prefix = unique_prefix("hubreads")

    def load(self, size: int, *, loops: bool) -> str:
        tenant = f"{self._prefix}{len(self.tenants)}"
        nodes = [NodeRecord(tenant, "hub", "cdm.doc", None, "hub", None)]
        nodes += [NodeRecord(tenant, f"n{index:05d}", "cdm.doc", None, "n", None) for index in range(size)]
        self.backend.load(nodes, hub_edges(tenant, size, loops=loops), [], [], replace=True)
        self.tenants.append(tenant)
        return tenant


@pytest.fixture(scope="module")
def hubs() -> Iterator[HubTenants]:
    held = HubTenants(connect())
    try:
        yield held
    finally:
        held.backend.drop_tenants(held.tenants)
        held.backend.close()


def database_hits(plan: Any) -> int:
    return int(plan.get("dbHits", 0)) + sum(database_hits(child) for child in plan.get("children", []))


def profiled(backend: Neo4jWeaviateBackend, query: LiteralString, params: dict[str, Any]) -> tuple[int, list[Any]]:
    """The database hits of ``query`` and its rows."""
    with backend.neo4j._get_driver().session(database=backend.neo4j.database) as session:
        result = session.run("PROFILE " + query, params)
        rows = [record.values() for record in result]
        return database_hits(result.consume().profile), rows


def among_hits(backend: Neo4jWeaviateBackend, tenant: str) -> tuple[int, set[tuple[str, str, str]]]:
    params = {"tenantId": tenant, "nodeIds": sorted(ADMITTED), "edgeTypes": TYPES}
    hits, rows = profiled(backend, cypher.EDGES_AMONG, params)
    return hits, {(edge_type, source, target) for edge_type, source, target, _ in rows}


def expected_among(tenant: str, size: int, *, loops: bool) -> set[tuple[str, str, str]]:
    admitted = set(ADMITTED)
    return {
        (edge.edge_type, edge.from_node_id, edge.to_node_id)
        for edge in hub_edges(tenant, size, loops=loops)
        if edge.from_node_id in admitted and edge.to_node_id in admitted
    }


@pytest.mark.parametrize("loops", [False, True], ids=["no-loops", "self-loops"])
def test_edges_among_an_admitted_hub_are_all_found(hubs: HubTenants, loops: bool) -> None:
    tenant = hubs.load(300, loops=loops)
    _, found = among_hits(hubs.backend, tenant)
    assert found == expected_among(tenant, 300, loops=loops)
    assert (("DEPENDS_ON", "hub", "hub") in found) is loops


def test_edges_among_an_admitted_hub_cost_as_much_whatever_its_size(hubs: HubTenants) -> None:
    small, large = hubs.load(200, loops=False), hubs.load(8_000, loops=False)
    small_hits, small_edges = among_hits(hubs.backend, small)
    large_hits, large_edges = among_hits(hubs.backend, large)
    assert len(small_edges) == len(large_edges) == 3 * (len(ADMITTED) - 1)
    assert large_hits <= small_hits  # not 40 times the work for 40 times the edges


def test_the_context_of_a_search_with_an_admitted_hub_costs_as_much_whatever_its_size(hubs: HubTenants) -> None:
    def context_hits(tenant: str) -> tuple[int, int]:
        params = {
            **cypher_params(AccessScope(tenant)),
            "newIds": ADMITTED[26:],
            "knownIds": ADMITTED[:26],
            "records": sorted(ADMITTED),
            "edgeTypes": TYPES,
            "members": [],
            "clusterType": "cluster",
            "ranked": ADMITTED,
            "passages": 5,
            **heads_params(False),
        }
        hits, [row] = profiled(hubs.backend, cypher.CONTEXT, params)
        return hits, len(row[1])

    small_hits, small_edges = context_hits(hubs.load(200, loops=False))
    large_hits, large_edges = context_hits(hubs.load(8_000, loops=False))
    assert small_edges == large_edges == 3 * (len(ADMITTED) - 1)
    assert large_hits <= small_hits


def test_without_edge_types_no_edge_is_read(hubs: HubTenants) -> None:
    tenant = hubs.load(2_000, loops=False)
    params = {"tenantId": tenant, "nodeIds": sorted(ADMITTED), "edgeTypes": []}
    hits, rows = profiled(hubs.backend, cypher.EDGES_AMONG, params)
    assert rows == []
    assert hits < 10 * len(ADMITTED)  # the admitted nodes are sought, none of their edges read
