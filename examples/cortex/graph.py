"""Building the cortex graph around brain-graph, in either subgraph pattern."""

from __future__ import annotations

from functools import lru_cache
from typing import Literal

from langchain_core.language_models import BaseChatModel
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from brain_graph import BrainSearchGraph, build_graph
from examples.cortex.nodes import detect_intent, extract_query, make_generate, make_mapped_retrieve, should_retrieve
from examples.cortex.state import CortexContext, CortexInput, CortexState

Pattern = Literal["shared", "mapped"]
CortexGraph = CompiledStateGraph[CortexState, CortexContext, CortexInput, CortexState]


def build_cortex(
    brain: BrainSearchGraph | None = None,
    *,
    pattern: Pattern = "shared",
    chat_model: BaseChatModel | None = None,
) -> CortexGraph:
    """Compile ``extract_query → detect_intent → (should_retrieve) → retrieve → generate``.

    ``retrieve`` is ``brain`` (default: brain_search over the environment's services):

    - ``"shared"``: the compiled brain_search graph is the node itself; it reads ``queryText``,
      ``filter`` and ``options`` from the cortex state and writes ``hits`` ... ``promptPack`` back,
      because both graphs use the same key names.
    - ``"mapped"``: a node function invokes brain_search with an input mapped from the cortex state
      and returns only ``hits``, ``passages`` and ``promptPack``.

    Either way the run context (:class:`CortexContext`: principal, services) reaches brain_search.
    ``chat_model`` is optional: without one, ``generate`` answers with a deterministic template.
    """
    search = brain if brain is not None else build_graph()
    builder: StateGraph[CortexState, CortexContext, CortexInput, CortexState] = StateGraph(
        CortexState, context_schema=CortexContext, input_schema=CortexInput
    )
    builder.add_node("extract_query", extract_query)
    builder.add_node("detect_intent", detect_intent)
    if pattern == "shared":
        builder.add_node("retrieve", search)
    else:
        builder.add_node("retrieve", make_mapped_retrieve(search))
    builder.add_node("generate", make_generate(chat_model))
    builder.add_edge(START, "extract_query")
    builder.add_edge("extract_query", "detect_intent")
    builder.add_conditional_edges("detect_intent", should_retrieve, ["retrieve", "generate"])
    builder.add_edge("retrieve", "generate")
    builder.add_edge("generate", END)
    return builder.compile(name=f"cortex_{pattern}")


@lru_cache(maxsize=1)
def make_graph() -> CortexGraph:
    """Graph factory for ``examples/cortex/langgraph.json``: the "shared" pattern over the
    environment's services, built once per process."""
    return build_cortex(pattern="shared")
