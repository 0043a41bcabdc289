"""The write side's store operations on every backend: the reads of :class:`IndexStore` and
:meth:`StorageBackend.apply` (all or nothing; checked before anything is written)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np
import pytest

from brain_graph.core.errors import ConfigurationError, DatasetError
from brain_graph.stores.base import (
    ChangeSet,
    EdgeRecord,
    NodeKey,
    NodeRecord,
    ProfileIndexInfo,
    VectorKey,
    VectorQuery,
    VectorRecord,
    VectorState,
    node_facets,
)
from brain_graph.stores.identity import EmbeddingMismatchError
from brain_graph.stores.neo4j_weaviate.weaviate import states as weaviate_states
from tests.conformance.conftest import DIM, DOC, EMBEDDER, PROFILES, WORK, Harness

ITEM, PAGE = "cdm.work_item", "cdm.page"
TYPES = ["REFERENCES", "DEPENDS_ON"]
# Code-point order differs from UTF-16 order past U+FFFF (U+1F600 sorts after U+FF5E, not before) and from
# case-insensitive or locale orders.
ODD_IDS = ["b", "Z", "a b", "é", "ü", "中", "～", "😀", "a", "z"]


def hashed_row(node: NodeRecord, values: Sequence[float], content_hash: str, profile: str = WORK) -> VectorRecord:
    """A node's vector as the indexer writes it: a float32 numpy row with the hash of its text."""
    row = np.asarray(values, dtype=np.float32)
    return VectorRecord(
        node.tenant_id, node.node_id, profile, node.project_key, node.secured, node.acl, row, content_hash
    )


def ids(records: Sequence[NodeRecord]) -> list[str]:
    return [record.node_id for record in records]


def states(h: Harness, tenant: str, profile: str = WORK) -> dict[str, VectorState]:
    return {state.node_id: state for state in h.backend.index_store.vector_states(h.t(tenant), profile)}


def found(h: Harness, tenant: str, vector: Sequence[float], profile: str = WORK) -> list[str]:
    """The node ids a query of every visible vector finds, best first."""
    return [hit[1] for hit in h.query(h.scope(tenant, all_secured=True), vector, profiles=(profile,), top_k=100)]


def base(h: Harness) -> tuple[list[NodeRecord], list[EdgeRecord], list[VectorRecord]]:
    """Three nodes with edges a->b->c, vectors in WORK (hashed) and DOC (b only)."""
    nodes = [
        h.node("t1", "a", text={"summary": "alpha"}, properties={"k": 1}),
        h.node("t1", "b", secured=True, acl=("user:alice",), text={"summary": "beta"}),
        h.node("t1", "c", PAGE, url="https://example.com/c", text={"body": "gamma"}),
    ]
    edges = [h.edge("t1", "REFERENCES", "a", "b"), h.edge("t1", "DEPENDS_ON", "b", "c")]
    vectors = [
        hashed_row(nodes[0], [1.0, 0.0, 0.0, 0.0], "hash-a"),
        hashed_row(nodes[1], [0.0, 1.0, 0.0, 0.0], "hash-b"),
        h.vector(nodes[2], [0.0, 0.0, 1.0, 0.0]),  # no hash: written before hashes existed
        hashed_row(nodes[1], [0.0, 1.0, 0.0, 0.0], "doc-b", DOC),
    ]
    h.load(nodes, edges, vectors)
    return nodes, edges, vectors


def everything(h: Harness, tenant: str = "t1") -> tuple[object, ...]:
    """All the write side and the searches can tell about a tenant's data."""
    store = h.backend.index_store
    scope = h.scope(tenant, all_secured=True)
    every = ["a", "b", "c", "d", "x", "new", "missing"]
    return (
        store.get_records(h.t(tenant), every),
        states(h, tenant),
        states(h, tenant, DOC),
        h.backend.graph_store.edges_among(every, scope=scope, edge_types=TYPES),
        found(h, tenant, [1.0, 1.0, 1.0, 1.0]),
        h.backend.admin.count(h.t(tenant)),
    )


# -- IndexStore ---------------------------------------------------------------------------------


def test_tenants_are_those_holding_nodes(harness: Harness) -> None:
    harness.load([harness.node("t1", "a"), harness.node("t2", "a")])
    harness.t("empty")
    tenants = harness.backend.index_store.tenants()
    assert {harness.t("t1"), harness.t("t2")} <= set(tenants)
    assert harness.t("empty") not in tenants
    assert tenants == sorted(tenants)


def test_node_pages_follow_code_point_order_of_the_current_data_only(harness: Harness) -> None:
    store = harness.backend.index_store
    old = [harness.node("t1", "gone", text={"body": "old"})]
    harness.load(old)
    nodes = [
        harness.node("t1", node_id, text={"summary": f"text {node_id}"}, properties={"n": i})
        for i, node_id in enumerate(ODD_IDS)
    ]
    pages = [harness.node("t1", f"p{i}", PAGE) for i in range(3)]
    harness.load([*nodes, *pages, harness.node("t2", "a"), harness.node("t2", "c")])  # replaces "gone"

    collected: list[NodeRecord] = []
    after: str | None = None
    while page := store.node_page(harness.t("t1"), node_types=[ITEM], after=after, limit=3):
        assert len(page) <= 3
        collected += page
        after = page[-1].node_id
    assert ids(collected) == sorted(ODD_IDS)
    assert sorted(collected, key=lambda n: n.node_id) == sorted(nodes, key=lambda n: n.node_id)  # full records

    both = store.node_page(harness.t("t1"), node_types=[PAGE, ITEM], after="p", limit=100)
    assert ids(both) == sorted([i for i in ODD_IDS if i > "p"] + ["p0", "p1", "p2"])
    assert ids(store.node_page(harness.t("t1"), node_types=[PAGE], after=None, limit=2)) == ["p0", "p1"]
    assert store.node_page(harness.t("t1"), node_types=["cdm.other"], after=None, limit=10) == []
    assert store.node_page(harness.t("nobody"), node_types=[ITEM], after=None, limit=10) == []
    assert store.count_nodes(harness.t("t1"), [ITEM]) == len(ODD_IDS)
    assert store.count_nodes(harness.t("t1"), [ITEM, PAGE]) == len(ODD_IDS) + 3
    assert store.count_nodes(harness.t("nobody"), [ITEM]) == 0


def test_get_records_returns_full_records_sorted_by_id(harness: Harness) -> None:
    nodes, _, _ = base(harness)
    records = harness.backend.index_store.get_records(harness.t("t1"), ["c", "missing", "a", "b"])
    assert records == sorted(nodes, key=lambda n: n.node_id)
    assert records[0].text == {"summary": "alpha"}
    assert harness.backend.index_store.get_records(harness.t("t2"), ["a"]) == []
    assert harness.backend.index_store.get_records(harness.t("t1"), []) == []


def test_vector_states_carry_hashes_and_metadata_without_vectors(harness: Harness) -> None:
    nodes, _, _ = base(harness)
    store = harness.backend.index_store
    work = store.vector_states(harness.t("t1"), WORK)
    assert work == [
        VectorState("a", "hash-a", "P", False, (), lexical=False),
        VectorState("b", "hash-b", "P", True, ("user:alice",), lexical=False),
        VectorState("c", "", "P", False, (), lexical=False, facets=node_facets(nodes[2])),  # h.vector gives facets
    ]
    assert store.vector_states(harness.t("t1"), DOC) == [
        VectorState("b", "doc-b", "P", True, ("user:alice",), lexical=False)
    ]
    assert store.vector_states(harness.t("t1"), WORK, ["c", "missing", "a"]) == [work[0], work[2]]
    assert store.vector_states(harness.t("t1"), WORK, []) == []
    assert store.vector_states(harness.t("t2"), WORK) == []
    assert store.vector_states(harness.t("t1"), "no-such-profile") == []


def test_vector_states_page_through_many_vectors(harness: Harness, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(weaviate_states, "STATE_PAGE", 500)  # several pages on Weaviate
    nodes = [harness.node("t1", f"n{i:04d}") for i in range(1200)]
    harness.load(nodes, vectors=[hashed_row(n, [1.0, i, 0.0, 0.0], f"h{i}") for i, n in enumerate(nodes)])
    listed = harness.backend.index_store.vector_states(harness.t("t1"), WORK)
    assert [s.node_id for s in listed] == ids(nodes)
    assert [s.content_hash for s in listed] == [f"h{i}" for i in range(1200)]


def test_recorded_profiles_name_the_embedder_of_each_profile(harness: Harness) -> None:
    base(harness)
    recorded = harness.backend.index_store.recorded_profiles()
    assert recorded[WORK] == ProfileIndexInfo(WORK, EMBEDDER, DIM)
    assert recorded[DOC] == ProfileIndexInfo(DOC, EMBEDDER, DIM)


# -- apply --------------------------------------------------------------------------------------


def test_apply_upserts_a_node_its_edge_and_its_vector(harness: Harness) -> None:
    base(harness)
    new = harness.node("t1", "new", text={"summary": "fresh"})
    vector = hashed_row(new, [0.0, 0.0, 0.0, 1.0], "hash-new")
    harness.backend.apply(
        ChangeSet(
            upsert_nodes=[new],
            upsert_edges=[harness.edge("t1", "REFERENCES", "new", "a", weight=2)],
            upsert_vectors=[vector],
            profiles=PROFILES,
        )
    )
    scope = harness.scope("t1", all_secured=True)
    assert harness.backend.index_store.get_records(harness.t("t1"), ["new"]) == [new]
    assert found(harness, "t1", [0.0, 0.0, 0.0, 1.0])[0] == "new"
    assert states(harness, "t1")["new"] == VectorState("new", "hash-new", "P", False, (), lexical=False)
    edges = harness.backend.graph_store.edges_among(["new", "a"], scope=scope, edge_types=TYPES)
    assert edges == [EdgeRecord(harness.t("t1"), "REFERENCES", "new", "a", {"weight": 2})]
    assert harness.backend.admin.count(harness.t("t1")).nodes == 4


def test_apply_replaces_a_node_s_fields_as_a_whole_and_its_vector(harness: Harness) -> None:
    nodes, _, _ = base(harness)
    changed = harness.node("t1", "a", PAGE, project="Q", title="renamed", text={"body": "new"}, properties={})
    vector = hashed_row(changed, [0.5, 0.5, 0.0, 0.0], "hash-a2")
    harness.backend.apply(ChangeSet(upsert_nodes=[changed], upsert_vectors=[vector], profiles=PROFILES))
    assert harness.backend.index_store.get_records(harness.t("t1"), ["a", "b"]) == [changed, nodes[1]]
    assert states(harness, "t1")["a"] == VectorState("a", "hash-a2", "Q", False, (), lexical=False)
    scope = harness.scope("t1", all_secured=True)
    assert [hit[1] for hit in harness.query(scope, [1.0, 0.0, 0.0, 0.0], project_key="Q")] == ["a"]
    edges = harness.backend.graph_store.edges_among(["a", "b"], scope=scope, edge_types=TYPES)
    assert len(edges) == 1  # a node upsert keeps its edges


def test_deleting_a_node_removes_its_edges_and_its_vectors_in_every_profile(harness: Harness) -> None:
    base(harness)
    harness.backend.apply(ChangeSet(delete_nodes=[NodeKey(harness.t("t1"), "b")]))  # no profiles named
    scope = harness.scope("t1", all_secured=True)
    assert ids(harness.backend.index_store.get_records(harness.t("t1"), ["a", "b", "c"])) == ["a", "c"]
    assert harness.backend.graph_store.edges_among(["a", "b", "c"], scope=scope, edge_types=TYPES) == []
    assert "b" not in states(harness, "t1")
    assert states(harness, "t1", DOC) == {}
    assert "b" not in found(harness, "t1", [0.0, 1.0, 0.0, 0.0])
    assert found(harness, "t1", [0.0, 1.0, 0.0, 0.0], DOC) == []
    queries = [VectorQuery(p, [0.0, 1.0, 0.0, 0.0], EMBEDDER) for p in (WORK, DOC)]
    similar = harness.backend.vector_index.similarity(queries, ["a", "b"], scope=scope)
    assert [(hit.profile_id, hit.node_id) for hit in similar] == [(WORK, "a")]
    harness.backend.apply(ChangeSet(delete_nodes=[NodeKey(harness.t("t1"), "b")]))  # deleting again: no-op
    counts = harness.backend.admin.count(harness.t("t1"))
    assert (counts.nodes, counts.edges, dict(counts.vectors)) == (2, 0, {WORK: 2})


def test_deleting_edges_and_vectors_leaves_the_rest(harness: Harness) -> None:
    base(harness)
    harness.backend.apply(
        ChangeSet(
            delete_edges=[harness.edge("t1", "REFERENCES", "a", "b"), harness.edge("t1", "REFERENCES", "b", "a")],
            delete_vectors=[VectorKey(harness.t("t1"), WORK, "b"), VectorKey(harness.t("t1"), WORK, "missing")],
        )
    )
    scope = harness.scope("t1", all_secured=True)
    edges = harness.backend.graph_store.edges_among(["a", "b", "c"], scope=scope, edge_types=TYPES)
    assert [(e.edge_type, e.from_node_id, e.to_node_id) for e in edges] == [("DEPENDS_ON", "b", "c")]
    assert sorted(states(harness, "t1")) == ["a", "c"]
    assert sorted(states(harness, "t1", DOC)) == ["b"]
    assert ids(harness.backend.index_store.get_records(harness.t("t1"), ["a", "b", "c"])) == ["a", "b", "c"]


def test_a_vector_both_deleted_and_upserted_is_written_anew(harness: Harness) -> None:
    """Deletes come before upserts: the vector is stored once, as upserted, and searches find it
    (the same values as stored, and new ones)."""
    nodes, _, _ = base(harness)
    tenant = harness.t("t1")
    for values, content_hash in (([1.0, 0.0, 0.0, 0.0], "hash-a"), ([0.0, 0.0, 0.0, 1.0], "hash-a2")):
        harness.backend.apply(
            ChangeSet(
                delete_vectors=[VectorKey(tenant, WORK, "a")],
                upsert_vectors=[hashed_row(nodes[0], values, content_hash)],
                profiles=PROFILES,
            )
        )
        assert states(harness, "t1")["a"] == VectorState("a", content_hash, "P", False, (), lexical=False)
        assert found(harness, "t1", values)[0] == "a"
        assert harness.backend.admin.count(tenant).vectors[WORK] == 3


def test_an_edge_to_a_missing_node_refuses_the_whole_change(harness: Harness) -> None:
    base(harness)
    before = everything(harness)
    new = harness.node("t1", "new", text={"summary": "fresh"})
    change = ChangeSet(
        upsert_nodes=[harness.node("t1", "a", title="changed"), new],
        upsert_edges=[harness.edge("t1", "REFERENCES", "new", "a"), harness.edge("t1", "REFERENCES", "new", "missing")],
        delete_edges=[harness.edge("t1", "DEPENDS_ON", "b", "c")],
        delete_nodes=[NodeKey(harness.t("t1"), "c")],
        upsert_vectors=[harness.vector(new, [0.0, 0.0, 0.0, 1.0]), harness.vector(new, [0.0, 0.0, 0.0, 1.0], DOC)],
        delete_vectors=[VectorKey(harness.t("t1"), WORK, "a")],
        profiles=PROFILES,
    )
    with pytest.raises(DatasetError, match="missing"):
        harness.backend.apply(change)
    assert everything(harness) == before


def test_another_embedder_identity_is_refused_naming_both_and_writes_nothing(harness: Harness) -> None:
    base(harness)
    before = everything(harness)
    new = harness.node("t1", "new")
    for other in (ProfileIndexInfo(WORK, "other-embedder", DIM), ProfileIndexInfo(WORK, EMBEDDER, DIM + 1)):
        vector = harness.vector(new, [1.0] * other.dimension)
        change = ChangeSet(upsert_nodes=[new], upsert_vectors=[vector], profiles=[other, PROFILES[1]])
        with pytest.raises(EmbeddingMismatchError) as refused:
            harness.backend.apply(change)
        assert isinstance(refused.value, ConfigurationError)
        assert EMBEDDER in str(refused.value)
        assert other.embedder_name in str(refused.value)
        assert everything(harness) == before
    assert harness.backend.index_store.recorded_profiles()[WORK] == ProfileIndexInfo(WORK, EMBEDDER, DIM)


def test_a_node_both_upserted_and_deleted_is_refused(harness: Harness) -> None:
    base(harness)
    before = everything(harness)
    change = ChangeSet(upsert_nodes=[harness.node("t1", "a", title="x")], delete_nodes=[NodeKey(harness.t("t1"), "a")])
    with pytest.raises(DatasetError, match="both"):
        harness.backend.apply(change)
    invalid = ChangeSet(upsert_nodes=[harness.node("t1", " a")])
    with pytest.raises(DatasetError):
        harness.backend.apply(invalid)
    assert everything(harness) == before


def test_apply_on_a_tenant_without_data_creates_it(harness: Harness) -> None:
    base(harness)
    tenant = harness.t("fresh")
    x, y = harness.node("fresh", "x", text={"summary": "x"}), harness.node("fresh", "y", PAGE)
    harness.backend.apply(
        ChangeSet(
            upsert_nodes=[x, y],
            upsert_edges=[harness.edge("fresh", "REFERENCES", "x", "y")],
            upsert_vectors=[hashed_row(x, [1.0, 0.0, 0.0, 0.0], "hx")],
            delete_nodes=[NodeKey(harness.t("nothing"), "z")],  # a tenant without data: nothing to delete
            delete_vectors=[VectorKey(harness.t("nothing"), WORK, "z")],
            profiles=PROFILES,
        )
    )
    store = harness.backend.index_store
    assert tenant in store.tenants()
    assert harness.t("nothing") not in store.tenants()
    assert store.get_records(tenant, ["x", "y"]) == [x, y]
    assert found(harness, "fresh", [1.0, 0.0, 0.0, 0.0]) == ["x"]
    assert states(harness, "fresh") == {"x": VectorState("x", "hx", "P", False, (), lexical=False)}
    counts = harness.backend.admin.count(tenant)
    assert (counts.nodes, counts.edges) == (2, 1)
    assert ids(store.get_records(harness.t("t1"), ["a", "b", "c"])) == ["a", "b", "c"]  # other tenant untouched


def test_a_new_profile_is_recorded_by_its_first_change(harness: Harness) -> None:
    base(harness)
    profile = ProfileIndexInfo(f"{WORK}-extra", "extra-embedder", 3)
    node = harness.node("t1", "a")
    vector = replace(hashed_row(node, [1.0, 2.0, 3.0], "e"), profile_id=profile.profile_id)
    try:
        harness.backend.apply(ChangeSet(upsert_vectors=[vector], profiles=[profile]))
        assert harness.backend.index_store.recorded_profiles()[profile.profile_id] == profile
        listed = harness.backend.index_store.vector_states(harness.t("t1"), profile.profile_id)
        assert listed == [VectorState("a", "e", "P", False, (), lexical=False)]
    finally:
        harness.backend.admin.drop_profiles([profile.profile_id])


def test_an_empty_change_is_a_no_op(harness: Harness) -> None:
    base(harness)
    before, trips = everything(harness), harness.backend.admin.round_trips()
    harness.backend.apply(ChangeSet())
    harness.backend.apply(ChangeSet(profiles=()))
    assert harness.backend.admin.round_trips() == trips
    assert everything(harness) == before
