"""Lexical (BM25) search on the real Neo4j + Weaviate servers: the scores are
:func:`brain_graph.core.bm25.score` over the statistics of the tenant's documents in the profile (another
tenant's change nothing, filters do not change them), objects without a document are no documents,
a collection written before lexical documents gets the properties on its next write, and a lexical
search's round trips do not depend on ``top_k``."""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import pytest

from brain_graph.core import bm25
from brain_graph.core.filters import SeedFilter
from brain_graph.core.security import AccessScope
from brain_graph.stores.base import (
    ChangeSet,
    LexicalQuery,
    NodeRecord,
    ProfileIndexInfo,
    VectorHit,
    VectorKey,
    VectorQuery,
    VectorRecord,
)
from brain_graph.stores.neo4j_weaviate.backend import Neo4jWeaviateBackend
from brain_graph.stores.neo4j_weaviate.weaviate import schema as weaviate_schema
from brain_graph.stores.neo4j_weaviate.weaviate import writes as weaviate_writes
from brain_graph.stores.neo4j_weaviate.weaviate.naming import collection_name
from tests.integration.servers import connect, unique_prefix

pytestmark = pytest.mark.integration

RUN = uuid.uuid4().hex[:6]
WORK, DOC = f"lex{RUN}.work", f"lex{RUN}.doc"
EMBEDDER = "lexical-embedder"
PROFILES = (ProfileIndexInfo(WORK, EMBEDDER, 3), ProfileIndexInfo(DOC, EMBEDDER, 3))
TEXTS = {
    "A-1": "Payment retries fail after the gateway timeout",
    "B-2": "Gateway timeout on payment refunds; payment retried twice",
    "C-3": "Login page slow on mobile",
    "D-4": "The payment gateway documentation, the whole of it",
    "E-5": "Unrelated notes about lunch",
    "F-6": "Payment payment payment",
}
QUERIES = ("payment gateway timeout", "PAYMENT", "the", "mobile login", "acme", "lunch payment retries", "d 4")


@pytest.fixture(scope="module")
def backend() -> Iterator[Neo4jWeaviateBackend]:
    server = connect()
    try:
        yield server
    finally:
        try:
            server.drop_profiles([WORK, DOC])
        finally:
            server.close()


@pytest.fixture
def tenants(backend: Neo4jWeaviateBackend) -> Iterator[list[str]]:
    """Tenant ids for a test (dropped afterwards)."""
    prefix = unique_prefix("lx")
    names = [f"{prefix}{index}" for index in range(3)]
    try:
        yield names
    finally:
        backend.drop_tenants(names)


def node(tenant: str, key: str, *, project: str = "P", secured: bool = False, acl: Sequence[str] = ()) -> NodeRecord:
    return NodeRecord(tenant, f"acme:work:{key}", "cdm.work_item", project, f"title {key}", None, secured, tuple(acl))


def vector(record: NodeRecord, text: str | None, profile: str = WORK, x: float = 0.5) -> VectorRecord:
    """The vector of a node with the lexical document of ``text`` (None: none)."""
    lexical = "" if text is None else bm25.lexical_document(record.node_id, text)
    return VectorRecord(
        record.tenant_id,
        record.node_id,
        profile,
        record.project_key,
        record.secured,
        record.acl,
        [1.0, x, 0.5],
        f"hash-{record.node_id}",
        lexical,
    )


def load(
    backend: Neo4jWeaviateBackend, tenant: str, texts: Mapping[str, str | None], **nodes: dict[str, Any]
) -> dict[str, str]:
    """Load one node per key with its vector in WORK; the lexical documents by node id (non-empty ones)."""
    records = {key: node(tenant, key, **nodes.get(key, {})) for key in texts}
    vectors = [vector(records[key], text) for key, text in texts.items()]
    backend.load(list(records.values()), [], vectors, PROFILES, replace=True)
    return {v.node_id: v.lexical for v in vectors if v.lexical}


def expected(documents: Mapping[str, str], query: str, top_k: int = 10, among: Sequence[str] | None = None) -> list:
    """(node id, score) of the best ``top_k`` by the shared formula over ``documents``."""
    terms = bm25.query_terms(query)
    split = {node_id: document.split() for node_id, document in documents.items()}
    stats = bm25.CorpusStats(
        len(split),
        sum(len(words) for words in split.values()),
        {term: sum(term in words for words in split.values()) for term in terms},
    )
    chosen = split if among is None else {node_id: split[node_id] for node_id in among}
    return bm25.ranked(((node_id, bm25.score(words, terms, stats)) for node_id, words in chosen.items()), top_k)


def lexical(
    backend: Neo4jWeaviateBackend,
    scope: AccessScope,
    query: str,
    *,
    profile: str = WORK,
    project_key: str | None = None,
    top_k: int = 10,
) -> list[tuple[str, float]]:
    hits = backend.vector_index.lexical(
        [LexicalQuery(profile, bm25.query_terms(query))],
        scope=scope,
        seed_filter=SeedFilter(project_key=project_key),
        top_k=top_k,
    )
    assert all(hit.profile_id == profile for hit in hits)
    return [(hit.node_id, hit.score) for hit in hits]


def test_scores_are_the_shared_formula_over_the_tenant_documents(
    backend: Neo4jWeaviateBackend, tenants: list[str]
) -> None:
    texts: dict[str, str | None] = {**TEXTS, "G-7": None}  # a vector without a lexical document
    documents = load(backend, tenants[0], texts)
    assert len(documents) == len(TEXTS)
    scope = AccessScope(tenants[0])
    for query in QUERIES:
        assert lexical(backend, scope, query) == expected(documents, query), query  # the same floats
    assert lexical(backend, scope, "payment gateway", top_k=2) == expected(documents, "payment gateway", 2)
    assert lexical(backend, scope, "kubernetes") == []
    assert lexical(backend, scope, "payment", profile=DOC) == []  # no document in that profile
    assert lexical(backend, AccessScope(tenants[2]), "payment") == []  # a tenant without data
    assert backend.vector_index.lexical([LexicalQuery(WORK, ())], scope=scope, seed_filter=SeedFilter(), top_k=5) == []
    states = {state.node_id: state.lexical for state in backend.index_store.vector_states(tenants[0], WORK)}
    assert states == {f"acme:work:{key}": key != "G-7" for key in texts}


def test_another_tenant_changes_nothing(backend: Neo4jWeaviateBackend, tenants: list[str]) -> None:
    documents = load(backend, tenants[0], TEXTS)
    scope = AccessScope(tenants[0])
    before = [lexical(backend, scope, query) for query in QUERIES]
    others = {f"X-{index}": "payment payment gateway the mobile" for index in range(8)}
    load(backend, tenants[1], others)
    assert [lexical(backend, scope, query) for query in QUERIES] == before
    assert before == [expected(documents, query) for query in QUERIES]
    assert {node_id for node_id, _ in lexical(backend, AccessScope(tenants[1]), "payment")} == {
        f"acme:work:{key}" for key in others
    }


def test_project_and_acl_filters_keep_the_statistics_of_all_documents(
    backend: Neo4jWeaviateBackend, tenants: list[str]
) -> None:
    documents = load(
        backend,
        tenants[0],
        TEXTS,
        **{"B-2": {"project": "Q"}, "D-4": {"secured": True, "acl": ["user:ann"]}, "F-6": {"secured": True}},
    )
    ids = sorted(documents)
    public = [node_id for node_id in ids if not node_id.endswith(("D-4", "F-6"))]
    query = "payment gateway"
    assert lexical(backend, AccessScope(tenants[0]), query) == expected(documents, query, among=public)
    assert lexical(backend, AccessScope(tenants[0]), query, project_key="Q") == expected(
        documents, query, among=["acme:work:B-2"]
    )
    ann = AccessScope(tenants[0], identities=frozenset({"user:ann"}))
    assert lexical(backend, ann, query) == expected(documents, query, among=[i for i in ids if not i.endswith("F-6")])
    assert lexical(backend, AccessScope(tenants[0], all_secured=True), query) == expected(documents, query)


def test_changed_and_removed_documents_leave_the_statistics(backend: Neo4jWeaviateBackend, tenants: list[str]) -> None:
    documents = load(backend, tenants[0], TEXTS)
    records = {key: node(tenants[0], key) for key in TEXTS}
    emptied, dropped, changed = records["A-1"], records["B-2"], records["C-3"]
    backend.apply(
        ChangeSet(
            upsert_vectors=[vector(emptied, None), vector(changed, "payment gateway payment")],
            delete_vectors=[VectorKey(tenants[0], WORK, dropped.node_id)],
            profiles=PROFILES,
        )
    )
    del documents[emptied.node_id], documents[dropped.node_id]
    documents[changed.node_id] = bm25.lexical_document(changed.node_id, "payment gateway payment")
    for query in QUERIES:
        assert lexical(backend, AccessScope(tenants[0]), query) == expected(documents, query), query
    states = {state.node_id: state.lexical for state in backend.index_store.vector_states(tenants[0], WORK)}
    assert states[emptied.node_id] is False
    assert states[changed.node_id] is True


def test_a_collection_from_before_lexical_documents_gets_the_properties(
    backend: Neo4jWeaviateBackend, tenants: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    profile = ProfileIndexInfo(f"lex{RUN}.legacy", EMBEDDER, 3)
    tenant = tenants[0]
    added = (weaviate_schema.LEXICAL, weaviate_schema.LEXICAL_LENGTH)
    original = weaviate_writes.data_object

    def without_lexical(record: VectorRecord) -> Any:
        obj = original(record)
        for name in added:
            obj.properties.pop(name, None)
        return obj

    a, b = node(tenant, "A-1"), node(tenant, "B-2")
    try:
        with monkeypatch.context() as old_version:
            kept = [p for p in weaviate_schema._properties() if p.name not in added]
            old_version.setattr(weaviate_schema, "_properties", lambda: kept)
            old_version.setattr(weaviate_schema, "_inverted_index", lambda: None)
            old_version.setattr(weaviate_writes, "data_object", without_lexical)
            backend.load(
                [a, b],
                [],
                [vector(a, TEXTS["A-1"], profile.profile_id), vector(b, TEXTS["B-2"], profile.profile_id)],
                [profile],
                replace=True,
            )
        config = collection_config(backend, profile.profile_id)
        assert not set(added) & set(config["properties"])
        assert config["stopwords"] == "en"
        assert [state.lexical for state in backend.index_store.vector_states(tenant, profile.profile_id)] == [
            False,
            False,
        ]
        scope = AccessScope(tenant)
        assert lexical(backend, scope, "payment", profile=profile.profile_id) == []  # no documents, no error

        change = vector(b, "the payment gateway", profile.profile_id)
        backend.apply(ChangeSet(upsert_vectors=[change], profiles=[profile]))
        config = collection_config(backend, profile.profile_id)
        assert config["properties"][weaviate_schema.LEXICAL] == ("whitespace", True, True)
        assert config["properties"][weaviate_schema.LEXICAL_LENGTH][1:] == (True, False)
        assert (config["stopwords"], config["bm25"]) == ("none", (1.2, 0.75))
        states = backend.index_store.vector_states(tenant, profile.profile_id)
        assert [(state.node_id, state.lexical) for state in states] == [(a.node_id, False), (b.node_id, True)]
        documents = {b.node_id: change.lexical}  # a's object has none: not a document
        for query in ("payment", "the gateway", "title"):
            assert lexical(backend, scope, query, profile=profile.profile_id) == expected(documents, query), query
    finally:
        backend.drop_profiles([profile.profile_id])


def collection_config(backend: Neo4jWeaviateBackend, profile_id: str) -> dict[str, Any]:
    """The properties of a profile's collection (name -> (tokenization, filterable, searchable)), its
    stop words preset and its BM25 (k1, b)."""

    async def op(client: Any) -> dict[str, Any]:
        config = await client.collections.use(collection_name(profile_id)).config.get()
        inverted = config.inverted_index_config
        return {
            "properties": {
                p.name: (p.tokenization.value if p.tokenization else None, p.index_filterable, p.index_searchable)
                for p in config.properties
            },
            "stopwords": inverted.stopwords.preset.value,
            "bm25": (inverted.bm25.k1, inverted.bm25.b),
        }

    return backend.weaviate.connection.call(op, None)


@pytest.mark.parametrize("profiles", [(WORK,), (WORK, DOC)])
def test_round_trips_do_not_depend_on_top_k(
    backend: Neo4jWeaviateBackend, tenants: list[str], profiles: tuple[str, ...]
) -> None:
    many = {f"N-{index:02d}": f"payment gateway note {index} " + "timeout " * (index % 5) for index in range(60)}
    records = {key: node(tenants[0], key) for key in many}
    vectors = [  # distinct similarities: no ties at the vector searches' boundary
        vector(records[key], text, profile, index / 10)
        for index, (key, text) in enumerate(many.items())
        for profile in (WORK, DOC)
    ]
    backend.load(list(records.values()), [], vectors, PROFILES, replace=True)
    scope = AccessScope(tenants[0])
    queries = [LexicalQuery(profile, bm25.query_terms("payment gateway timeout")) for profile in profiles]

    def lexical_trips(top_k: int) -> tuple[dict[str, int], list[VectorHit]]:
        before = backend.round_trips()
        hits = backend.vector_index.lexical(queries, scope=scope, seed_filter=SeedFilter(), top_k=top_k)
        after = backend.round_trips()
        return {key: after[key] - before[key] for key in after}, hits

    def seeds_trips(top_k: int) -> tuple[dict[str, int], int]:
        before = backend.round_trips()
        seeds = backend.search_reads.seeds(
            [VectorQuery(profile, [1.0, 0.5, 0.5], EMBEDDER) for profile in profiles],
            scope=scope,
            seed_filter=SeedFilter(),
            top_k=top_k,
            link_types=["RELATES_TO"],
            max_degree=10,
            lexical=queries,
        )
        after = backend.round_trips()
        return {key: after[key] - before[key] for key in after}, len(seeds.lexical)

    lexical_trips(3)  # warm the profile cache
    seeds_trips(3)  # and the generation cache
    small, small_hits = lexical_trips(3)
    large, large_hits = lexical_trips(50)
    assert (len(small_hits), len(large_hits)) == (3 * len(profiles), 50 * len(profiles))
    # Neo4j: the generation; Weaviate: a BM25 search per query and one statistics request
    assert small == large == {"neo4j": 1, "weaviate": len(profiles) + 1}
    small_seeds, small_count = seeds_trips(3)
    large_seeds, large_count = seeds_trips(50)
    assert (small_count, large_count) == (3, 50)
    # Neo4j: the seeds statement; Weaviate: a vector search and a BM25 search per profile, the statistics
    assert small_seeds == large_seeds == {"neo4j": 1, "weaviate": 2 * len(profiles) + 1}
