"""A parent graph served by its own `langgraph dev` in the RemoteGraph tests: one node running
brain_search on another server (``BRAIN_GRAPH_TEST_REMOTE_URL``) as the parent run's principal."""

from __future__ import annotations

import os
from functools import lru_cache
from typing import Any

from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from typing_extensions import TypedDict

from brain_graph.serving.remote import remote_brain_search


class ParentState(TypedDict, total=False):
    queryText: str
    filter: dict[str, Any]
    options: dict[str, Any]
    hits: list[dict[str, Any]]
    promptPack: dict[str, Any]


@lru_cache(maxsize=1)
def make_graph() -> CompiledStateGraph[ParentState, None, ParentState, ParentState]:
    builder: StateGraph[ParentState, None, ParentState, ParentState] = StateGraph(ParentState)
    builder.add_node("search", remote_brain_search(os.environ["BRAIN_GRAPH_TEST_REMOTE_URL"]))
    builder.add_edge(START, "search")
    builder.add_edge("search", END)
    return builder.compile(name="remote_parent")
