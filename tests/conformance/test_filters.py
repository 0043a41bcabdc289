"""Seed-filter conformance: node types, namespaces, tags and recency narrow vector and lexical
retrieval exactly as :meth:`~brain_graph.core.filters.SeedFilter.matches` says, before the top k is
taken, together with project, tenant and ACL; ``untimed`` reports a recency cutoff skipping nodes
without an update time; the facets a node is written with are the facets its vector is stored with."""

from __future__ import annotations

from collections.abc import Sequence

from brain_graph.core import bm25
from brain_graph.core.filters import NodeFacets, SeedFilter, parse_timestamp
from brain_graph.core.security import Principal
from brain_graph.stores.base import LexicalQuery, NodeRecord, VectorQuery, node_facets
from tests.conformance.conftest import DOC, EMBEDDER, WORK, Harness

Q = [1.0, 0.0, 0.0, 0.0]
JAN = parse_timestamp("2026-01-01")
FEB = parse_timestamp("2026-02-01")
MAR = parse_timestamp("2026-03-01T12:30:00.000001Z")


def graph(harness: Harness, tenant: str = "t1") -> list[NodeRecord]:
    """Nodes of every facet kind, each with a vector a little further from Q than the last."""
    return [
        harness.node(tenant, "w-jan", tags=("Payments", "sev1"), updated_at=JAN, namespace="Billing"),
        harness.node(tenant, "w-feb", tags=("payments",), updated_at=FEB, properties={"path": "src/billing/x.py"}),
        harness.node(tenant, "w-mar", tags=("auth",), updated_at=MAR, properties={"path": "services/auth/y.py"}),
        harness.node(tenant, "w-untimed", tags=("payments",), properties={"path": "docs/z.md"}),
        harness.node(tenant, "d-feb", "cdm.doc", tags=("Payments",), updated_at=FEB, namespace="docs"),
        harness.node(tenant, "c-top", "code.file", title="top.py", updated_at=MAR),
        harness.node(tenant, "s-jan", secured=True, acl=("user:alice",), tags=("payments",), updated_at=JAN),
        harness.node(tenant, "s-untimed", secured=True, acl=("user:alice",), tags=("payments",)),
    ]


def load(harness: Harness, nodes: Sequence[NodeRecord]) -> None:
    vectors = [
        harness.vector(node, [1.0, 0.05 * index, 0.0, 0.0], lexical=bm25.lexical_document(node.node_id, "payment"))
        for index, node in enumerate(nodes)
    ]
    harness.load(nodes, vectors=vectors)


def found(harness: Harness, seed_filter: SeedFilter, *, logical: str = "t1", identities=None, top_k: int = 20):
    scope = harness.scope(logical, identities)
    return [hit[1] for hit in harness.query(scope, Q, seed_filter=seed_filter, top_k=top_k)]


def lexical_found(harness: Harness, seed_filter: SeedFilter, *, identities=None, top_k: int = 20) -> list[str]:
    hits = harness.backend.vector_index.lexical(
        [LexicalQuery(WORK, bm25.query_terms("payment"))],
        scope=harness.scope("t1", identities),
        seed_filter=seed_filter,
        top_k=top_k,
    )
    return sorted(hit.node_id for hit in hits)


def reference(nodes: Sequence[NodeRecord], seed_filter: SeedFilter, *, secured_visible: bool = False) -> list[str]:
    """The node ids the filter admits, in the vectors' order (the reference rule)."""
    return [
        node.node_id
        for node in nodes
        if seed_filter.matches(node.project_key, node_facets(node)) and (secured_visible or not node.secured)
    ]


FILTERS = {
    "none": SeedFilter(),
    "node type": SeedFilter(node_types=("cdm.doc",)),
    "two node types": SeedFilter(node_types=("cdm.doc", "code.file")),
    "namespace field": SeedFilter(namespaces=("billing",)),
    "namespace of a path": SeedFilter(namespaces=("auth", "docs")),
    "tags": SeedFilter(tags=("payments",)),
    "tags any": SeedFilter(tags=("auth", "sev1")),
    "updated after": SeedFilter(updated_after=FEB),
    "updated at the cutoff": SeedFilter(updated_after=MAR),
    "and": SeedFilter(tags=("payments",), updated_after=FEB, node_types=("cdm.work_item",)),
    "with project": SeedFilter(project_key="P", node_types=("cdm.work_item",), tags=("auth",)),
    "other project": SeedFilter(project_key="Q", tags=("payments",)),
    "unknown tag": SeedFilter(tags=("nothing",)),
}


def test_facets_are_normalised_and_derived_from_paths() -> None:
    node = NodeRecord(
        "t", "n", "cdm.doc", None, None, None, tags=("Ops", "ops", "ÉTÉ"), properties={"path": "src/Api/x"}
    )
    assert node_facets(node) == NodeFacets("cdm.doc", "api", ("ops", "été"), None)
    code = NodeRecord("t", "c", "code.file", None, "docs/design/cache.md", None, updated_at=JAN)
    assert node_facets(code) == NodeFacets("code.file", "docs", (), JAN)
    top_level = NodeRecord("t", "c", "code.file", None, "README.md", None)
    assert node_facets(top_level).namespace is None
    assert node_facets(NodeRecord("t", "d", "cdm.doc", None, "a/b", None)).namespace is None  # a doc's title is no path


def test_each_filter_admits_exactly_what_the_rule_admits(harness: Harness) -> None:
    nodes = graph(harness)
    load(harness, nodes)
    for name, seed_filter in FILTERS.items():
        assert found(harness, seed_filter) == reference(nodes, seed_filter), name
        with_alice = found(harness, seed_filter, identities=Principal("alice").identities)
        assert with_alice == reference(nodes, seed_filter, secured_visible=True), name


def test_lexical_retrieval_applies_the_same_filters(harness: Harness) -> None:
    nodes = graph(harness)
    load(harness, nodes)
    for name, seed_filter in FILTERS.items():
        assert lexical_found(harness, seed_filter) == sorted(reference(nodes, seed_filter)), name


def test_the_filter_applies_before_the_top_k(harness: Harness) -> None:
    better = [harness.node("t1", f"near{i:02d}", tags=("other",)) for i in range(30)]
    wanted = [harness.node("t1", f"far{i}", tags=("wanted",)) for i in range(3)]
    vectors = [harness.vector(node, [1.0, 0.001 * i, 0.0, 0.0]) for i, node in enumerate(better)]
    vectors += [harness.vector(node, [0.0, 1.0, float(i), 0.0]) for i, node in enumerate(wanted)]
    harness.load([*better, *wanted], vectors=vectors)
    assert found(harness, SeedFilter(tags=("wanted",)), top_k=3) == ["far0", "far1", "far2"]
    assert found(harness, SeedFilter(tags=("wanted",)), top_k=2) == ["far0", "far1"]


def test_filters_never_cross_tenants(harness: Harness) -> None:
    load(harness, graph(harness, "t1"))
    other = [harness.node("t2", "x", tags=("payments",), updated_at=MAR, namespace="billing")]
    load(harness, other)
    assert found(harness, SeedFilter(tags=("payments",)), logical="t2") == ["x"]
    assert "x" not in found(harness, SeedFilter(tags=("payments",)))


def test_untimed_reports_skipped_nodes_without_an_update_time(harness: Harness) -> None:
    nodes = graph(harness)
    load(harness, nodes)
    index = harness.backend.vector_index
    public = harness.scope("t1")
    alice = harness.scope("t1", Principal("alice").identities)

    def untimed(seed_filter: SeedFilter, scope=public, profiles=(WORK,)) -> bool:
        return index.untimed(list(profiles), scope=scope, seed_filter=seed_filter)

    assert untimed(SeedFilter(updated_after=FEB))  # w-untimed
    assert not untimed(SeedFilter())  # no recency part
    assert not untimed(SeedFilter(tags=("payments",)))
    assert not untimed(SeedFilter(updated_after=FEB, tags=("auth",)))  # the untimed ones fail the tags
    assert not untimed(SeedFilter(updated_after=FEB, node_types=("cdm.doc",)))
    assert untimed(SeedFilter(updated_after=FEB, namespaces=("docs",)))  # w-untimed's path is docs/z.md
    assert not untimed(SeedFilter(updated_after=FEB), profiles=(DOC,))  # no vectors there
    assert not untimed(SeedFilter(updated_after=FEB), scope=harness.scope("t2"))
    secured_only = SeedFilter(updated_after=FEB, tags=("payments",), project_key="P", node_types=("cdm.work_item",))
    assert untimed(secured_only)
    harness.load(
        [node for node in nodes if node.node_id != "w-untimed"],
        vectors=[harness.vector(node, Q) for node in nodes if node.node_id != "w-untimed"],
    )
    assert not untimed(SeedFilter(updated_after=FEB))  # only s-untimed left, secured
    assert untimed(SeedFilter(updated_after=FEB), scope=alice)


def test_seeds_apply_the_filter_and_report_untimed(harness: Harness) -> None:
    nodes = graph(harness)
    load(harness, nodes)
    seeds = harness.backend.search_reads.seeds(
        [VectorQuery(WORK, Q, EMBEDDER)],
        scope=harness.scope("t1"),
        seed_filter=SeedFilter(updated_after=FEB),
        top_k=10,
        link_types=[],
        max_degree=50,
        lexical=[LexicalQuery(WORK, bm25.query_terms("payment"))],
    )
    assert [hit.node_id for hit in seeds.hits] == reference(nodes, SeedFilter(updated_after=FEB))
    assert sorted(hit.node_id for hit in seeds.lexical) == sorted(reference(nodes, SeedFilter(updated_after=FEB)))
    assert seeds.untimed
    plain = harness.backend.search_reads.seeds(
        [VectorQuery(WORK, Q, EMBEDDER)],
        scope=harness.scope("t1"),
        seed_filter=SeedFilter(tags=("auth",)),
        top_k=10,
        link_types=[],
        max_degree=50,
    )
    assert [hit.node_id for hit in plain.hits] == ["w-mar"]
    assert not plain.untimed


def test_node_facets_round_trip_and_vectors_carry_them(harness: Harness) -> None:
    nodes = graph(harness)
    load(harness, nodes)
    store = harness.backend.index_store
    stored = {node.node_id: node for node in store.get_records(harness.t("t1"), [node.node_id for node in nodes])}
    for node in nodes:
        got = stored[node.node_id]
        assert (got.namespace, got.tags, got.updated_at) == (node.namespace, node.tags, node.updated_at)
    states = {state.node_id: state for state in store.vector_states(harness.t("t1"), WORK)}
    assert {node_id: state.facets for node_id, state in states.items()} == {
        node.node_id: node_facets(node) for node in nodes
    }
