"""ACL kinds conformance: ``user:`` entries match only a principal's id, ``group:`` entries only its
groups, in vector search, node reads and expansion alike, on every backend."""

from __future__ import annotations

import pytest

from brain_graph.core.errors import DatasetError
from brain_graph.core.security import Principal
from tests.conformance.conftest import Harness

Q = [1.0, 0.0, 0.0, 0.0]
TYPES = ["REFERENCES"]
ACLS = {
    "user-alice": "user:alice",
    "group-alice": "group:alice",
    "user-security": "user:security",
    "group-security": "group:security",
}
CASES = {
    "id alice": (Principal("alice"), {"user-alice"}),
    "group alice": (Principal("someone", ("alice",)), {"group-alice"}),
    "id security": (Principal("security"), {"user-security"}),
    "group security": (Principal("bob", ("security",)), {"group-security"}),
    "both": (Principal("alice", ("security",)), {"user-alice", "group-security"}),
}


def _load(harness: Harness) -> None:
    hub = harness.node("t1", "hub")
    secured = [harness.node("t1", key, secured=True, acl=(entry,)) for key, entry in ACLS.items()]
    edges = [harness.edge("t1", "REFERENCES", "hub", node.node_id) for node in secured]
    harness.load([hub, *secured], edges, [harness.vector(n, [1.0, 0.5, 0.0, 0.0]) for n in secured])


@pytest.mark.parametrize("case", list(CASES))
def test_acl_entries_match_only_within_their_kind(harness: Harness, case: str) -> None:
    principal, visible = CASES[case]
    _load(harness)
    scope = harness.scope("t1", sorted(principal.identities))
    graph = harness.backend.graph_store
    assert {hit[1] for hit in harness.query(scope, Q)} == visible
    assert {node.node_id for node in graph.get_nodes(list(ACLS), scope=scope)} == visible
    reached = graph.links(["hub"], scope=scope, edge_types=TYPES, max_degree=10)
    assert dict(reached.degrees) == {"hub": len(visible)}
    assert {link.neighbor_id for link in reached.links} == visible


@pytest.mark.parametrize(
    "entry", ["alice", "security", "role:admin", "user:", "group: x", "User:alice", "user:group:x"]
)
def test_loading_refuses_untyped_acl_entries(harness: Harness, entry: str) -> None:
    _load(harness)
    before = harness.query(harness.scope("t1", ["user:alice"]), Q)
    bad = harness.node("t1", "bad", secured=True, acl=(entry,))
    with pytest.raises(DatasetError, match="acl"):
        harness.load([bad], vectors=[harness.vector(bad, [1.0, 0.0, 0.0, 0.0])], replace=True)
    assert harness.query(harness.scope("t1", ["user:alice"]), Q) == before
