"""Tenant isolation and secured mode across the whole pipeline."""

from __future__ import annotations

import pytest

from brain_graph.core.contracts import BrainSearchResult
from brain_graph.core.errors import AuthorizationError
from brain_graph.core.security import AccessScope, Principal, resolve_scope
from brain_graph.graphs.search import BrainSearchGraph, build_graph
from brain_graph.pipeline.services import SearchServices
from brain_graph.pipeline.state import BrainSearchContext
from tests.helpers import request

SECURED_IDS = {"d2", "s2"}


def every_node_id(result: BrainSearchResult) -> set[str]:
    ids = {hit.node_id for hit in result.hits} | {node.node_id for node in result.graph_nodes}
    ids |= {passage.source_node_id for passage in result.passages}
    ids |= {citation.source_node_id for citation in result.prompt_pack.citations}
    ids |= {edge.from_node_id for edge in result.graph_edges} | {edge.to_node_id for edge in result.graph_edges}
    for episode in result.episodes:
        ids |= {episode.cluster_node_id, *episode.member_node_ids}
    return ids


def run(graph: BrainSearchGraph, principal: Principal | None = None, secured: bool = True) -> BrainSearchResult:
    raw = request("token refresh outage postmortem", secured=secured, expandDepth=3, topK=50)
    return BrainSearchResult.model_validate(graph.invoke(raw, context=BrainSearchContext(principal=principal)))


def test_secured_without_principal_fails_closed(small_graph: BrainSearchGraph) -> None:
    with pytest.raises(AuthorizationError, match="no principal"):
        run(small_graph, principal=None, secured=True)


def test_public_search_never_returns_secured_items(small_graph: BrainSearchGraph) -> None:
    result = run(small_graph, secured=False)
    assert every_node_id(result).isdisjoint(SECURED_IDS)
    assert "Root cause" not in result.prompt_pack.context_markdown


def test_principal_sees_only_items_its_acl_allows(small_graph: BrainSearchGraph) -> None:
    security = every_node_id(run(small_graph, Principal("bob", ("security",))))
    assert "d2" in security
    assert "s2" not in security  # ACL names only user:carol
    carol = every_node_id(run(small_graph, Principal("carol")))
    assert "s2" in carol
    assert "d2" not in carol
    assert every_node_id(run(small_graph, Principal("mallory", ("sales",)))).isdisjoint(SECURED_IDS)


def test_service_principal_mode_sees_the_whole_tenant(small_services: SearchServices) -> None:
    services = SearchServices(backend=small_services.backend, service_principal=True)
    ids = every_node_id(run(build_graph(services), principal=None, secured=True))
    assert ids >= SECURED_IDS


def test_no_tenant_crossing_even_through_expansion(small_graph: BrainSearchGraph) -> None:
    result = BrainSearchResult.model_validate(small_graph.invoke(request("token refresh", "t2", expandDepth=3)))
    assert every_node_id(result) == {"w1", "k9"}
    assert result.hits[0].title == "Token refresh in tenant two"


def test_edges_outside_the_allowlist_are_never_followed(small_graph: BrainSearchGraph) -> None:
    assert "p1" not in every_node_id(run(small_graph, secured=False))


def test_unknown_tenant_gives_an_empty_result(small_graph: BrainSearchGraph) -> None:
    result = BrainSearchResult.model_validate(small_graph.invoke(request("token", "nobody")))
    assert (result.hits, result.graph_nodes, result.passages, result.prompt_pack.citations) == ([], [], [], [])
    assert result.candidates == []
    assert "_No sources._" in result.prompt_pack.context_markdown


@pytest.mark.parametrize(
    ("secured", "principal", "service", "expected"),
    [
        (False, None, False, AccessScope("t", None, False)),
        (False, Principal("a"), True, AccessScope("t", None, False)),
        (True, Principal("a", ("g",)), False, AccessScope("t", frozenset({"user:a", "group:g"}), False)),
        (True, None, True, AccessScope("t", None, True)),
    ],
)
def test_scope_resolution(secured: bool, principal: Principal | None, service: bool, expected: AccessScope) -> None:
    assert resolve_scope("t", secured, principal, service) == expected


def test_scope_checks_the_tenant_first() -> None:
    scope = AccessScope("t1", all_secured=True)
    assert not scope.may_see("t2", False, ())
    assert scope.may_see("t1", True, ())
