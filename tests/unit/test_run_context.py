"""The run context is checked, never read as "no principal": a principal, a string or a list given
where the context belongs, or services that are not :class:`SearchServices`, are refused. In
service-principal mode a misread context would have seen every secured item."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from langgraph.graph import END, START, StateGraph

from brain_graph.core.contracts import BrainSearchResult
from brain_graph.core.errors import InvalidRequestError
from brain_graph.core.security import Principal
from brain_graph.graphs.search import build_graph
from brain_graph.pipeline.services import SearchServices
from brain_graph.pipeline.state import BrainSearchContext, BrainSearchInput, BrainSearchOutput
from tests.helpers import request


@pytest.mark.parametrize(
    "context", [Principal("bob"), "bob", ["bob"], ("bob",), 3, b"bob", object()], ids=lambda value: type(value).__name__
)
def test_a_value_that_is_not_a_context_is_refused_in_service_principal_mode(
    small_services: SearchServices, context: Any
) -> None:
    graph = build_graph(SearchServices(backend=small_services.backend, service_principal=True))
    with pytest.raises(InvalidRequestError) as info:
        graph.invoke(request("token refresh outage postmortem", secured=True, expandDepth=3), context=context)
    assert info.value.field == "context"
    assert f"got {type(context).__name__}" in str(info.value)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("services", ["x", {"backend": "embedded"}, 1])
def test_services_that_are_not_search_services_are_refused(small_graph: Any, services: Any) -> None:
    with pytest.raises(InvalidRequestError) as built:
        BrainSearchContext(services=services)
    assert built.value.field == "context.services"
    with pytest.raises(InvalidRequestError) as ran:
        small_graph.invoke(request("token refresh", secured=False), context={"services": services})
    assert ran.value.field == "context.services"


@dataclass(frozen=True)
class _ParentContext:
    """A parent application's own context: it has no brain-graph attribute, so defaults apply."""

    user: str


class _ParentState(BrainSearchInput, BrainSearchOutput, total=False):
    pass


def test_a_parent_graph_context_without_our_attributes_still_searches(small_services: SearchServices) -> None:
    parent: StateGraph[Any, Any, Any, Any] = StateGraph(_ParentState, context_schema=_ParentContext)
    parent.add_node("search", build_graph(small_services))
    parent.add_edge(START, "search")
    parent.add_edge("search", END)
    out = parent.compile().invoke(request("token refresh", secured=False), context=_ParentContext(user="u"))
    assert BrainSearchResult.model_validate({key: out[key] for key in BrainSearchOutput.__annotations__}).hits


def test_a_context_object_with_our_attributes_is_read(small_services: SearchServices) -> None:
    @dataclass(frozen=True)
    class Own:
        principal: Principal | None = None

    result = build_graph(small_services).invoke(
        request("token refresh outage postmortem", secured=True, expandDepth=3), context=Own(Principal("carol"))
    )
    assert "s2" in {hit["nodeId"] for hit in result["hits"]} | {node["nodeId"] for node in result["graphNodes"]}
