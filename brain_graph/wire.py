"""The JSON shapes that flow through the graph state and out of it (camelCase, JSON-native).

Every value in the graph's state is one of these TypedDicts or a plain JSON value, so checkpoints
(strict msgpack included), HTTP streaming and LangGraph Studio see exactly what a step wrote. The
pydantic models of :mod:`brain_graph.contracts` validate the same shapes (a test keeps both in step):
``BrainSearchResult.model_validate(output)`` gives typed snake_case access to a result.
"""

from __future__ import annotations

from typing import Any, Literal

from typing_extensions import TypedDict

SourceKind = Literal["work", "doc", "code", "other"]


class SearchFilter(TypedDict):
    """The normalised ``filter``: every field present."""

    tenantId: str
    projectKey: str | None
    profileKindIn: list[str] | None
    secured: bool


class SearchOptions(TypedDict):
    """The normalised ``options``: every field present, defaults applied."""

    topK: int
    maxEpisodes: int
    expandDepth: int
    maxNodes: int
    includeEpisodes: bool
    includeSignals: bool
    includeClusters: bool


class SearchRequest(TypedDict):
    """A validated request, as ``embed`` writes it for the later steps."""

    queryText: str
    filter: SearchFilter
    options: SearchOptions
    profileIds: list[str]


class SearchHit(TypedDict):
    """A node found by vector similarity (``score`` in 0..1, 6 decimals)."""

    nodeId: str
    nodeType: str
    profileId: str
    profileKind: str
    score: float
    title: str | None
    url: str | None


class GraphNode(TypedDict):
    """A node of the expanded neighbourhood: its label and metadata properties."""

    nodeId: str
    nodeType: str
    label: str | None
    properties: dict[str, Any]


class GraphEdge(TypedDict):
    """A directed, typed edge between two nodes of the neighbourhood."""

    edgeType: str
    fromNodeId: str
    toNodeId: str
    properties: dict[str, Any]


class SearchEpisode(TypedDict):
    """A cluster grouping hits, scored by the sum of its member hits' scores."""

    clusterNodeId: str
    clusterKind: str
    projectKey: str
    score: float
    size: int
    memberNodeIds: list[str]


class RagPassage(TypedDict):
    """A bounded text passage for the prompt."""

    sourceNodeId: str
    sourceKind: SourceKind
    text: str
    url: str | None


class Citation(TypedDict):
    """A structured citation of the prompt pack."""

    sourceNodeId: str
    url: str | None
    title: str | None
    nodeType: str


class PromptPack(TypedDict):
    """Markdown context and structured citations."""

    contextMarkdown: str
    citations: list[Citation]


class NodeMeta(TypedDict):
    """What the pipeline keeps of a node it read (never its text or ACL)."""

    nodeType: str
    projectKey: str | None
    title: str | None
    url: str | None
    properties: dict[str, Any]
