"""The brainSearch LangGraph graph: six nodes over a typed state."""

from __future__ import annotations

from typing import Any

from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from brain_graph.config import default_services
from brain_graph.nodes import PIPELINE
from brain_graph.services import SearchServices
from brain_graph.state import BrainSearchContext, BrainSearchInput, BrainSearchOutput, BrainSearchState
from brain_graph.steps import ServicesProvider, bind_step

GRAPH_NAME = "brain_search"
NODE_NAMES = tuple(name for name, _ in PIPELINE)

BrainSearchGraph = CompiledStateGraph[BrainSearchState, BrainSearchContext, BrainSearchInput, BrainSearchOutput]


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
    return builder.compile(name=name)


def make_graph() -> BrainSearchGraph:
    """Graph factory for ``langgraph.json``: services from the environment."""
    return build_graph(default_services())
