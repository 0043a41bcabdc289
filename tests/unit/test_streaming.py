"""Streams show each step's real update, also when restricted to the output keys (as the LangGraph
server does); values chunks and results keep the keys asked for."""

from __future__ import annotations

import asyncio
from typing import Any

from brain_graph.graphs.search import NODE_NAMES, BrainSearchGraph
from brain_graph.pipeline.state import BrainSearchOutput
from tests.helpers import request

OUTPUT_KEYS = list(BrainSearchOutput.__annotations__)


def test_updates_carry_every_key_a_step_wrote(small_graph: BrainSearchGraph) -> None:
    updates = list(small_graph.stream(request("token refresh"), stream_mode="updates"))
    assert [next(iter(update)) for update in updates] == list(NODE_NAMES)
    by_step: dict[str, Any] = {step: value for update in updates for step, value in update.items()}
    assert set(by_step["embed"]) == {"request", "queryVectors", "callerKey"}
    assert set(by_step["retrieve"]) == {
        "hits",
        "nodeRecords",
        "seedLinks",
        "seedScores",
        "hitSources",
        "filtersApplied",
        "warnings",
        "graphContextIncluded",
    }
    assert set(by_step["expand"]) == {
        "graphNodes",
        "graphEdges",
        "nodeRecords",
        "candidates",
        "clusterMemberships",
        "passageTexts",
    }
    assert set(by_step["score_episodes"]) == {"episodes", "episodeLabels"}


def test_values_and_results_keep_the_output_schema(small_graph: BrainSearchGraph) -> None:
    result = small_graph.invoke(request("token refresh"))
    assert list(result) == OUTPUT_KEYS
    both = list(
        small_graph.stream(request("token refresh"), stream_mode=["updates", "values"], output_keys=OUTPUT_KEYS)
    )
    values = [chunk for mode, chunk in both if mode == "values"]
    assert values[-1] == result
    assert all(set(chunk) <= set(OUTPUT_KEYS) for chunk in values)
    updates = [chunk for mode, chunk in both if mode == "updates"]
    assert "request" in updates[0]["embed"]
    nested = list(
        small_graph.stream(
            request("token refresh"), stream_mode=["values", "updates"], subgraphs=True, output_keys=OUTPUT_KEYS
        )
    )
    assert nested[-1] == ((), "values", result)


def test_async_streams_behave_the_same(small_graph: BrainSearchGraph) -> None:
    async def collect() -> list[Any]:
        stream = small_graph.astream(
            request("token refresh"), stream_mode=["updates", "values"], output_keys=OUTPUT_KEYS
        )
        return [part async for part in stream]

    parts = asyncio.run(collect())
    assert parts[-1] == ("values", small_graph.invoke(request("token refresh")))
    updates = [chunk for mode, chunk in parts if mode == "updates"]
    assert "request" in updates[0]["embed"]
