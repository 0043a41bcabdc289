"""GraphStore / PassageSource conformance: nodes, neighbours, edges, clusters, tenants, ACL."""

from __future__ import annotations

from dataclasses import replace

import pytest

from brain_graph.stores.base import EdgeRecord, Link, Neighborhood, NodeRecord
from tests.conformance.conftest import Harness
from tests.conformance.test_vector_index import ACL_CASES, ACL_NODES

TYPES = ["DEPENDS_ON", "HAS_SIGNAL", "IN_CLUSTER", "REFERENCES"]


def node_ids(nodes: list[NodeRecord]) -> list[str]:
    return sorted(node.node_id for node in nodes)


def test_empty_store_returns_nothing(harness: Harness) -> None:
    graph, scope = harness.backend.graph_store, harness.scope("t1")
    assert graph.get_nodes(["a", "b"], scope=scope) == []
    assert graph.get_nodes([], scope=scope) == []
    assert graph.links(["a"], scope=scope, edge_types=TYPES, max_degree=10) == Neighborhood({"a": 0}, [])
    assert graph.edges_among(["a", "b"], scope=scope, edge_types=TYPES) == []
    assert graph.cluster_memberships(["a"], scope=scope) == []
    assert harness.backend.passage_source.get_texts(["a"], scope=scope) == {}


def test_node_fields_round_trip(harness: Harness) -> None:
    rich = harness.node(
        "t1",
        "rich",
        "cdm.doc",
        project=None,
        title="Ünïcode — title ✓",
        url="https://example.com/a?b=c",
        text={"body": "line 1\nline 2 \u2603", "summary": ""},
        properties={"nested": {"list": [1, 2.5, "x", None, True]}, "count": 3, "flag": False, "none": None},
    )
    bare = harness.node("t1", "bare", "kg.cluster", title="", secured=True, acl=["group:b", "user:a"])
    harness.load([rich, bare])
    scope = harness.scope("t1", all_secured=True)
    # node reads return the metadata only; texts are a read of their own
    metadata = [replace(rich, text={}), bare]
    assert sorted(harness.backend.graph_store.get_nodes(["rich", "bare", "missing"], scope=scope), key=str) == sorted(
        metadata, key=str
    )
    texts = harness.backend.passage_source.get_texts(["rich", "rich", "bare", "missing"], scope=scope)
    assert texts == {"rich": rich.text, "bare": {}}


def neighbour_graph(harness: Harness) -> None:
    nodes = [harness.node("t1", key) for key in ("f0", "f1", "a", "b", "c", "d", "e", "x", "lonely")]
    nodes.append(harness.node("t1", "hidden", secured=True, acl=["user:x"]))
    nodes += [harness.node("t2", "f0"), harness.node("t2", "zz")]
    edges = [
        harness.edge("t1", "REFERENCES", "f0", "a"),
        harness.edge("t1", "HAS_SIGNAL", "a", "f0"),
        harness.edge("t1", "DEPENDS_ON", "f1", "a"),
        harness.edge("t1", "REFERENCES", "b", "f1"),
        harness.edge("t1", "IN_CLUSTER", "f1", "c"),
        harness.edge("t1", "ASSIGNED_TO", "f0", "d"),
        harness.edge("t1", "REFERENCES", "f0", "hidden"),
        harness.edge("t1", "REFERENCES", "f0", "x"),
        harness.edge("t1", "REFERENCES", "f1", "e"),
        harness.edge("t1", "REFERENCES", "f0", "f1"),
        harness.edge("t1", "REFERENCES", "f1", "f1"),  # self-loop
        harness.edge("t2", "REFERENCES", "f0", "zz"),
    ]
    harness.load(nodes, edges)


def test_links_order_direction_and_filters(harness: Harness) -> None:
    neighbour_graph(harness)
    graph = harness.backend.graph_store

    def run(
        frontier: list[str], types: list[str] = TYPES, identities: list[str] | None = None, max_degree: int = 10
    ) -> Neighborhood:
        scope = harness.scope("t1", identities)
        return graph.links(frontier, scope=scope, edge_types=types, max_degree=max_degree)

    # both directions, one link per edge; a, reached by two edges from f0, is one neighbour; not
    # ASSIGNED_TO, hidden (ACL) nor the frontier node itself (f1's self-loop)
    f0 = [
        Link("f0", "HAS_SIGNAL", "a", False),
        Link("f0", "REFERENCES", "a", True),
        Link("f0", "REFERENCES", "f1", True),
        Link("f0", "REFERENCES", "x", True),
    ]
    f1 = [
        Link("f1", "DEPENDS_ON", "a", True),
        Link("f1", "IN_CLUSTER", "c", True),
        Link("f1", "REFERENCES", "b", False),
        Link("f1", "REFERENCES", "e", True),
        Link("f1", "REFERENCES", "f0", False),
    ]
    assert run(["f0", "f1"]) == Neighborhood({"f0": 3, "f1": 5}, f0 + f1)
    # sorted whatever the order of the request
    assert run(["f1", "f0"]) == Neighborhood({"f1": 5, "f0": 3}, f0 + f1)
    # f1, of 5 neighbours, is counted (to max_degree + 1), not listed
    assert run(["f0", "f1"], max_degree=3) == Neighborhood({"f0": 3, "f1": 4}, f0)
    assert run(["f0", "f1"], max_degree=4) == Neighborhood({"f0": 3, "f1": 5}, f0)
    assert run(["f0", "f1"], max_degree=0) == Neighborhood({"f0": 1, "f1": 1}, [])
    assert run(["f0", "f1"], identities=["user:x"]) == Neighborhood(
        {"f0": 4, "f1": 5}, sorted([*f0, Link("f0", "REFERENCES", "hidden", True), *f1])
    )
    assert run(["f0", "f1"], types=["REFERENCES"]) == Neighborhood(
        {"f0": 3, "f1": 3}, [link for link in f0 + f1 if link.edge_type == "REFERENCES"]
    )
    assert run(["f0", "missing", "f0"], types=["ASSIGNED_TO"]) == Neighborhood(
        {"f0": 1, "missing": 0}, [Link("f0", "ASSIGNED_TO", "d", True)]
    )
    assert run(["lonely", "missing"]) == Neighborhood({"lonely": 0, "missing": 0}, [])
    assert run(["f0"], types=[]) == Neighborhood({"f0": 0}, [])
    # the other tenant's f0 reaches only its own neighbour
    t2 = graph.links(["f0"], scope=harness.scope("t2"), edge_types=TYPES, max_degree=10)
    assert t2 == Neighborhood({"f0": 1}, [Link("f0", "REFERENCES", "zz", True)])


def test_edges_among(harness: Harness) -> None:
    nodes = [harness.node("t1", key) for key in ("a", "b", "c", "d")] + [
        harness.node("t2", "a"),
        harness.node("t2", "b"),
    ]
    edges = [
        harness.edge("t1", "REFERENCES", "b", "a", weight=2, label="é"),
        harness.edge("t1", "REFERENCES", "a", "b"),
        harness.edge("t1", "DEPENDS_ON", "a", "c"),
        harness.edge("t1", "HAS_SIGNAL", "a", "d"),
        harness.edge("t1", "ASSIGNED_TO", "a", "b"),
        harness.edge("t2", "REFERENCES", "a", "b", other=True),
    ]
    harness.load(nodes, edges)
    got = harness.backend.graph_store.edges_among(
        ["a", "b", "c", "missing"], scope=harness.scope("t1"), edge_types=["DEPENDS_ON", "REFERENCES", "HAS_SIGNAL"]
    )
    t1 = harness.t("t1")
    assert got == [
        EdgeRecord(t1, "DEPENDS_ON", "a", "c", {}),
        EdgeRecord(t1, "REFERENCES", "a", "b", {}),
        EdgeRecord(t1, "REFERENCES", "b", "a", {"label": "é", "weight": 2}),
    ]
    assert harness.backend.graph_store.edges_among(["a", "b"], scope=harness.scope("t1"), edge_types=[]) == []


def test_cluster_memberships_with_visible_sizes(harness: Harness) -> None:
    nodes = [
        harness.node("t1", "m1"),
        harness.node("t1", "m2"),
        harness.node("t1", "m3", secured=True, acl=["group:security"]),
        harness.node("t1", "k1", "kg.cluster", project="P", properties={"clusterKind": "episode"}),
        harness.node("t1", "k2", "kg.cluster", secured=True, acl=["group:security"]),
        harness.node("t1", "k0", "kg.cluster"),
        harness.node("t1", "not-a-cluster", "cdm.doc"),
        harness.node("t2", "m1"),
        harness.node("t2", "k1", "kg.cluster"),
    ]
    edges = [
        harness.edge("t1", "IN_CLUSTER", "m1", "k1"),
        harness.edge("t1", "IN_CLUSTER", "m2", "k1"),
        harness.edge("t1", "IN_CLUSTER", "m3", "k1"),
        harness.edge("t1", "IN_CLUSTER", "m1", "k2"),
        harness.edge("t1", "IN_CLUSTER", "m3", "k2"),
        harness.edge("t1", "IN_CLUSTER", "m2", "k0"),
        harness.edge("t1", "IN_CLUSTER", "m1", "not-a-cluster"),
        harness.edge("t1", "REFERENCES", "m1", "k0"),
        harness.edge("t2", "IN_CLUSTER", "m1", "k1"),
    ]
    harness.load(nodes, edges)
    graph = harness.backend.graph_store
    by_id = {n.node_id: n for n in nodes if n.tenant_id == harness.t("t1")}

    public = graph.cluster_memberships(["m1", "m2", "m1", "missing"], scope=harness.scope("t1"))
    assert [(m.cluster_id, m.member_id, m.cluster_size) for m in public] == [
        ("k0", "m2", 1),
        ("k1", "m1", 2),
        ("k1", "m2", 2),
    ]
    assert [m.cluster for m in public] == [by_id["k0"], by_id["k1"], by_id["k1"]]

    group = graph.cluster_memberships(["m1", "m3"], scope=harness.scope("t1", ["group:security"]))
    assert [(m.cluster_id, m.member_id, m.cluster_size) for m in group] == [
        ("k1", "m1", 3),
        ("k1", "m3", 3),
        ("k2", "m1", 2),
        ("k2", "m3", 2),
    ]
    other = graph.cluster_memberships(["m1"], scope=harness.scope("t2"))
    assert [(m.cluster_id, m.member_id, m.cluster_size, m.cluster) for m in other] == [
        ("k1", "m1", 1, harness.node("t2", "k1", "kg.cluster"))
    ]


def test_cluster_records_already_known_are_not_read(harness: Harness) -> None:
    nodes = [
        harness.node("t1", "m1"),
        harness.node("t1", "m2"),
        harness.node("t1", "k1", "kg.cluster", text={"summary": "never read"}),
        harness.node("t1", "k2", "kg.cluster"),
    ]
    edges = [harness.edge("t1", "IN_CLUSTER", m, k) for m, k in (("m1", "k1"), ("m2", "k1"), ("m1", "k2"))]
    harness.load(nodes, edges)
    graph, scope = harness.backend.graph_store, harness.scope("t1")
    full = graph.cluster_memberships(["m1", "m2"], scope=scope)
    assert [m.cluster for m in full] == [replace(nodes[2], text={}), replace(nodes[2], text={}), nodes[3]]
    known = graph.cluster_memberships(["m1", "m2"], scope=scope, known=["k1", "m1", "unrelated"])
    assert [(m.cluster_id, m.member_id, m.cluster_size, m.cluster) for m in known] == [
        ("k1", "m1", 2, None),
        ("k1", "m2", 2, None),
        ("k2", "m1", 1, nodes[3]),
    ]


def test_tenant_isolation_of_node_reads(harness: Harness) -> None:
    harness.load([harness.node("t1", "same", title="mine"), harness.node("t2", "same", title="theirs")])
    got = harness.backend.graph_store.get_nodes(["same"], scope=harness.scope("t1"))
    assert [(n.tenant_id, n.title) for n in got] == [(harness.t("t1"), "mine")]
    assert harness.backend.graph_store.get_nodes(["same"], scope=harness.scope("t3")) == []


@pytest.mark.parametrize("case", list(ACL_CASES))
def test_acl_visibility_in_graph_reads(harness: Harness, case: str) -> None:
    identities, all_secured, visible = ACL_CASES[case]
    nodes = [harness.node("t1", key, secured=sec, acl=acl) for key, (sec, acl) in ACL_NODES.items()]
    nodes += [harness.node("t1", "hub"), harness.node("t1", "k", "kg.cluster")]
    edges = [harness.edge("t1", "REFERENCES", "hub", key) for key in ACL_NODES]
    edges += [harness.edge("t1", "IN_CLUSTER", key, "k") for key in ACL_NODES]
    harness.load(nodes, edges)
    scope = harness.scope("t1", sorted(identities) if identities is not None else None, all_secured=all_secured)
    graph = harness.backend.graph_store
    assert node_ids(graph.get_nodes(list(ACL_NODES), scope=scope)) == sorted(visible)
    assert sorted(harness.backend.passage_source.get_texts(list(ACL_NODES), scope=scope)) == sorted(visible)
    reached = graph.links(["hub"], scope=scope, edge_types=["REFERENCES"], max_degree=50)
    assert dict(reached.degrees) == {"hub": len(visible)}
    assert [link.neighbor_id for link in reached.links] == sorted(visible)
    clusters = graph.cluster_memberships(["pub"], scope=scope)
    assert [(m.cluster_id, m.cluster_size) for m in clusters] == [("k", len(visible))]


def test_link_neighbor_ids_order_by_code_point(harness: Harness) -> None:
    # U+FFFD sorts before U+1F600 by code point but after it by UTF-16 code unit (Java, Cypher).
    ids = ["\U0001f600", "\ufffd", "z", "é", "A", "\U0001f600a"]
    harness.load(
        [harness.node("t1", "hub"), *(harness.node("t1", i) for i in ids)],
        [harness.edge("t1", "REFERENCES", "hub", i) for i in ids],
    )
    got = harness.backend.graph_store.links(["hub"], scope=harness.scope("t1"), edge_types=TYPES, max_degree=10)
    assert [link.neighbor_id for link in got.links] == sorted(ids)
