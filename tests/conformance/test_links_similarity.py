"""GraphStore.links and VectorIndex.similarity conformance: degrees, hubs, directions, edge types,
visibility, order; exact scores of named nodes, visibility, tenants, embedder checks, order."""

from __future__ import annotations

import pytest

from brain_graph.core.security import AccessScope
from brain_graph.stores import EmbeddingMismatchError, VectorQuery
from brain_graph.stores.base import Link, Neighborhood
from tests.conformance.conftest import DIM, DOC, EMBEDDER, WORK, Harness
from tests.conformance.test_vector_index import ACL_CASES, ACL_NODES, Q, expected_score

TYPES = ["DEPENDS_ON", "HAS_SIGNAL", "REFERENCES"]
FRONTIER = ["f1", "f0", "hub", "missing", "f0", "lonely"]


def link_graph(harness: Harness) -> None:
    """f0 and f1 with links of several types and directions, a hub of four public neighbours, hidden
    neighbours (ACL, other tenant) and a self-loop."""
    keys = ("f0", "f1", "hub", "a", "b", "c", "e", "lonely", "n1", "n2", "n3", "n4")
    nodes = [harness.node("t1", key) for key in keys]
    nodes.append(harness.node("t1", "hidden", secured=True, acl=["user:x"]))
    nodes += [harness.node("t2", "f0"), harness.node("t2", "zz"), harness.node("t2", "a")]
    edges = [
        harness.edge("t1", "REFERENCES", "f0", "a"),
        harness.edge("t1", "REFERENCES", "a", "f0"),
        harness.edge("t1", "HAS_SIGNAL", "a", "f0"),
        harness.edge("t1", "DEPENDS_ON", "f0", "b"),
        harness.edge("t1", "ASSIGNED_TO", "f0", "c"),  # not allowlisted
        harness.edge("t1", "REFERENCES", "f0", "hidden"),
        harness.edge("t1", "REFERENCES", "f0", "f0"),  # self-loop
        harness.edge("t1", "REFERENCES", "f0", "f1"),
        harness.edge("t1", "DEPENDS_ON", "e", "f1"),
        harness.edge("t1", "REFERENCES", "lonely", "lonely"),
        harness.edge("t1", "REFERENCES", "hub", "hidden"),
        *(harness.edge("t1", "REFERENCES", "hub", n) for n in ("n1", "n2", "n3")),
        harness.edge("t1", "HAS_SIGNAL", "n4", "hub"),
        harness.edge("t2", "REFERENCES", "f0", "zz"),
        harness.edge("t2", "REFERENCES", "a", "f0"),
    ]
    harness.load(nodes, edges)


F0_LINKS = [
    Link("f0", "DEPENDS_ON", "b", True),
    Link("f0", "HAS_SIGNAL", "a", False),
    Link("f0", "REFERENCES", "a", False),
    Link("f0", "REFERENCES", "a", True),
    Link("f0", "REFERENCES", "f1", True),
]
F1_LINKS = [Link("f1", "DEPENDS_ON", "e", False), Link("f1", "REFERENCES", "f0", False)]
HUB_LINKS = [Link("hub", "HAS_SIGNAL", "n4", False)] + [Link("hub", "REFERENCES", n, True) for n in ("n1", "n2", "n3")]


def links(
    harness: Harness,
    frontier: list[str] = FRONTIER,
    *,
    scope: AccessScope | None = None,
    types: list[str] = TYPES,
    max_degree: int = 3,
) -> Neighborhood:
    scope = scope if scope is not None else harness.scope("t1")
    return harness.backend.graph_store.links(frontier, scope=scope, edge_types=types, max_degree=max_degree)


def test_links_empty_store_and_empty_requests(harness: Harness) -> None:
    assert links(harness, ["a", "b", "a"]) == Neighborhood({"a": 0, "b": 0}, [])
    link_graph(harness)
    assert links(harness, []) == Neighborhood({}, [])
    assert links(harness, ["f0", "hub"], types=[]) == Neighborhood({"f0": 0, "hub": 0}, [])


def test_links_degrees_directions_and_hub_cut(harness: Harness) -> None:
    link_graph(harness)
    got = links(harness)
    # every frontier id once (duplicates merged, unknown ids 0); a is one neighbour of f0 over 3 edges
    assert dict(got.degrees) == {"f1": 2, "f0": 3, "hub": 4, "missing": 0, "lonely": 0}
    # the hub (4 > 3) is counted, not listed; links sorted by (frontier, type, neighbour, outgoing)
    assert got.links == F0_LINKS + F1_LINKS
    assert got.links == sorted(got.links)

    at_four = links(harness, max_degree=4)
    assert dict(at_four.degrees) == dict(got.degrees)
    assert at_four.links == F0_LINKS + F1_LINKS + HUB_LINKS

    # hubs are counted to max_degree + 1 only (their edges are not all read)
    none = links(harness, max_degree=0)
    assert dict(none.degrees) == {"f1": 1, "f0": 1, "hub": 1, "missing": 0, "lonely": 0}
    assert none.links == []
    at_one = links(harness, max_degree=1)
    assert dict(at_one.degrees) == {"f1": 2, "f0": 2, "hub": 2, "missing": 0, "lonely": 0}
    assert at_one.links == []


def test_links_edge_type_allowlist(harness: Harness) -> None:
    link_graph(harness)
    got = links(harness, ["f0", "hub"], types=["REFERENCES"], max_degree=10)
    assert dict(got.degrees) == {"f0": 2, "hub": 3}
    assert got.links == [
        Link("f0", "REFERENCES", "a", False),
        Link("f0", "REFERENCES", "a", True),
        Link("f0", "REFERENCES", "f1", True),
        *(Link("hub", "REFERENCES", n, True) for n in ("n1", "n2", "n3")),
    ]
    not_allowed = links(harness, ["f0"], types=["ASSIGNED_TO", "IN_CLUSTER"], max_degree=10)
    assert not_allowed == Neighborhood({"f0": 1}, [Link("f0", "ASSIGNED_TO", "c", True)])
    assert links(harness, ["f0"], types=["IN_CLUSTER"]) == Neighborhood({"f0": 0}, [])


def test_links_invisible_neighbours_are_neither_listed_nor_counted(harness: Harness) -> None:
    link_graph(harness)
    # the ACL grants hidden: counted and listed, and the hub grows to 5
    granted = links(harness, ["f0", "hub"], scope=harness.scope("t1", ["user:x"]), max_degree=4)
    assert dict(granted.degrees) == {"f0": 4, "hub": 5}
    assert granted.links == sorted([*F0_LINKS, Link("f0", "REFERENCES", "hidden", True)])
    service = links(harness, ["f0"], scope=harness.scope("t1", all_secured=True), max_degree=4)
    assert service == Neighborhood({"f0": 4}, granted.links)
    # the other tenant sees its own edges only, and nothing of t1's
    other = links(harness, ["f0", "f1", "hub", "a"], scope=harness.scope("t2"))
    assert dict(other.degrees) == {"f0": 2, "f1": 0, "hub": 0, "a": 1}
    assert other.links == [
        Link("a", "REFERENCES", "f0", True),
        Link("f0", "REFERENCES", "a", False),
        Link("f0", "REFERENCES", "zz", True),
    ]
    assert links(harness, ["zz"]) == Neighborhood({"zz": 0}, [])
    assert links(harness, ["f0"], scope=harness.scope("t3")) == Neighborhood({"f0": 0}, [])


@pytest.mark.parametrize("case", list(ACL_CASES))
def test_links_acl_visibility(harness: Harness, case: str) -> None:
    identities, all_secured, visible = ACL_CASES[case]
    nodes = [harness.node("t1", key, secured=sec, acl=acl) for key, (sec, acl) in ACL_NODES.items()]
    nodes.append(harness.node("t1", "hub"))
    harness.load(nodes, [harness.edge("t1", "REFERENCES", "hub", key) for key in ACL_NODES])
    scope = harness.scope("t1", sorted(identities) if identities is not None else None, all_secured=all_secured)
    got = links(harness, ["hub"], scope=scope, max_degree=len(visible))
    assert dict(got.degrees) == {"hub": len(visible)}
    assert got.links == [Link("hub", "REFERENCES", key, True) for key in sorted(visible)]
    assert links(harness, ["hub"], scope=scope, max_degree=len(visible) - 1).links == []


# -- similarity --------------------------------------------------------------------------------

RAW = {
    "a": [3.0, 4.0, 0.1, -2.5],
    "b": [0.1234567, 0.7654321, 0.33333334, 0.1],
    "c": [-1.0, 0.5, 0.25, 0.125],
    "d": [1e-3, 2e-3, 3e-3, 4e-3],
}
DOC_RAW = {"a": [0.0, 1.0, 0.0, 0.0], "c": [0.5, 0.5, 0.5, -0.5]}
QW = [0.3, -0.2, 0.9, 0.1]
QD = [0.7, 0.1, -0.4, 0.2]


def similarity(
    harness: Harness, queries: list[tuple[str, list[float]]], ids: list[str], scope: AccessScope | None = None
) -> list[tuple[str, str, float]]:
    """(profile, node, score) of the hits, in the order returned."""
    index = harness.backend.vector_index
    scope = scope if scope is not None else harness.scope("t1")
    hits = index.similarity([VectorQuery(p, v, EMBEDDER) for p, v in queries], ids, scope=scope)
    return [(hit.profile_id, hit.node_id, hit.score) for hit in hits]


def expected(
    profile: str, query: list[float], raw: dict[str, list[float]], ids: list[str]
) -> list[tuple[str, str, float]]:
    hits = [(profile, key, expected_score(query, raw[key])) for key in dict.fromkeys(ids) if key in raw]
    return sorted(hits, key=lambda hit: (-hit[2], hit[1]))


def load_scored(harness: Harness) -> None:
    nodes = {
        key: harness.node("t1", key, project=project)
        for key, project in zip("abcd", ["P", "Q", None, "P"], strict=True)
    }
    nodes["novec"] = harness.node("t1", "novec")
    vectors = [harness.vector(nodes[k], v) for k, v in RAW.items()]
    vectors += [harness.vector(nodes[k], v, DOC) for k, v in DOC_RAW.items()]
    harness.load(list(nodes.values()), vectors=vectors)


def test_similarity_scores_are_bit_identical_and_ordered(harness: Harness) -> None:
    load_scored(harness)
    ids = ["d", "a", "novec", "missing", "a", "c", "b"]
    got = similarity(harness, [(WORK, QW), (DOC, QD)], ids)
    assert got == expected(WORK, QW, RAW, ids) + expected(DOC, QD, DOC_RAW, ids)
    assert [hit[1] for hit in got[:4]] != sorted(RAW)  # the order is by score, not by id
    # the queries' order decides the profiles' order
    assert similarity(harness, [(DOC, QD), (WORK, QW)], ids) == expected(DOC, QD, DOC_RAW, ids) + expected(
        WORK, QW, RAW, ids
    )
    # the same scores as a search, any project
    searched = harness.query(harness.scope("t1"), QW, top_k=10)
    assert sorted(similarity(harness, [(WORK, QW)], list(RAW))) == sorted(searched)
    assert similarity(harness, [(WORK, QW)], ["b"]) == expected(WORK, QW, RAW, ["b"])


def test_similarity_ties_order_by_node_id(harness: Harness) -> None:
    keys = ["m", "b", "z", "a", "é"]
    nodes = [harness.node("t1", key) for key in keys]
    harness.load(nodes, vectors=[harness.vector(n, [2.0, 2.0, 0.0, 0.0]) for n in nodes])
    tie = expected_score(Q, [2.0, 2.0, 0.0, 0.0])
    assert similarity(harness, [(WORK, Q)], keys) == [(WORK, key, tie) for key in sorted(keys)]


def test_similarity_of_many_ids_in_one_request_per_profile(harness: Harness) -> None:
    nodes = [harness.node("t1", f"n{i:03d}") for i in range(150)]
    harness.load(nodes, vectors=[harness.vector(n, [1.0, i / 150, 0.0, 0.0]) for i, n in enumerate(nodes)])
    asked = [n.node_id for n in reversed(nodes)] + [f"absent{i}" for i in range(850)]
    got = similarity(harness, [(WORK, Q)], asked)
    assert [hit[1] for hit in got] == [n.node_id for n in nodes]  # score falls as i grows
    assert got[0][2] == 1.0
    assert got[-1][2] == expected_score(Q, [1.0, 149 / 150, 0.0, 0.0])


def test_similarity_without_ids_or_queries_sends_nothing(harness: Harness) -> None:
    load_scored(harness)
    admin = harness.backend.admin
    before = admin.round_trips()
    assert similarity(harness, [(WORK, QW)], []) == []
    assert similarity(harness, [], ["a"]) == []
    assert admin.round_trips() == before


def test_similarity_tenant_isolation(harness: Harness) -> None:
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
    ids = ["same", "only-t2"]
    assert similarity(harness, [(WORK, Q)], ids) == [(WORK, "same", expected_score(Q, [1.0, 1.0, 0.0, 0.0]))]
    assert similarity(harness, [(WORK, Q)], ids, harness.scope("t2")) == [(WORK, "only-t2", 1.0), (WORK, "same", 1.0)]
    assert similarity(harness, [(WORK, Q)], ids, harness.scope("t3")) == []


@pytest.mark.parametrize("case", list(ACL_CASES))
def test_similarity_acl_visibility(harness: Harness, case: str) -> None:
    identities, all_secured, visible = ACL_CASES[case]
    nodes = [harness.node("t1", key, secured=sec, acl=acl) for key, (sec, acl) in ACL_NODES.items()]
    harness.load(nodes, vectors=[harness.vector(n, [1.0, 0.5, 0.0, 0.0]) for n in nodes])
    scope = harness.scope("t1", sorted(identities) if identities is not None else None, all_secured=all_secured)
    got = similarity(harness, [(WORK, Q)], list(ACL_NODES), scope)
    assert got == [(WORK, key, expected_score(Q, [1.0, 0.5, 0.0, 0.0])) for key in sorted(visible)]


def test_similarity_embedding_mismatch_raises_like_query(harness: Harness) -> None:
    node = harness.node("t1", "a")
    harness.load([node], vectors=[harness.vector(node, [1.0, 0.0, 0.0, 0.0])])
    index = harness.backend.vector_index
    for scope in (harness.scope("t1"), harness.scope("t-without-data")):
        with pytest.raises(EmbeddingMismatchError, match="dimension"):
            index.similarity([VectorQuery(WORK, [1.0] * (DIM + 1), EMBEDDER)], ["a"], scope=scope)
        with pytest.raises(EmbeddingMismatchError, match="other-embedder"):
            index.similarity([VectorQuery(WORK, [1.0] * DIM, "other-embedder")], ["a"], scope=scope)
    # a profile never indexed is not checked and has no hits; the others still answer
    unknown = VectorQuery(f"{WORK}.never", [1.0] * 7, "whatever")
    assert index.similarity([unknown], ["a"], scope=harness.scope("t1")) == []
    got = index.similarity([unknown, VectorQuery(WORK, Q, EMBEDDER)], ["a"], scope=harness.scope("t1"))
    assert [(hit.profile_id, hit.node_id, hit.score) for hit in got] == [(WORK, "a", 1.0)]
