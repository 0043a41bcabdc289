"""What a caller may change in a thread's state from outside a run: the input keys only. The steps'
keys (the validated request, the hits and records read within the caller's access scope) are trusted
by the next steps, so a ``Command`` that jumps past ``embed`` or an ``update_state`` that forges them
would skip the request's checks or hand a step ids to read."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from brain_graph.errors import InvalidRequestError
from brain_graph.graph import BrainSearchGraph, build_graph
from brain_graph.services import SearchServices
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
