"""The edges among a search's admitted nodes never read all the out-edges of an admitted hub on Neo4j
(measured in the server's database hits, not time; the figures: docs/internals/neo4j-statements.md).
The embedded store's counterpart is ``tests/unit/test_embedded_hub_reads.py``."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, LiteralString

import pytest

from brain_graph.core.security import AccessScope
from brain_graph.stores.access import cypher_params
from brain_graph.stores.base import EdgeRecord, NodeRecord
from brain_graph.stores.neo4j_weaviate.backend import Neo4jWeaviateBackend
from brain_graph.stores.neo4j_weaviate.neo4j import cypher
from brain_graph.stores.neo4j_weaviate.neo4j.generations import edge_row
from brain_graph.stores.neo4j_weaviate.neo4j.graph import heads_params
from brain_graph.stores.neo4j_weaviate.neo4j.search_reads import COPY_PARAMS
from brain_graph.stores.neo4j_weaviate.neo4j.vector_copies import MAX_COPIED
from tests.integration.servers import connect, unique_prefix

pytestmark = pytest.mark.integration

TYPES = ["DEPENDS_ON", "REFERENCES"]
ADMITTED = ["hub"] + [f"n{index:05d}" for index in range(0, 150, 3)]
NO_COPIES = {"profiles": [], **COPY_PARAMS, "maxCopied": MAX_COPIED}  # SEEDS without vector copies


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


def operators(plan: Any) -> list[str]:
    """The operator names of a plan tree."""
    names = [str(plan["operatorType"]).split("@")[0]]
    for child in plan.get("children", []):
        names += operators(child)
    return names


def profiled(backend: Neo4jWeaviateBackend, query: LiteralString, params: dict[str, Any]) -> tuple[int, list[Any]]:
    """The database hits of ``query`` and its rows."""
    with backend.neo4j._get_driver().session(database=backend.neo4j.database) as session:
        result = session.run("PROFILE " + query, params)
        rows = [record.values() for record in result]
        return database_hits(result.consume().profile), rows


def among_hits(backend: Neo4jWeaviateBackend, tenant: str) -> tuple[int, set[tuple[str, str, str]]]:
    params = {**cypher_params(AccessScope(tenant)), "nodeIds": sorted(ADMITTED), "edgeTypes": TYPES}
    hits, rows = profiled(backend, cypher.edges_among(tuple(TYPES)), params)
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
        hits, [row] = profiled(hubs.backend, cypher.context(tuple(TYPES)), params)
        return hits, len(row[1])

    small_hits, small_edges = context_hits(hubs.load(200, loops=False))
    large_hits, large_edges = context_hits(hubs.load(8_000, loops=False))
    assert small_edges == large_edges == 3 * (len(ADMITTED) - 1)
    assert large_hits <= small_hits


def test_without_edge_types_no_edge_is_read(hubs: HubTenants) -> None:
    tenant = hubs.load(2_000, loops=False)
    params = {**cypher_params(AccessScope(tenant)), "nodeIds": sorted(ADMITTED), "edgeTypes": []}
    hits, rows = profiled(hubs.backend, cypher.edges_among(()), params)
    assert rows == []
    assert hits < 10 * len(ADMITTED)  # the admitted nodes are sought, none of their edges read


def canonical(value: Any, tenant: str) -> str:
    """Rows as comparable text: the tenant id masked, every list sorted (``collect`` has no order)."""

    def sort(item: Any) -> Any:
        if isinstance(item, list):
            return sorted((sort(element) for element in item), key=repr)
        if isinstance(item, dict):
            return {key: sort(element) for key, element in sorted(item.items())}
        return "T" if item == tenant else item

    return repr(sort(value))


def unfollowed_edges(tenant: str, size: int) -> list[EdgeRecord]:
    """``size`` ASSIGNED_TO edges into ``hub`` and as many out of it (a type the searches here do not
    follow), beside the followed edges of a small neighbourhood."""
    edges = [EdgeRecord(tenant, "ASSIGNED_TO", f"n{index:05d}", "hub") for index in range(size)]
    edges += [EdgeRecord(tenant, "ASSIGNED_TO", "hub", f"n{index:05d}") for index in range(size)]
    edges += [EdgeRecord(tenant, edge_type, "hub", node_id) for node_id in ADMITTED[1:6] for edge_type in TYPES]
    return edges


def test_edges_of_types_a_search_does_not_follow_are_not_read(hubs: HubTenants) -> None:
    """A node with 12,000 edges of other types costs what it costs with 800: the statements expand
    over the search's edge types only."""

    def tenant_with(size: int) -> str:
        tenant = f"{hubs._prefix}u{size}"
        nodes = [NodeRecord(tenant, "hub", "cdm.doc", None, "hub", None)]
        nodes += [NodeRecord(tenant, f"n{index:05d}", "cdm.doc", None, "n", None) for index in range(max(size, 200))]
        hubs.backend.load(nodes, unfollowed_edges(tenant, size), [], [], replace=True)
        hubs.tenants.append(tenant)
        return tenant

    def costs(tenant: str) -> tuple[dict[str, int], list[str]]:
        scope = cypher_params(AccessScope(tenant))
        statements = {
            "seeds": (cypher.seeds, {**scope, "nodeIds": ADMITTED, "maxDegree": 50, **NO_COPIES}),
            "links": (cypher.links, {**scope, "frontier": ADMITTED, "maxDegree": 50}),
            "edges_among": (cypher.edges_among, {**scope, "nodeIds": sorted(ADMITTED)}),
        }
        hits: dict[str, int] = {}
        found: list[str] = []
        for name, (made, params) in statements.items():
            hits[name], rows = profiled(hubs.backend, made(tuple(TYPES)), {**params, "edgeTypes": TYPES})
            found.append(canonical(rows, tenant))
        return hits, found

    few_hits, few_rows = costs(tenant_with(400))
    many_hits, many_rows = costs(tenant_with(6_000))
    assert many_rows == few_rows
    assert many_rows[2].count("DEPENDS_ON") == many_rows[2].count("REFERENCES") == 5  # the edges among the ids
    for name, hits in many_hits.items():
        assert hits <= few_hits[name] + 50, f"{name}: {hits} database hits, {few_hits[name]} with 800 unfollowed edges"


def test_deleting_one_edge_of_a_hub_reads_that_edge_not_the_hubs(hubs: HubTenants) -> None:
    """A change deleting one edge out of a node with thousands of edges of its type costs what it costs
    for a node with a few hundred, and its plan expands into the two ends sought by id, never from one
    end (an expansion of one end reads all its edges of the type, whatever the statistics)."""

    def delete_hits(size: int) -> tuple[int, int]:
        tenant = hubs.load(size, loops=False)
        generation = hubs.backend.generations.current_generation(tenant)
        assert generation is not None
        edge = EdgeRecord(tenant, "DEPENDS_ON", "hub", "n00003")
        statement = cypher.delete_edges("DEPENDS_ON")
        with hubs.backend.neo4j._get_driver().session(database=hubs.backend.neo4j.database) as session:
            transaction = session.begin_transaction()
            try:
                result = transaction.run("PROFILE " + statement, {"rows": [edge_row(edge, generation)]})
                summary = result.consume()
            finally:
                transaction.rollback()
        plan = list(operators(summary.profile))
        assert "Expand(Into)" in plan, plan
        assert not [op for op in plan if op == "Expand(All)" or "Join" in op], plan
        return database_hits(summary.profile), summary.counters.relationships_deleted

    small_hits, small_deleted = delete_hits(200)
    large_hits, large_deleted = delete_hits(8_000)
    assert small_deleted == large_deleted == 1
    assert large_hits <= small_hits + 10
