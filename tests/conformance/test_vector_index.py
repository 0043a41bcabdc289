"""VectorIndex conformance: scores, order, tie-breaks, filters, tenants, ACL, embedding checks."""

from __future__ import annotations

from array import array

import pytest

from brain_graph.core.filters import SeedFilter
from brain_graph.core.scoring import cosine, similarity_from_cosine
from brain_graph.core.security import Principal
from brain_graph.stores import EmbeddingMismatchError, VectorQuery
from tests.conformance.conftest import DIM, DOC, EMBEDDER, WORK, Harness

Q = [1.0, 0.0, 0.0, 0.0]


def expected_score(query: list[float], stored: list[float]) -> float:
    return similarity_from_cosine(cosine(query, array("f", stored)))  # scored over the stored float32 values


def test_empty_store_returns_nothing(harness: Harness) -> None:
    assert harness.query(harness.scope("t1"), Q, profiles=(WORK, DOC)) == []
    assert harness.backend.vector_index.query([], scope=harness.scope("t1"), seed_filter=SeedFilter(), top_k=5) == []


def test_scores_are_bit_identical_to_the_reference_formula(harness: Harness) -> None:
    raw = {
        "a": [3.0, 4.0, 0.1, -2.5],
        "b": [0.1234567, 0.7654321, 0.33333334, 0.1],
        "c": [-1.0, 0.5, 0.25, 0.125],
        "d": [1e-3, 2e-3, 3e-3, 4e-3],
    }
    nodes = {key: harness.node("t1", key) for key in raw}
    harness.load(list(nodes.values()), vectors=[harness.vector(nodes[k], v) for k, v in raw.items()])
    query = [0.3, -0.2, 0.9, 0.1]
    got = harness.query(harness.scope("t1"), query)
    expected = sorted(((WORK, k, expected_score(query, v)) for k, v in raw.items()), key=lambda h: (-h[2], h[1]))
    assert got == expected


def test_exact_ties_break_by_node_id_beyond_the_overfetch_window(harness: Harness) -> None:
    # 30 identical vectors: more ties than top_k * 2 + 10 candidates, inserted in scrambled order.
    tied = [f"n{i:02d}" for i in (17, 3, 29, 0, 11, 25, 8, 21, 14, 5, 27, 1, 19, 9, 23, 2, 12, 28, 6, 15)]
    tied += [f"n{i:02d}" for i in (4, 7, 10, 13, 16, 18, 20, 22, 24, 26)]
    nodes = [harness.node("t1", node_id) for node_id in tied]
    best = harness.node("t1", "zz-best")
    low = [harness.node("t1", f"low{i}") for i in range(5)]
    vectors = [harness.vector(n, [2.0, 2.0, 0.0, 0.0]) for n in nodes]
    vectors.append(harness.vector(best, [3.0, 0.0, 0.0, 0.0]))
    vectors += [harness.vector(n, [0.0, 1.0, 0.0, 0.0]) for n in low]
    harness.load([*nodes, best, *low], vectors=vectors)

    tie = expected_score(Q, [2.0, 2.0, 0.0, 0.0])
    got = harness.query(harness.scope("t1"), Q, top_k=5)
    assert got == [(WORK, "zz-best", 1.0)] + [(WORK, f"n{i:02d}", tie) for i in range(4)]
    got = harness.query(harness.scope("t1"), Q, top_k=31)
    assert [h[1] for h in got] == ["zz-best", *sorted(tied)]
    assert len(harness.query(harness.scope("t1"), Q, top_k=100)) == 36


def test_each_profile_returns_its_own_top_k(harness: Harness) -> None:
    nodes = [harness.node("t1", f"w{i}") for i in range(4)] + [harness.node("t1", f"d{i}", "cdm.doc") for i in range(4)]
    vectors = [harness.vector(n, [1.0, float(i), 0.0, 0.0], WORK) for i, n in enumerate(nodes[:4])]
    vectors += [harness.vector(n, [1.0, 0.0, float(i), 0.0], DOC) for i, n in enumerate(nodes[4:])]
    harness.load(nodes, vectors=vectors)
    got = harness.query(harness.scope("t1"), Q, profiles=(WORK, DOC), top_k=2)
    assert sorted(got) == sorted([(WORK, "w0", 1.0), (WORK, "w1", 0.853553), (DOC, "d0", 1.0), (DOC, "d1", 0.853553)])
    assert [h for h in got if h[0] == WORK] == [(WORK, "w0", 1.0), (WORK, "w1", 0.853553)]


def test_project_filter(harness: Harness) -> None:
    nodes = [
        harness.node("t1", "p1", project="P"),
        harness.node("t1", "q1", project="Q"),
        harness.node("t1", "none", project=None),
    ]
    harness.load(nodes, vectors=[harness.vector(n, [1.0, 0.1 * i, 0.0, 0.0]) for i, n in enumerate(nodes)])
    scope = harness.scope("t1")
    assert [h[1] for h in harness.query(scope, Q, project_key="P")] == ["p1"]
    assert [h[1] for h in harness.query(scope, Q, project_key="Q")] == ["q1"]
    assert harness.query(scope, Q, project_key="R") == []
    assert [h[1] for h in harness.query(scope, Q)] == ["p1", "q1", "none"]


def test_tenant_isolation(harness: Harness) -> None:
    mine = harness.node("t1", "same")
    theirs = harness.node("t2", "same")
    other = harness.node("t2", "only-t2")
    harness.load(
        [mine, theirs, other],
        vectors=[
            harness.vector(mine, [1.0, 1.0, 0.0, 0.0]),
            harness.vector(theirs, [1.0, 0.0, 0.0, 0.0]),
            harness.vector(other, [1.0, 0.0, 0.0, 0.0]),
        ],
    )
    assert harness.query(harness.scope("t1"), Q) == [(WORK, "same", expected_score(Q, [1.0, 1.0, 0.0, 0.0]))]
    assert harness.query(harness.scope("t2"), Q) == [(WORK, "only-t2", 1.0), (WORK, "same", 1.0)]
    assert harness.query(harness.scope("t3"), Q) == []


# ACL entries are typed (user:/group:); the loader refuses raw entries, so none appears here.
ACL_NODES = {
    "pub": (False, ()),
    "alice-user": (True, ("user:alice",)),
    "security": (True, ("group:security",)),
    "service-only": (True, ()),
    "bob": (True, ("user:bob",)),
}
ACL_CASES = {
    "public": (None, False, {"pub"}),
    "alice": (Principal("alice").identities, False, {"pub", "alice-user"}),
    "group": (Principal("carol", ("security",)).identities, False, {"pub", "security"}),
    "nobody": (Principal("nobody").identities, False, {"pub"}),
    "empty-identities": (frozenset(), False, {"pub"}),
    "service-principal": (None, True, set(ACL_NODES)),
}


@pytest.mark.parametrize("case", list(ACL_CASES))
def test_acl_visibility_in_vector_search(harness: Harness, case: str) -> None:
    identities, all_secured, visible = ACL_CASES[case]
    nodes = [harness.node("t1", key, secured=sec, acl=acl) for key, (sec, acl) in ACL_NODES.items()]
    harness.load(nodes, vectors=[harness.vector(n, [1.0, 0.5, 0.0, 0.0]) for n in nodes])
    scope = harness.scope("t1", sorted(identities) if identities is not None else None, all_secured=all_secured)
    assert [h[1] for h in harness.query(scope, Q)] == sorted(visible)


def test_embedding_mismatch_raises(harness: Harness) -> None:
    node = harness.node("t1", "a")
    harness.load([node], vectors=[harness.vector(node, [1.0, 0.0, 0.0, 0.0])])
    index = harness.backend.vector_index
    for scope in (harness.scope("t1"), harness.scope("t-without-data")):
        with pytest.raises(EmbeddingMismatchError, match="dimension"):
            index.query(
                [VectorQuery(WORK, [1.0] * (DIM + 1), EMBEDDER)], scope=scope, seed_filter=SeedFilter(), top_k=3
            )
        with pytest.raises(EmbeddingMismatchError, match="other-embedder"):
            index.query(
                [VectorQuery(WORK, [1.0] * DIM, "other-embedder")], scope=scope, seed_filter=SeedFilter(), top_k=3
            )
    # a profile that was never indexed is not checked and has no hits
    unknown = [VectorQuery(f"{WORK}.never", [1.0] * 7, "whatever")]
    assert index.query(unknown, scope=harness.scope("t1"), seed_filter=SeedFilter(), top_k=3) == []
