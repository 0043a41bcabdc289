"""The brainSearch LangGraph graph: six nodes over a typed state."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

from langchain_core.runnables import RunnableConfig, ensure_config
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from brain_graph.config import default_services
from brain_graph.nodes import PIPELINE
from brain_graph.requests import check_top_level_keys
from brain_graph.services import SearchServices
from brain_graph.state import BrainSearchContext, BrainSearchInput, BrainSearchOutput, BrainSearchState
from brain_graph.steps import ServicesProvider, bind_step

GRAPH_NAME = "brain_search"
NODE_NAMES = tuple(name for name, _ in PIPELINE)


def _is_top_level(config: RunnableConfig | None) -> bool:
    """Whether a run is the outermost graph (a subgraph runs inside its parent's checkpoint namespace)."""
    return not ensure_config(config).get("configurable", {}).get("checkpoint_ns")


class BrainSearchGraph(CompiledStateGraph[BrainSearchState, BrainSearchContext, BrainSearchInput, BrainSearchOutput]):
    """The compiled brainSearch graph. A top-level input with keys other than ``queryText``, ``filter``
    and ``options`` is refused (:class:`~brain_graph.errors.InvalidRequestError`) instead of being
    dropped silently; as a subgraph node it receives the parent's state and reads only its own keys."""

    def stream(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Iterator[Any]:
        if _is_top_level(config):
            check_top_level_keys(input)
        return super().stream(input, config, **kwargs)

    def astream(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> AsyncIterator[Any]:
        if _is_top_level(config):
            check_top_level_keys(input)
        return super().astream(input, config, **kwargs)


def build_graph(services: SearchServices | None = None, *, name: str = GRAPH_NAME) -> BrainSearchGraph:
    """Compile the pipeline ``embed → retrieve → expand → score_episodes → assemble_passages → build_pack``.

    ``services`` are the default dependencies; a run's context (``BrainSearchContext.services``)
    overrides them. Without either, services are built once from the environment (embedded store
    unless ``BRAIN_GRAPH_BACKEND`` says otherwise).
    """
    provider: ServicesProvider = (lambda: services) if services is not None else default_services
    builder: StateGraph[Any, Any, Any, Any] = StateGraph(
        BrainSearchState,
        context_schema=BrainSearchContext,
        input_schema=BrainSearchInput,
        output_schema=BrainSearchOutput,
    )
    previous = START
    for node_name, step in PIPELINE:
        builder.add_node(node_name, bind_step(node_name, step, provider))
        builder.add_edge(previous, node_name)
        previous = node_name
    builder.add_edge(previous, END)
    compiled = builder.compile(name=name)
    compiled.__class__ = BrainSearchGraph  # StateGraph.compile has no hook for the compiled class
    return compiled  # type: ignore[return-value]


def make_graph() -> BrainSearchGraph:
    """Graph factory for ``langgraph.json``: services from the environment."""
    return build_graph(default_services())
