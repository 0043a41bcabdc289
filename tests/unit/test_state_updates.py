"""What a caller may change in a thread's state from outside a run: the input keys only. The steps'
keys (the validated request, the hits and records read within the caller's access scope) are trusted
by the next steps, so a ``Command`` that jumps past ``embed`` or an ``update_state`` that forges them
would skip the request's checks or hand a step ids to read."""

from __future__ import annotations

import asyncio
from typing import Any, TypedDict

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.types import Command

from brain_graph.core.errors import InvalidRequestError
from brain_graph.core.security import Principal
from brain_graph.graphs.search import BrainSearchGraph, build_graph
from brain_graph.pipeline.services import SearchServices
from brain_graph.pipeline.state import BrainSearchContext
from tests.helpers import request


@pytest.fixture
def searched(small_services: SearchServices) -> tuple[BrainSearchGraph, dict[str, Any], dict[str, Any]]:
    """A graph with a checkpointer, the config of a thread that ran one search, and that search's request."""
    graph = build_graph(small_services, checkpointer=InMemorySaver())
    config: dict[str, Any] = {"configurable": {"thread_id": "t"}}
    graph.invoke(request("token refresh", secured=False, expandDepth=1), config)
    return graph, config, dict(graph.get_state(config).values["request"])


def forged(stored: dict[str, Any]) -> dict[str, Any]:
    return {**stored, "options": {**stored["options"], "expandDepth": 30, "maxNodes": 100_000}}


def test_a_command_cannot_skip_embed(searched: tuple[BrainSearchGraph, dict[str, Any], dict[str, Any]]) -> None:
    graph, config, stored = searched
    with pytest.raises(InvalidRequestError) as info:
        graph.invoke(Command(update={"request": forged(stored)}, goto="retrieve"), config)
    assert info.value.field == "command.goto"


@pytest.mark.parametrize("key", ["request", "hits", "nodeRecords", "seedLinks", "seedScores", "queryVectors"])
def test_a_command_cannot_write_the_steps_keys(
    searched: tuple[BrainSearchGraph, dict[str, Any], dict[str, Any]], key: str
) -> None:
    graph, config, stored = searched
    with pytest.raises(InvalidRequestError, match=rf"command.update: may not set \['{key}'\]"):
        graph.invoke(Command(update={key: forged(stored) if key == "request" else []}), config)


def test_update_state_may_change_the_input_only(
    searched: tuple[BrainSearchGraph, dict[str, Any], dict[str, Any]],
) -> None:
    graph, config, stored = searched
    before = graph.get_state(config).values
    with pytest.raises(InvalidRequestError) as info:
        graph.update_state(config, {"request": forged(stored)}, as_node="embed")
    assert info.value.field == "state"
    with pytest.raises(InvalidRequestError):
        asyncio.run(graph.aupdate_state(config, {"queryText": "x", "hits": []}))
    assert graph.get_state(config).values == before
    graph.update_state(config, {"queryText": "duplicate card charges"})
    assert graph.get_state(config).values["queryText"] == "duplicate card charges"


@pytest.mark.parametrize("namespace", ["x", "brain_search:1", "|"])
def test_a_checkpoint_namespace_from_the_caller_does_not_lift_the_guards(
    searched: tuple[BrainSearchGraph, dict[str, Any], dict[str, Any]], namespace: str
) -> None:
    graph, config, stored = searched
    named = {"configurable": {**config["configurable"], "checkpoint_ns": namespace}}
    with pytest.raises(InvalidRequestError) as info:
        graph.invoke(Command(update={"request": forged(stored)}, goto="expand"), named)
    assert info.value.field == "command.goto"
    with pytest.raises(InvalidRequestError, match=r"may not set \['hits'\]"):
        graph.invoke(Command(update={"hits": []}), named)
    with pytest.raises(InvalidRequestError, match="unknown key"):
        graph.invoke({**request("token refresh"), "request": forged(stored)}, named)


def test_a_parent_reader_named_in_json_is_no_parent(
    searched: tuple[BrainSearchGraph, dict[str, Any], dict[str, Any]],
) -> None:
    graph, config, _ = searched
    spoofed = {"configurable": {**config["configurable"], "checkpoint_ns": "x", "__pregel_read": "parent"}}
    with pytest.raises(InvalidRequestError) as info:
        graph.invoke(Command(goto="expand"), spoofed)
    assert info.value.field == "command.goto"


def test_a_real_parent_graph_still_runs_it_as_a_subgraph(small_services: SearchServices) -> None:
    class Parent(TypedDict, total=False):
        queryText: str
        filter: dict[str, Any]
        options: dict[str, Any]
        promptPack: dict[str, Any]
        hits: list[dict[str, Any]]

    builder: StateGraph[Any, Any, Any, Any] = StateGraph(Parent)
    builder.add_node("search", build_graph(small_services))
    builder.add_edge(START, "search")
    builder.add_edge("search", END)
    parent = builder.compile(checkpointer=InMemorySaver())
    output = parent.invoke(request("token refresh"), {"configurable": {"thread_id": "p"}})
    assert output["hits"]
    assert output["promptPack"]["citations"]


def test_a_search_stopped_mid_way_continues_only_for_its_caller(small_services: SearchServices) -> None:
    graph = build_graph(small_services, checkpointer=InMemorySaver())
    alice = BrainSearchContext(principal=Principal("alice", groups=("security",)))
    for thread, resumer in (("same", alice), ("other", BrainSearchContext(principal=Principal("bob")))):
        config: dict[str, Any] = {"configurable": {"thread_id": thread}}
        graph.invoke(request("token refresh", secured=True), config, context=alice, interrupt_before=["expand"])
        assert graph.get_state(config).next == ("expand",)
        if resumer is alice:
            assert graph.invoke(None, config, context=resumer)["promptPack"]["citations"]
            continue
        with pytest.raises(InvalidRequestError) as info:
            graph.invoke(None, config, context=resumer)
        assert info.value.field == "state"
        with pytest.raises(InvalidRequestError):
            graph.invoke(None, config)  # no principal at all
        assert graph.get_state(config).next == ("expand",)  # nothing was read for them
