"""Every store read enforces the scope whatever ids it is handed: the ids of nodes the scope cannot see
(secured without a matching ACL entry, of another tenant, missing) give nothing of those nodes, not
their links, edges, clusters, texts or scores, in the single reads and in the combined reads of a
search. The same reads with a scope that may see them return them (the checks are not vacuous).

The graph (tenant t1): public ``a`` and ``b`` (``a -> b``); ``s``, secured for alice, linked with
``a``, ``b`` and ``x``; ``x``, secured for bob, reachable only through ``s``; public cluster ``k`` of
``s`` and ``x``, public cluster ``ka`` of ``a``; tenant t2 holds ``o`` (linked with t1's ids by
name only)."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from brain_graph.core.security import AccessScope
from brain_graph.stores.base import ContextRequest, EdgeRecord, VectorQuery
from tests.conformance.conftest import EMBEDDER, WORK, Harness

TYPES = ["IN_CLUSTER", "REFERENCES"]
HIDDEN = ["s", "x", "o", "missing"]  # invisible to the public scope of t1: secured, secured, t2's, none


def load_graph(harness: Harness) -> None:
    nodes = [
        harness.node("t1", "a", text={"summary": "alpha"}),
        harness.node("t1", "b", text={"summary": "beta"}),
        harness.node("t1", "s", secured=True, acl=["user:alice"], text={"summary": "secret"}),
        harness.node("t1", "x", secured=True, acl=["user:bob"], text={"summary": "behind the secret"}),
        harness.node("t1", "k", "kg.cluster"),
        harness.node("t1", "ka", "kg.cluster"),
        harness.node("t2", "o", text={"summary": "other tenant"}),
        harness.node("t2", "a"),
    ]
    edges = [
        harness.edge("t1", "REFERENCES", "a", "b"),
        harness.edge("t1", "REFERENCES", "s", "a"),
        harness.edge("t1", "REFERENCES", "b", "s"),
        harness.edge("t1", "REFERENCES", "s", "x"),
        harness.edge("t1", "IN_CLUSTER", "s", "k"),
        harness.edge("t1", "IN_CLUSTER", "x", "k"),
        harness.edge("t1", "IN_CLUSTER", "a", "ka"),
        harness.edge("t2", "REFERENCES", "o", "a"),
    ]
    vectors = [harness.vector(node, [1.0, 0.5, 0.25, 0.125]) for node in nodes if node.node_id != "k"]
    harness.load(nodes, edges, vectors)


def queries() -> list[VectorQuery]:
    return [VectorQuery(WORK, [1.0, 0.0, 0.0, 0.0], EMBEDDER)]


def ends(edges: Sequence[EdgeRecord]) -> list[tuple[str, str]]:
    return [(edge.from_node_id, edge.to_node_id) for edge in edges]


@pytest.fixture
def public(harness: Harness) -> AccessScope:
    load_graph(harness)
    return harness.scope("t1")


def test_single_graph_reads_of_invisible_ids_read_nothing_of_them(harness: Harness, public: AccessScope) -> None:
    graph = harness.backend.graph_store
    assert graph.get_nodes(HIDDEN, scope=public) == []
    around = graph.links(HIDDEN, scope=public, edge_types=TYPES, max_degree=50)
    assert dict(around.degrees) == dict.fromkeys(HIDDEN, 0)
    assert around.links == []
    assert ends(graph.edges_among(["a", "b", *HIDDEN], scope=public, edge_types=TYPES)) == [("a", "b")]
    assert graph.edges_among(HIDDEN, scope=public, edge_types=TYPES) == []
    memberships = graph.cluster_memberships(["a", *HIDDEN], scope=public)
    assert [(m.member_id, m.cluster_id) for m in memberships] == [("a", "ka")]


def test_texts_and_scores_of_invisible_ids_are_not_read(harness: Harness, public: AccessScope) -> None:
    passages = harness.backend.passage_source
    assert passages.get_texts(HIDDEN, scope=public) == {}
    assert passages.get_passage_heads(HIDDEN, scope=public) == {}
    assert passages.get_passage_heads(HIDDEN, scope=public, whole=True) == {}
    assert harness.backend.vector_index.similarity(queries(), HIDDEN, scope=public) == []
    assert harness.backend.search_reads.similarity(queries(), HIDDEN, scope=public) == []


def test_a_hop_from_invisible_ids_reads_nothing(harness: Harness, public: AccessScope) -> None:
    hop = harness.backend.search_reads.hop(queries(), HIDDEN, scope=public, edge_types=TYPES, max_degree=50)
    assert hop.links == []
    assert hop.scored is None or hop.scored.hits == []


def test_the_context_read_checks_the_known_ids(harness: Harness, public: AccessScope) -> None:
    request = ContextRequest(
        known=["a", "s", "o"],  # claimed as read and visible; only a is
        new=["b", "x", "missing"],
        records=["a"],
        edge_types=TYPES,
        members=["a", "s", "x"],
        ranked=["s", "x", "o", "a", "b"],
        passages=2,
    )
    context = harness.backend.search_reads.context(request, scope=public)
    assert [node.node_id for node in context.nodes] == ["b"]
    assert ends(context.edges) == [("a", "b")]
    assert [(m.member_id, m.cluster_id) for m in context.memberships] == [("a", "ka")]
    assert context.cited == ["a", "b"]
    assert sorted(context.texts) == ["a", "b"]


def test_a_scope_that_may_see_them_reads_them(harness: Harness) -> None:
    load_graph(harness)
    alice, bob = harness.scope("t1", ["user:alice"]), harness.scope("t1", ["user:alice", "user:bob"])
    graph = harness.backend.graph_store
    around = graph.links(["s"], scope=alice, edge_types=TYPES, max_degree=50)
    assert dict(around.degrees) == {"s": 3}  # a, b, k; x is bob's
    assert ends(graph.edges_among(["a", "b", "s", "x"], scope=bob, edge_types=TYPES)) == [
        ("a", "b"),
        ("b", "s"),
        ("s", "a"),
        ("s", "x"),
    ]
    assert [(m.member_id, m.cluster_id, m.cluster_size) for m in graph.cluster_memberships(["s"], scope=alice)] == [
        ("s", "k", 1)
    ]
    request = ContextRequest(
        known=["a", "s"], new=["x"], records=[], edge_types=TYPES, members=["s"], ranked=["s", "x", "a"], passages=2
    )
    context = harness.backend.search_reads.context(request, scope=bob)
    assert context.cited == ["s", "x"]
    assert sorted(context.texts) == ["s", "x"]
    assert [hit.node_id for hit in harness.backend.vector_index.similarity(queries(), ["s"], scope=alice)] == ["s"]
