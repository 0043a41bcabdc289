"""The TypedDicts of the wire contracts in the graph state (import them from
:mod:`brain_graph.core.wire`).

Generated from :mod:`brain_graph.core.contracts` by ``scripts/generate_wire.py``: edit the models there
and run it; a test fails when this file is not what it writes.
"""

from __future__ import annotations

from typing import Any, Literal

from typing_extensions import TypedDict

SourceKind = Literal["work", "doc", "code", "other"]
RetrievalMode = Literal["vector", "lexical", "hybrid"]
ReachedBy = Literal["exact", "vector", "lexical", "graph"]


class SearchFilter(TypedDict):
    """The normalised ``filter``: every field present."""

    tenantId: str
    projectKey: str | None
    profileKindIn: list[str] | None
    secured: bool
    nodeTypes: list[str] | None
    namespaces: list[str] | None
    tags: list[str] | None
    updatedAfter: str | None
    maxAgeDays: int | None
    asOf: str | None


class SearchOptions(TypedDict):
    """The normalised ``options``: every field present, defaults applied."""

    topK: int
    maxEpisodes: int
    expandDepth: int
    maxNodes: int
    includeEpisodes: bool
    includeSignals: bool
    includeClusters: bool
    retrievalMode: RetrievalMode | None
    minScore: float | None


class SearchHit(TypedDict):
    """A node found by retrieval: ``score`` is its retrieval score (``vectorScore`` plus its lexical
    term, 6 decimals), ``vectorScore`` its similarity in 0..1 (None in lexical mode) and
    ``lexicalScore`` its BM25 score (None when lexical retrieval did not find it)."""

    nodeId: str
    nodeType: str
    profileId: str
    profileKind: str
    score: float
    title: str | None
    url: str | None
    vectorScore: float | None
    lexicalScore: float | None


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


class CandidateSupport(TypedDict):
    """One seed's part in a candidate's graph evidence: the seed (a hit) and its score, the best path
    from it (``hops`` long, its last edge ``edgeType`` from ``viaNodeId``, ``direction`` ``out`` when
    that edge points from ``viaNodeId`` to the candidate), the path's weight and the score it adds."""

    seedNodeId: str
    seedScore: float
    hops: int
    viaNodeId: str
    edgeType: str
    direction: Literal["out", "in"]
    pathWeight: float
    contribution: float


class ScoringBreakdown(TypedDict):
    """Every term of ``adjustedScore = vector + lexical + graph``: ``lexical`` is the node's BM25
    score over the best BM25 score of the search, times ``lexicalWeight`` and the spread of the vector
    hits' similarities (0 unless lexical retrieval found it); ``graph`` is the sum of the ``support``
    contributions, each ``linkWeight * (seedScore - marginFloor) * pathWeight``, at most ``ceiling``
    minus ``vector + lexical`` (never below 0) when there is a ceiling."""

    vector: float
    lexical: float
    graph: float
    marginFloor: float
    linkWeight: float
    support: list[CandidateSupport]
    ceiling: float | None


class CandidateVia(TypedDict):
    """How a node reached by expansion was reached: its strongest supporting seed and path."""

    seedNodeId: str
    viaNodeId: str
    edgeType: str
    direction: Literal["out", "in"]
    hops: int


class SearchCandidate(TypedDict):
    """A ranked candidate of the pack: a hit (``hops`` 0; ``reachedBy`` ``exact`` when the query is its
    id, the key part of its id or its title, else ``vector`` or ``lexical``: how it was found) or a
    node reached by expansion (``graph``, ``via`` says from where). ``vectorScore`` is its similarity
    to the query in 0..1 (None without a vector in the searched profiles, from ``profileId``, and in
    lexical mode)."""

    nodeId: str
    nodeType: str
    title: str | None
    url: str | None
    profileId: str | None
    vectorScore: float | None
    adjustedScore: float
    reachedBy: ReachedBy
    hops: int
    via: CandidateVia | None
    scoringBreakdown: ScoringBreakdown


class Citation(TypedDict):
    """A structured citation of the prompt pack, in rank order: the seed's four fields, plus the
    scores and how the item was reached (``via`` for items reached by expansion)."""

    sourceNodeId: str
    url: str | None
    title: str | None
    nodeType: str
    vectorScore: float | None
    adjustedScore: float
    reachedBy: ReachedBy
    via: CandidateVia | None


class PromptPack(TypedDict):
    """Markdown context and structured citations."""

    contextMarkdown: str
    citations: list[Citation]


class FiltersApplied(TypedDict):
    """The seed filter a search applied, resolved: profile kinds searched, values normalised
    (namespaces and tags case-folded, sorted), ``updatedAfter`` the effective recency cutoff."""

    projectKey: str | None
    profileKinds: list[str]
    nodeTypes: list[str] | None
    namespaces: list[str] | None
    tags: list[str] | None
    updatedAfter: str | None
    maxAgeDays: int | None
    asOf: str | None


class SearchWarning(TypedDict):
    """Something that made the result narrower than asked, for the caller to act on."""

    code: str
    message: str


class BrainSearchOutput(TypedDict):
    """What a caller gets back: the fields of :class:`brain_graph.core.contracts.BrainSearchResult`."""

    hits: list[SearchHit]
    episodes: list[SearchEpisode]
    graphNodes: list[GraphNode]
    graphEdges: list[GraphEdge]
    passages: list[RagPassage]
    promptPack: PromptPack
    candidates: list[SearchCandidate]
    filtersApplied: FiltersApplied | None
    warnings: list[SearchWarning]
    graphContextIncluded: bool


class SearchRequestFields(TypedDict):
    """A validated request's fields, every one present, defaults applied (``SearchRequest`` adds the
    profiles it searches)."""

    queryText: str
    filter: SearchFilter
    options: SearchOptions
