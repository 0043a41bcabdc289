"""Loading conformance: reloads are idempotent; ``replace`` empties exactly the loaded tenants."""

from __future__ import annotations

from itertools import pairwise

from brain_graph.stores.base import EdgeRecord, Link, Neighborhood, NodeRecord, VectorRecord
from tests.conformance.conftest import WORK, Harness

Q = [1.0, 0.0, 0.0, 0.0]
TYPES = ["REFERENCES"]


def snapshot(harness: Harness, tenant: str, ids: list[str]) -> tuple[object, ...]:
    """Everything the protocol can tell about these ids in a tenant (service-principal scope)."""
    scope = harness.scope(tenant, all_secured=True)
    graph = harness.backend.graph_store
    return (
        harness.query(scope, Q, top_k=50),
        sorted(graph.get_nodes(ids, scope=scope), key=lambda n: n.node_id),
        graph.links(ids, scope=scope, edge_types=TYPES, max_degree=50),
        graph.edges_among(ids, scope=scope, edge_types=TYPES),
    )


def dataset(
    harness: Harness, keys: list[str], tenant: str = "t1"
) -> tuple[list[NodeRecord], list[EdgeRecord], list[VectorRecord]]:
    nodes = [harness.node(tenant, key) for key in keys]
    edges = [harness.edge(tenant, "REFERENCES", a, b) for a, b in pairwise(keys)]
    vectors = [harness.vector(n, [1.0, float(i), 0.0, 0.0]) for i, n in enumerate(nodes)]
    return nodes, edges, vectors


def test_reload_is_idempotent(harness: Harness) -> None:
    nodes, edges, vectors = dataset(harness, ["a", "b", "c"])
    harness.load(nodes, edges, vectors, replace=False)
    first = snapshot(harness, "t1", ["a", "b", "c"])
    harness.load(nodes, edges, vectors, replace=False)
    harness.load(nodes, edges, vectors, replace=True)
    harness.load(nodes, edges, vectors, replace=False)
    assert snapshot(harness, "t1", ["a", "b", "c"]) == first
    hits = first[0]
    assert isinstance(hits, list)
    assert [h[1] for h in hits] == ["a", "b", "c"]  # no duplicate vectors


def test_replace_drops_the_loaded_tenants_only(harness: Harness) -> None:
    nodes, edges, vectors = dataset(harness, ["a", "b", "c"])
    other, other_edges, other_vectors = dataset(harness, ["a", "z"], tenant="t2")
    harness.load(nodes + other, edges + other_edges, vectors + other_vectors)
    before_other = snapshot(harness, "t2", ["a", "z"])

    new_nodes, new_edges, new_vectors = dataset(harness, ["b", "d"])
    harness.load(new_nodes, new_edges, new_vectors, replace=True)
    scope = harness.scope("t1", all_secured=True)
    graph = harness.backend.graph_store
    assert sorted(n.node_id for n in graph.get_nodes(["a", "b", "c", "d"], scope=scope)) == ["b", "d"]
    assert [h[1] for h in harness.query(scope, Q)] == ["b", "d"]
    assert graph.links(["b"], scope=scope, edge_types=TYPES, max_degree=10) == Neighborhood(
        {"b": 1}, [Link("b", "REFERENCES", "d", True)]
    )
    assert snapshot(harness, "t2", ["a", "z"]) == before_other

    merged_nodes, _, merged_vectors = dataset(harness, ["e"])
    harness.load(merged_nodes, [], merged_vectors, replace=False)
    assert sorted(n.node_id for n in graph.get_nodes(["a", "b", "d", "e"], scope=scope)) == ["b", "d", "e"]
    assert [h[0] for h in harness.query(scope, Q)] == [WORK] * 3
