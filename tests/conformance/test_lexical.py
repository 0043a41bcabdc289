"""Lexical retrieval conformance: BM25 scores equal to the shared formula over one tenant's documents
of one profile, their order and tie-breaks, project and ACL filters, tenants, and the seeds read."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pytest

from brain_graph.core import bm25
from brain_graph.core.filters import SeedFilter
from brain_graph.core.security import Principal
from brain_graph.stores import VectorQuery
from brain_graph.stores.base import LexicalQuery, NodeRecord, VectorRecord
from tests.conformance.conftest import DOC, EMBEDDER, WORK, Harness

V = [1.0, 0.0, 0.0, 0.0]
TEXTS = {
    "a": "Payment retries fail after the gateway timeout",
    "b": "Gateway timeout on payment refunds; payment retried twice",
    "c": "Login page slow on mobile",
    "d": "The payment gateway documentation",
    "e": "Unrelated notes about lunch",
}


def lexical_vector(node: NodeRecord, text: str, profile: str = WORK) -> VectorRecord:
    return Harness.vector(node, V, profile, lexical=bm25.lexical_document(node.node_id, text))


def expected(documents: Mapping[str, str], query: str, top_k: int = 10, among: Sequence[str] | None = None) -> list:
    """(node, score) by the shared formula over ``documents`` (node id -> lexical document)."""
    terms = bm25.query_terms(query)
    split = {node_id: document.split() for node_id, document in documents.items()}
    stats = bm25.CorpusStats(
        len(split),
        sum(len(document) for document in split.values()),
        {term: sum(term in document for document in split.values()) for term in terms},
    )
    chosen = documents if among is None else {node_id: documents[node_id] for node_id in among}
    return bm25.ranked(((node_id, bm25.score(split[node_id], terms, stats)) for node_id in chosen), top_k)


def search(harness: Harness, scope, query: str, *, profile: str = WORK, project_key=None, top_k: int = 10) -> list:
    hits = harness.backend.vector_index.lexical(
        [LexicalQuery(profile, bm25.query_terms(query))],
        scope=scope,
        seed_filter=SeedFilter(project_key=project_key),
        top_k=top_k,
    )
    assert all(hit.profile_id == profile for hit in hits)
    return [(hit.node_id, hit.score) for hit in hits]


def load_texts(harness: Harness, tenant: str = "t1", **overrides) -> dict[str, str]:
    nodes = {
        key: harness.node(tenant, f"acme:work:{key.upper()}-10{index}", **overrides.get(key, {}))
        for index, key in enumerate(TEXTS)
    }
    harness.load(list(nodes.values()), vectors=[lexical_vector(nodes[key], TEXTS[key]) for key in TEXTS])
    return {nodes[key].node_id: bm25.lexical_document(nodes[key].node_id, TEXTS[key]) for key in TEXTS}


def test_scores_are_the_shared_formula_over_the_tenant_documents(harness: Harness) -> None:
    documents = load_texts(harness)
    for query in ("payment gateway timeout", "PAYMENT", "mobile login", "acme", "lunch payment retries"):
        assert search(harness, harness.scope("t1"), query) == expected(documents, query), query


def test_no_term_in_common_finds_nothing(harness: Harness) -> None:
    load_texts(harness)
    assert search(harness, harness.scope("t1"), "kubernetes") == []
    assert harness.backend.vector_index.lexical([], scope=harness.scope("t1"), seed_filter=SeedFilter(), top_k=5) == []


def test_an_id_finds_its_node_first(harness: Harness) -> None:
    documents = load_texts(harness)
    got = search(harness, harness.scope("t1"), "C-102")
    assert got[0][0] == "acme:work:C-102"
    assert got == expected(documents, "C-102")


def test_top_k_cuts_the_ranked_list(harness: Harness) -> None:
    documents = load_texts(harness)
    assert search(harness, harness.scope("t1"), "payment gateway", top_k=2) == expected(documents, "payment gateway", 2)


def test_another_tenant_changes_nothing(harness: Harness) -> None:
    documents = load_texts(harness)
    before = search(harness, harness.scope("t1"), "payment gateway timeout")
    other = [harness.node("t2", f"x{index}") for index in range(6)]
    harness.load(other, vectors=[lexical_vector(node, "payment payment gateway") for node in other])
    assert (
        search(harness, harness.scope("t1"), "payment gateway timeout")
        == before
        == expected(documents, "payment gateway timeout")
    )
    assert {node_id for node_id, _ in search(harness, harness.scope("t2"), "payment")} == {n.node_id for n in other}


def test_filters_keep_the_statistics_of_all_documents(harness: Harness) -> None:
    documents = load_texts(harness, b={"project": "Q"}, d={"secured": True, "acl": ["user:ann"]})
    query = "payment gateway"
    ids = sorted(documents)
    b_id = next(node_id for node_id in ids if node_id.endswith(":B-101"))
    d_id = next(node_id for node_id in ids if node_id.endswith(":D-103"))
    public = [node_id for node_id in ids if node_id != d_id]
    assert search(harness, harness.scope("t1"), query) == expected(documents, query, among=public)
    assert search(harness, harness.scope("t1"), query, project_key="Q") == expected(documents, query, among=[b_id])
    ann = harness.scope("t1", Principal("ann").identities)
    assert search(harness, ann, query) == expected(documents, query)
    assert search(harness, harness.scope("t1", all_secured=True), query) == expected(documents, query)


def test_documents_of_another_profile_are_another_corpus(harness: Harness) -> None:
    nodes = [harness.node("t1", f"n{index}") for index in range(3)]
    harness.load(
        nodes,
        vectors=[
            lexical_vector(nodes[0], "alpha beta", WORK),
            lexical_vector(nodes[1], "alpha gamma", WORK),
            lexical_vector(nodes[2], "alpha alpha", DOC),
        ],
    )
    work = {"n0": bm25.lexical_document("n0", "alpha beta"), "n1": bm25.lexical_document("n1", "alpha gamma")}
    assert search(harness, harness.scope("t1"), "alpha") == expected(work, "alpha")
    assert search(harness, harness.scope("t1"), "alpha", profile=DOC) == expected(
        {"n2": bm25.lexical_document("n2", "alpha alpha")}, "alpha"
    )


def test_vectors_without_a_lexical_document_are_not_documents(harness: Harness) -> None:
    nodes = [harness.node("t1", f"n{index}") for index in range(3)]
    harness.load(
        nodes,
        vectors=[
            lexical_vector(nodes[0], "alpha beta"),
            lexical_vector(nodes[1], "beta"),
            harness.vector(nodes[2], V),
        ],
    )
    documents = {"n0": bm25.lexical_document("n0", "alpha beta"), "n1": bm25.lexical_document("n1", "beta")}
    assert search(harness, harness.scope("t1"), "beta n2") == expected(documents, "beta n2")
    states = {
        state.node_id: state.lexical for state in harness.backend.index_store.vector_states(harness.t("t1"), WORK)
    }
    assert states == {"n0": True, "n1": True, "n2": False}


def test_equal_scores_are_ordered_by_node_id(harness: Harness) -> None:
    nodes = [harness.node("t1", node_id) for node_id in ("z", "m", "a")]
    harness.load(nodes, vectors=[lexical_vector(node, "same words here") for node in nodes])
    got = search(harness, harness.scope("t1"), "words")
    assert [node_id for node_id, _ in got] == ["a", "m", "z"]
    assert len({score for _, score in got}) == 1
    assert search(harness, harness.scope("t1"), "words", top_k=2) == got[:2]  # ties cut by node id


@pytest.mark.parametrize("expand", [False, True])
def test_the_seeds_read_returns_vector_and_lexical_hits(harness: Harness, expand: bool) -> None:
    documents = load_texts(harness)
    ids = sorted(documents)
    edges = [harness.edge("t1", "RELATES_TO", ids[0], ids[2])]
    nodes = [harness.node("t1", node_id) for node_id in ids]
    vectors = [lexical_vector(node, TEXTS[key]) for node, key in zip(nodes, TEXTS, strict=True)]
    harness.load(nodes, edges, vectors)
    scope = harness.scope("t1")
    seeds = harness.backend.search_reads.seeds(
        [],
        scope=scope,
        seed_filter=SeedFilter(),
        top_k=2,
        link_types=["RELATES_TO"] if expand else [],
        max_degree=10,
        lexical=[LexicalQuery(WORK, bm25.query_terms("payment gateway"))],
    )
    want = expected(documents, "payment gateway", 2)
    assert seeds.hits == []
    assert [(hit.node_id, hit.score) for hit in seeds.lexical] == want
    assert set(seeds.nodes) == {node_id for node_id, _ in want}
    if expand:
        assert seeds.links is not None
        assert {link.frontier_id for link in seeds.links} <= {node_id for node_id, _ in want}
    else:
        assert seeds.links is None
    both = harness.backend.search_reads.seeds(
        [VectorQuery(WORK, V, EMBEDDER)],
        scope=scope,
        seed_filter=SeedFilter(),
        top_k=2,
        link_types=[],
        max_degree=10,
        lexical=[LexicalQuery(WORK, bm25.query_terms("login mobile"))],
    )
    assert len(both.hits) == 2
    assert [(hit.node_id, hit.score) for hit in both.lexical] == expected(documents, "login mobile", 2)
    assert set(both.nodes) == {hit.node_id for hit in [*both.hits, *both.lexical]}
