"""The JSON shapes that flow through the graph state and out of it (camelCase, JSON-native).

Every value in the graph's state is one of these TypedDicts or a plain JSON value, so checkpoints
(strict msgpack included), HTTP streaming and LangGraph Studio see exactly what a step wrote, and
mypy checks what each step writes against them.

The shapes of the wire contracts are generated from the pydantic models of
:mod:`brain_graph.core.contracts` into :mod:`brain_graph.core.wire_generated` and exported here; being
source rather than built at import, they are what mypy checks against (``scripts/generate_wire.py``
writes the file, a test checks it is current). ``BrainSearchResult.model_validate(output)`` gives typed
snake_case access to the same values. The two shapes only the state has, the request as the steps
read it and what the pipeline keeps of a node, are written here.

Code that makes many of them per search writes them as dict literals (mypy checks the keys as it
checks the class call, which costs about a microsecond more per value on CPython 3.11).
"""

from __future__ import annotations

from typing import Any

from typing_extensions import TypedDict

from brain_graph.core.wire_generated import (
    BrainSearchOutput,
    CandidateSupport,
    CandidateVia,
    Citation,
    FiltersApplied,
    GraphEdge,
    GraphNode,
    PromptPack,
    RagPassage,
    ScoringBreakdown,
    SearchCandidate,
    SearchEpisode,
    SearchFilter,
    SearchHit,
    SearchOptions,
    SearchRequestFields,
    SearchWarning,
    SourceKind,
)

__all__ = [
    "BrainSearchOutput",
    "CandidateSupport",
    "CandidateVia",
    "Citation",
    "FiltersApplied",
    "GraphEdge",
    "GraphNode",
    "NodeMeta",
    "PromptPack",
    "RagPassage",
    "ScoringBreakdown",
    "SearchCandidate",
    "SearchEpisode",
    "SearchFilter",
    "SearchHit",
    "SearchOptions",
    "SearchRequest",
    "SearchRequestFields",
    "SearchWarning",
    "SourceKind",
]


class SearchRequest(SearchRequestFields):
    """A validated request, as ``embed`` writes it for the later steps."""

    profileIds: list[str]
    filtersApplied: FiltersApplied


class NodeMeta(TypedDict):
    """What the pipeline keeps of a node it read (never its text or ACL)."""

    nodeType: str
    projectKey: str | None
    title: str | None
    url: str | None
    properties: dict[str, Any]
