"""The write side on every backend: the incremental indexer and the application hooks.

After every step the vectors must agree with the graph (:func:`assert_in_step`): exactly the nodes
with text have a vector in each profile, made from their current text (content hash) and carrying
their current filter metadata, and a vector query finds exactly those nodes.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import pytest
from langchain_core.embeddings import Embeddings

from brain_graph.core.errors import DatasetError
from brain_graph.core.filters import SeedFilter
from brain_graph.core.security import AccessScope
from brain_graph.embedding.profiles import EmbeddingProfile, ProfileRegistry, profile_text
from brain_graph.indexing.hashing import content_hash
from brain_graph.indexing.hooks import GraphWriter
from brain_graph.indexing.indexer import Indexer
from brain_graph.pipeline.services import SearchServices
from brain_graph.stores.base import ChangeSet, NodeRecord, VectorQuery
from brain_graph.stores.identity import EmbeddingMismatchError
from tests.conformance.conftest import DIM, DOC, EMBEDDER, RUN, WORK, Harness

ITEM = f"conf{RUN}.item"  # node types no other test uses: "every tenant" runs stay cheap on shared servers
PAGE = f"conf{RUN}.page"


class FakeEmbedder(Embeddings):
    """A deterministic 4-dimensional embedder; texts containing a ``fail_on`` word raise."""

    def __init__(self, name: str = EMBEDDER, dimension: int = DIM, fail_on: Sequence[str] = ()) -> None:
        self.name, self.dimension, self.fail_on = name, dimension, tuple(fail_on)
        self.calls = 0

    def _one(self, text: str) -> list[float]:
        digest = hashlib.sha256(text.encode()).digest()
        return [1.0 + digest[i] / 255.0 for i in range(self.dimension)]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.calls += len(texts)
        if any(word in text for text in texts for word in self.fail_on):
            raise RuntimeError("embedder unavailable for this text")
        return [self._one(text) for text in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._one(text)


def registry(embedder: Embeddings | None = None, *, max_chars: int = 1_000) -> ProfileRegistry:
    chosen = embedder or FakeEmbedder()
    dimension = getattr(chosen, "dimension", DIM)
    return ProfileRegistry(
        profiles=(
            EmbeddingProfile(WORK, "work", "e", dimension, (ITEM,), ("title", "summary"), max_chars=max_chars),
            EmbeddingProfile(DOC, "doc", "e", dimension, (PAGE,), ("title", "body"), max_chars=max_chars),
        ),
        embedders={"e": chosen},
    )


def graph(h: Harness) -> tuple[list[NodeRecord], list]:
    nodes = [
        h.node("t1", "a", ITEM, text={"summary": "token refresh"}),
        h.node("t1", "b", ITEM, text={"summary": "billing ledger"}),
        h.node("t1", "c", PAGE, text={"body": "runbook for the token outage"}),
        h.node("t1", "d", ITEM, secured=True, acl=("user:alice",), text={"summary": "postmortem"}),
        h.node("t1", "e", "cdm.person", title="Erin"),  # no profile covers people
        h.node("t1", "ü", ITEM, text={"summary": "non-ascii id"}),
    ]
    edges = [h.edge("t1", "REFERENCES", "a", "c"), h.edge("t1", "DEPENDS_ON", "b", "a")]
    return nodes, edges


def assert_in_step(h: Harness, profiles: ProfileRegistry, tenant: str = "t1") -> None:
    """Every profile's vectors are exactly those of the tenant's nodes with text, current, and found."""
    store = h.backend.index_store
    for profile in profiles.profiles:
        identity = profiles.identity(profile)
        nodes = store.node_page(h.t(tenant), node_types=profile.node_types, after=None, limit=10_000)
        expected = {}
        for node in nodes:
            text = profile_text(node, profile)[0]
            if text:
                expected[node.node_id] = (content_hash(identity, text), node.project_key, node.secured, node.acl)
        states = store.vector_states(h.t(tenant), profile.profile_id)
        assert {s.node_id: (s.content_hash, s.project_key, s.secured, tuple(s.acl)) for s in states} == expected
        query = VectorQuery(profile.profile_id, [1.0] * profile.dimension, identity.embedder_name)
        hits = h.backend.vector_index.query(
            [query], scope=AccessScope(h.t(tenant), all_secured=True), seed_filter=SeedFilter(), top_k=100
        )
        assert sorted(hit.node_id for hit in hits) == sorted(expected)


def loaded(h: Harness) -> tuple[Indexer, ProfileRegistry]:
    """The graph loaded without vectors, and an indexer over it."""
    nodes, edges = graph(h)
    h.backend.load(nodes, edges, [], [], replace=True)
    profiles = registry()
    return Indexer(h.backend, profiles), profiles


def test_first_index_embeds_every_node_with_text_and_a_second_run_nothing(harness: Harness) -> None:
    indexer, profiles = loaded(harness)
    first = indexer.run([harness.t("t1")])
    assert (first.embedded, first.unchanged, first.deleted, first.pending) == (5, 0, 0, 0)
    assert_in_step(harness, profiles)
    embedder = profiles.embedders["e"]
    calls = embedder.calls  # type: ignore[attr-defined]
    second = indexer.run([harness.t("t1")])
    assert (second.embedded, second.unchanged, second.deleted, second.pending) == (0, 5, 0, 0)
    assert embedder.calls == calls  # type: ignore[attr-defined]
    assert_in_step(harness, profiles)
    full = indexer.run([harness.t("t1")], full=True)
    assert (full.embedded, full.unchanged) == (5, 0)


def test_an_updated_node_is_re_embedded_alone_and_a_deleted_one_loses_its_vector(harness: Harness) -> None:
    indexer, profiles = loaded(harness)
    indexer.run([harness.t("t1")])
    writer = GraphWriter(SearchServices(backend=harness.backend, profiles=profiles))
    updated = harness.node("t1", "a", ITEM, text={"summary": "token refresh, rewritten"})
    report = writer.upsert_nodes([updated])
    assert (report.embedded, report.unchanged, report.nodes) == (1, 0, 1)
    assert_in_step(harness, profiles)
    old_vector = FakeEmbedder()._one("title b\nbilling ledger")
    deleted = writer.delete_nodes(harness.t("t1"), ["b", "missing"])
    assert (deleted.nodes, deleted.deleted) == (1, 1)
    scope = AccessScope(harness.t("t1"), all_secured=True)
    query = VectorQuery(WORK, old_vector, EMBEDDER)
    hits = harness.backend.vector_index.query([query], scope=scope, seed_filter=SeedFilter(), top_k=100)
    assert "b" not in {hit.node_id for hit in hits}
    assert harness.backend.vector_index.similarity([query], ["b", "a"], scope=scope)[0].node_id == "a"
    assert harness.backend.graph_store.edges_among(["a", "b"], scope=scope, edge_types=["DEPENDS_ON"]) == []
    assert_in_step(harness, profiles)
    again = indexer.run([harness.t("t1")])
    assert (again.embedded, again.deleted) == (0, 0)


def test_reconciliation_deletes_vectors_of_nodes_that_lost_their_text_or_type(harness: Harness) -> None:
    indexer, profiles = loaded(harness)
    indexer.run([harness.t("t1")])
    retyped = harness.node("t1", "a", "cdm.person", text={"summary": "token refresh"})
    emptied = harness.node("t1", "c", PAGE, title="", text={})
    harness.backend.apply(ChangeSet(upsert_nodes=[retyped, emptied]))  # written behind the indexer's back
    report = indexer.run([harness.t("t1")])
    assert (report.deleted, report.embedded, report.unchanged) == (2, 0, 3)
    assert_in_step(harness, profiles)


def test_a_changed_acl_updates_the_vector_metadata(harness: Harness) -> None:
    indexer, profiles = loaded(harness)
    indexer.run([harness.t("t1")])
    writer = GraphWriter(SearchServices(backend=harness.backend, profiles=profiles))
    secured = harness.node("t1", "a", ITEM, secured=True, acl=("group:sre",), text={"summary": "token refresh"})
    assert writer.upsert_nodes([secured]).embedded == 1
    assert_in_step(harness, profiles)
    public = AccessScope(harness.t("t1"))
    query = VectorQuery(WORK, [1.0] * DIM, EMBEDDER)
    visible = harness.backend.vector_index.query([query], scope=public, seed_filter=SeedFilter(), top_k=100)
    assert "a" not in {hit.node_id for hit in visible}


def test_embedder_failure_leaves_the_node_pending_until_the_next_run(harness: Harness) -> None:
    nodes, edges = graph(harness)
    harness.backend.load(nodes, edges, [], [], replace=True)
    failing = registry(FakeEmbedder(fail_on=("billing",)))
    report = Indexer(harness.backend, failing).run([harness.t("t1")])
    assert (report.embedded, report.pending) == (4, 1)
    states = harness.backend.index_store.vector_states(harness.t("t1"), WORK)
    assert "b" not in {s.node_id for s in states}
    assert harness.backend.index_store.get_records(harness.t("t1"), ["b"])[0].text == {"summary": "billing ledger"}
    healthy = registry()
    recovered = Indexer(harness.backend, healthy).run([harness.t("t1")])
    assert (recovered.embedded, recovered.pending, recovered.unchanged) == (1, 0, 4)
    assert_in_step(harness, healthy)


def test_a_hook_whose_embedder_fails_writes_the_node_and_drops_its_stale_vector(harness: Harness) -> None:
    indexer, profiles = loaded(harness)
    indexer.run([harness.t("t1")])
    failing = registry(FakeEmbedder(fail_on=("outage",)))
    writer = GraphWriter(SearchServices(backend=harness.backend, profiles=failing))
    changed = harness.node("t1", "a", ITEM, text={"summary": "token outage"})
    report = writer.upsert_nodes([changed])
    assert (report.embedded, report.pending, report.nodes) == (0, 1, 1)
    assert harness.backend.index_store.get_records(harness.t("t1"), ["a"])[0].text == {"summary": "token outage"}
    assert "a" not in {s.node_id for s in harness.backend.index_store.vector_states(harness.t("t1"), WORK)}
    assert Indexer(harness.backend, profiles).run([harness.t("t1")]).embedded == 1
    assert_in_step(harness, profiles)


def test_another_embedder_identity_or_dimension_is_refused_naming_both(harness: Harness) -> None:
    indexer, profiles = loaded(harness)
    indexer.run([harness.t("t1")])
    for other in (FakeEmbedder(name="other-model@1234"), FakeEmbedder(dimension=DIM + 1)):
        with pytest.raises(EmbeddingMismatchError) as refused:
            Indexer(harness.backend, registry(other)).run([harness.t("t1")])
        assert EMBEDDER in str(refused.value)
        assert other.name in str(refused.value)
        assert "--full" in str(refused.value)
        writer = GraphWriter(SearchServices(backend=harness.backend, profiles=registry(other)))
        with pytest.raises(EmbeddingMismatchError):
            writer.upsert_nodes([harness.node("t1", "a", ITEM, text={"summary": "changed"})])
    assert harness.backend.index_store.get_records(harness.t("t1"), ["a"])[0].text == {"summary": "token refresh"}
    assert_in_step(harness, profiles)


def test_over_long_texts_are_truncated_and_counted(harness: Harness) -> None:
    nodes, edges = graph(harness)
    harness.backend.load(nodes, edges, [], [], replace=True)
    short = registry(max_chars=12)
    report = Indexer(harness.backend, short).run([harness.t("t1")])
    assert report.truncated == 5  # every "title x\n..." text is longer than 12 characters
    assert_in_step(harness, short)


def test_a_hook_batch_that_fails_midway_changes_nothing(harness: Harness) -> None:
    indexer, profiles = loaded(harness)
    indexer.run([harness.t("t1")])
    before_states = harness.backend.index_store.vector_states(harness.t("t1"), WORK)
    before_nodes = harness.backend.index_store.get_records(harness.t("t1"), ["a", "b", "new"])
    writer = GraphWriter(SearchServices(backend=harness.backend, profiles=profiles))
    batch = [
        harness.node("t1", "a", ITEM, text={"summary": "changed a"}),
        harness.node("t1", "new", ITEM, text={"summary": "brand new"}),
    ]
    with pytest.raises(DatasetError, match="missing"):
        writer.upsert_nodes(batch, [harness.edge("t1", "REFERENCES", "new", "missing")])
    assert harness.backend.index_store.vector_states(harness.t("t1"), WORK) == before_states
    assert harness.backend.index_store.get_records(harness.t("t1"), ["a", "b", "new"]) == before_nodes
    assert_in_step(harness, profiles)


def test_hooks_create_a_tenant_and_accept_dataset_dicts(harness: Harness) -> None:
    profiles = registry()
    writer = GraphWriter(SearchServices(backend=harness.backend, profiles=profiles))
    tenant = harness.t("fresh")
    report = writer.upsert_nodes(
        [
            {"tenantId": tenant, "id": "x", "nodeType": ITEM, "title": "x", "text": {"summary": "hello"}},
            {"tenantId": tenant, "id": "y", "nodeType": PAGE, "title": "y"},
        ],
        [{"tenantId": tenant, "edgeType": "REFERENCES", "fromNodeId": "x", "toNodeId": "y"}],
    )
    assert (report.nodes, report.edges, report.embedded) == (2, 1, 2)
    assert tenant in harness.backend.index_store.tenants()
    assert_in_step(harness, profiles, "fresh")
    with pytest.raises(DatasetError, match="nodeType"):
        writer.upsert_nodes([{"tenantId": tenant, "id": "z"}])


def test_vectors_take_their_filters_from_the_graph_whatever_a_writer_computed(harness: Harness) -> None:
    indexer, profiles = loaded(harness)
    indexer.run([harness.t("t1")])
    stale = harness.vector(harness.node("t1", "d", ITEM), [1.0] * DIM)  # public metadata for the secured "d"
    orphan = harness.vector(harness.node("t1", "gone", ITEM), [1.0] * DIM)
    harness.backend.apply(ChangeSet(upsert_vectors=[stale, orphan], profiles=[profiles.identity(profiles.get(WORK))]))
    states = {s.node_id: s for s in harness.backend.index_store.vector_states(harness.t("t1"), WORK)}
    assert (states["d"].secured, tuple(states["d"].acl)) == (True, ("user:alice",))
    assert "gone" not in states
    public = harness.backend.vector_index.query(
        [VectorQuery(WORK, [1.0] * DIM, EMBEDDER)],
        scope=AccessScope(harness.t("t1")),
        seed_filter=SeedFilter(),
        top_k=100,
    )
    assert "d" not in {hit.node_id for hit in public}
