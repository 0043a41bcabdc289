"""The cortex's state and runtime context."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Literal

from langchain_core.messages import AnyMessage
from langgraph.graph.message import add_messages
from typing_extensions import TypedDict

from brain_graph import GraphEdge, GraphNode, Principal, PromptPack, RagPassage, SearchEpisode, SearchHit

Intent = Literal["rag", "identity", "translate", "summarize", "rewrite"]


class CortexInput(TypedDict, total=False):
    """What a host sends: the conversation and the search scope (``filter``: ``tenantId`` required)."""

    messages: Annotated[list[AnyMessage], add_messages]
    filter: dict[str, Any]
    options: dict[str, Any]


class CortexState(CortexInput, total=False):
    """Conversation, routing keys and brain-graph's keys.

    ``queryText``, ``filter`` and ``options`` are brain_search's input keys and ``hits`` ...
    ``promptPack`` its output keys: with the same names here, the compiled brain_search graph can be
    a node of this graph as it is (``pattern="shared"``).
    """

    user_query: str
    intent: Intent
    should_retrieve: bool
    queryText: str
    hits: list[SearchHit]
    episodes: list[SearchEpisode]
    graphNodes: list[GraphNode]
    graphEdges: list[GraphEdge]
    passages: list[RagPassage]
    promptPack: PromptPack | None
    answer: str
    citations: list[dict[str, Any]]


@dataclass(frozen=True)
class CortexContext:
    """Run context of the cortex. brain-graph reads ``principal`` (and ``services``) from it when it
    runs as a subgraph, so a secured search sees what this principal may see."""

    principal: Principal | None = None
    services: Any = None
