"""The graph API's store reads on every backend: a node's relationships page by page, in key order,
each visible relationship on exactly one page, nothing of another tenant, of a type outside the
allowlist, or behind an ACL the scope does not match; a node the scope cannot see reads as missing."""

from __future__ import annotations

import pytest

from brain_graph.core.security import AccessScope
from brain_graph.stores.browse import Direction, RelationshipKey, relationship_page, wanted
from tests.conformance.conftest import Harness

ALLOWED = ("DEPENDS_ON", "HAS_SIGNAL", "IN_CLUSTER", "REFERENCES")
# (type, source, target) of the edges around "hub" in tenant t1
EDGES = [
    ("REFERENCES", "hub", "a"),
    ("REFERENCES", "a", "hub"),  # the same pair both ways: two relationships
    ("HAS_SIGNAL", "a", "hub"),
    ("DEPENDS_ON", "hub", "b"),
    ("DEPENDS_ON", "c", "hub"),
    ("REFERENCES", "hub", "d"),
    ("REFERENCES", "hub", "é"),  # ids in code-point order, not locale order
    ("REFERENCES", "hub", "Z"),
    ("IN_CLUSTER", "hub", "cl"),
    ("REFERENCES", "hub", "secret"),  # visible only to user:alice
    ("ASSIGNED_TO", "hub", "person"),  # not in the allowlist
    ("REFERENCES", "hub", "hub"),  # a self-loop is no relationship
]


def hub_graph(harness: Harness) -> None:
    keys = ("hub", "a", "b", "c", "d", "é", "Z", "cl", "person", "lonely")
    nodes = [harness.node("t1", key) for key in keys]
    nodes.append(harness.node("t1", "secret", secured=True, acl=["user:alice"]))
    nodes.append(harness.node("t1", "closed", secured=True, acl=["user:alice"]))
    nodes += [harness.node("t2", "hub"), harness.node("t2", "x")]
    edges = [harness.edge("t1", *edge) for edge in EDGES]
    edges += [harness.edge("t1", "REFERENCES", "closed", "a"), harness.edge("t2", "REFERENCES", "hub", "x")]
    harness.load(nodes, edges)


def expected(direction: Direction, *, alice: bool) -> list[RelationshipKey]:
    """The reference rule, from the edge list."""
    keys = set()
    for edge_type, source, target in EDGES:
        if edge_type not in ALLOWED or source == target:
            continue
        outgoing = source == "hub"
        other = target if outgoing else source
        if other == "secret" and not alice:
            continue
        if wanted(outgoing, direction):
            keys.add(RelationshipKey(edge_type, outgoing, other))
    return sorted(keys)


def all_pages(harness: Harness, scope: AccessScope, direction: Direction, limit: int) -> list[list[RelationshipKey]]:
    pages: list[list[RelationshipKey]] = []
    after = None
    while True:
        page = relationship_page(
            harness.backend.graph_store,
            "hub",
            scope=scope,
            direction=direction,
            edge_types=ALLOWED,
            after=after,
            limit=limit,
        )
        assert page.node is not None
        assert page.node.node_id == "hub"
        keys = [rel.key for rel in page.relationships]
        assert all(rel.neighbor.tenant_id == scope.tenant_id for rel in page.relationships)
        pages.append(keys)
        if not page.has_more:
            return pages
        assert len(keys) == limit
        after = keys[-1]


@pytest.mark.parametrize("direction", ["outgoing", "incoming", "all"])
@pytest.mark.parametrize("limit", [1, 3, 100])
@pytest.mark.parametrize("alice", [False, True])
def test_pages_cover_every_visible_relationship_once_in_key_order(
    harness: Harness, direction: Direction, limit: int, alice: bool
) -> None:
    hub_graph(harness)
    scope = harness.scope("t1", ["user:alice"] if alice else None)
    pages = all_pages(harness, scope, direction, limit)
    assert [key for page in pages for key in page] == expected(direction, alice=alice)
    assert all(len(page) <= limit for page in pages)


def test_neighbours_carry_their_metadata(harness: Harness) -> None:
    hub_graph(harness)
    page = relationship_page(
        harness.backend.graph_store,
        "hub",
        scope=harness.scope("t1"),
        direction="outgoing",
        edge_types=("DEPENDS_ON",),
        after=None,
        limit=10,
    )
    [relationship] = page.relationships
    assert (relationship.edge_type, relationship.outgoing, relationship.neighbor.title) == (
        "DEPENDS_ON",
        True,
        "title b",
    )
    assert relationship.neighbor.text == {}


@pytest.mark.parametrize("node_id", ["closed", "missing", "x"])
def test_a_node_the_scope_cannot_see_reads_as_missing(harness: Harness, node_id: str) -> None:
    hub_graph(harness)
    page = relationship_page(
        harness.backend.graph_store,
        node_id,
        scope=harness.scope("t1"),
        direction="all",
        edge_types=ALLOWED,
        after=None,
        limit=10,
    )
    assert (page.node, page.relationships, page.has_more) == (None, [], False)


def test_another_tenant_sees_only_its_own_edges(harness: Harness) -> None:
    hub_graph(harness)
    page = relationship_page(
        harness.backend.graph_store,
        "hub",
        scope=harness.scope("t2"),
        direction="all",
        edge_types=ALLOWED,
        after=None,
        limit=10,
    )
    assert [rel.key for rel in page.relationships] == [RelationshipKey("REFERENCES", True, "x")]


def test_a_resume_point_past_a_deleted_neighbour_still_resumes_after_it(harness: Harness) -> None:
    hub_graph(harness)
    scope = harness.scope("t1")
    after = RelationshipKey("REFERENCES", True, "b")  # no such relationship: it sorts between "a" and "d"
    page = relationship_page(
        harness.backend.graph_store,
        "hub",
        scope=scope,
        direction="outgoing",
        edge_types=ALLOWED,
        after=after,
        limit=10,
    )
    assert [rel.key.neighbor_id for rel in page.relationships] == ["d", "é"]  # "Z" sorts before "a"
