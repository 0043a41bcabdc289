"""A load that gives a node or an edge twice stores it once, as given last, on every backend (the
Neo4j half CREATEs into a fresh generation and MERGEs into the current one: both must agree)."""

from __future__ import annotations

import pytest

from tests.conformance.conftest import WORK, Harness

TYPES = ["REFERENCES"]


@pytest.mark.parametrize(
    ("loaded", "replace"), [(False, True), (False, False), (True, False)], ids=["replace", "merge", "merge-into-data"]
)
def test_a_record_given_twice_is_stored_once_as_given_last(harness: Harness, loaded: bool, replace: bool) -> None:
    if loaded:
        harness.load([harness.node("t1", "a"), harness.node("t1", "b")], [harness.edge("t1", "REFERENCES", "a", "b")])
    nodes = [
        harness.node("t1", "a", title="first a"),
        harness.node("t1", "b"),
        harness.node("t1", "a", title="last a", properties={"rank": 2}),
    ]
    edges = [
        harness.edge("t1", "REFERENCES", "a", "b", weight=1),
        harness.edge("t1", "REFERENCES", "b", "a"),
        harness.edge("t1", "REFERENCES", "a", "b", weight=2),
    ]
    harness.load(nodes, edges, replace=replace)
    scope = harness.scope("t1", all_secured=True)
    stored = {n.node_id: n for n in harness.backend.graph_store.get_nodes(["a", "b"], scope=scope)}
    assert (stored["a"].title, dict(stored["a"].properties)) == ("last a", {"rank": 2})
    among = harness.backend.graph_store.edges_among(["a", "b"], scope=scope, edge_types=TYPES)
    assert [(e.from_node_id, e.to_node_id, dict(e.properties)) for e in among] == [
        ("a", "b", {"weight": 2}),
        ("b", "a", {}),
    ]
    counts = harness.backend.admin.count(harness.t("t1"))
    assert (counts.nodes, counts.edges) == (2, 2)


def test_a_vector_given_twice_in_different_batches_is_stored_as_given_last(harness: Harness) -> None:
    """The two records of node ``a`` are more than one insert batch apart (batches are written
    concurrently on the server backend): the last one given is the one kept."""
    fillers = [harness.node("t1", f"f{index:04d}") for index in range(1_100)]
    a = harness.node("t1", "a")
    vectors = [
        harness.vector(a, [1.0, 0.0, 0.0, 0.0]),
        *(harness.vector(node, [0.0, 0.0, 1.0, 0.0]) for node in fillers),
        harness.vector(a, [0.0, 1.0, 0.0, 0.0]),
    ]
    harness.load([a, *fillers], [], vectors)
    scope = harness.scope("t1", all_secured=True)
    assert harness.query(scope, [0.0, 1.0, 0.0, 0.0], top_k=1) == [(WORK, "a", 1.0)]
    assert sum(harness.backend.admin.count(harness.t("t1")).vectors.values()) == 1_101
