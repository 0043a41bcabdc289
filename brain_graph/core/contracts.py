"""Wire contracts of ``brainSearch``: the seed's GraphQL types as pydantic models.

Python code uses snake_case attributes; on the wire (JSON, HTTP, snapshots) every field is the
seed's camelCase name, because the models validate and serialise by alias.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator
from pydantic.alias_generators import to_camel

from brain_graph.core.security import text_problem
from brain_graph.core.wire import SourceKind

JsonValue = Any

MAX_TOP_K = 100
MAX_MAX_EPISODES = 50
MAX_MAX_NODES = 1000
MAX_QUERY_CHARS = 2000
MAX_TENANT_CHARS = 128
MAX_PROJECT_CHARS = 128


def identifier_problem(value: str, max_chars: int) -> str | None:
    """Why a tenant id or project key is unusable (the same rule for searching and loading), or None:
    blank, too long, white space at either end (``t1 `` prints like ``t1`` but names another tenant),
    or a control, format or line-separator character (:func:`~brain_graph.core.security.text_problem`)."""
    if not value.strip():
        return "must not be blank"
    if len(value) > max_chars:
        return f"must be at most {max_chars} characters (got {len(value)})"
    if value != value.strip():
        return "must not start or end with white space"
    return text_problem(value)


class WireModel(BaseModel):
    """Base of every contract type: camelCase on the wire, snake_case in Python, immutable."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        validate_by_alias=True,
        validate_by_name=True,
        serialize_by_alias=True,
        frozen=True,
        extra="forbid",
    )

    def to_wire(self) -> dict[str, Any]:
        """JSON-compatible dict with the seed's camelCase field names."""
        return self.model_dump(mode="json", by_alias=True)


class BrainSearchFilterInput(WireModel):
    """Who and what to search: the tenant is mandatory, everything else narrows the search."""

    model_config = ConfigDict(strict=True)  # JSON types only: "5" or true is no number, "false" no boolean

    tenant_id: str = Field(
        min_length=1,
        max_length=MAX_TENANT_CHARS,
        description="Tenant whose data is searched. Required; nothing outside it is ever returned.",
    )
    project_key: str | None = Field(
        default=None, max_length=MAX_PROJECT_CHARS, description="Only retrieve hits from this project."
    )
    profile_kind_in: list[str] | None = Field(
        default=None,
        description="Embedding profile kinds to search (e.g. work, doc, code). "
        "Default: the registry's default profiles (work and doc).",
    )
    secured: bool = Field(
        default=True,
        strict=True,
        description="Secured mode: secured items are visible only to a principal listed in their ACL; "
        "without a principal the search fails closed. When false, secured items are never returned.",
    )

    @field_validator("tenant_id", "project_key")
    @classmethod
    def _usable_identifier(cls, value: str | None) -> str | None:
        if value is not None:
            problem = identifier_problem(value, MAX_TENANT_CHARS)
            if problem is not None:
                raise ValueError(problem)
        return value


class BrainSearchOptionsInput(WireModel):
    """Bounds of the search. Defaults are the seed's."""

    model_config = ConfigDict(strict=True)  # JSON types only: "5" or true is no number, "false" no boolean

    top_k: int = Field(default=20, ge=1, le=MAX_TOP_K, description="Number of vector hits.")
    max_episodes: int = Field(default=10, ge=0, le=MAX_MAX_EPISODES, description="Maximum number of episodes returned.")
    expand_depth: int = Field(
        default=1, ge=0, description="Graph hops expanded around the hits (maximum configurable, 3 by default)."
    )
    max_nodes: int = Field(
        default=200, ge=1, le=MAX_MAX_NODES, description="Maximum number of graph nodes, hits included."
    )
    include_episodes: bool = Field(default=True, description="Score episodes (cluster nodes) of the hits.")
    include_signals: bool = Field(default=True, description="Expand HAS_SIGNAL edges to signal nodes.")
    include_clusters: bool = Field(default=True, description="Expand IN_CLUSTER edges to cluster nodes.")


class BrainSearchHit(WireModel):
    """A node found by vector similarity."""

    node_id: str
    node_type: str
    profile_id: str
    profile_kind: str
    score: float = Field(description="Similarity in 0..1, higher is better, rounded to 6 decimals.")
    title: str | None = None
    url: str | None = None


class BrainGraphNode(WireModel):
    """A node of the expanded neighbourhood."""

    node_id: str
    node_type: str
    label: str | None = None
    properties: dict[str, JsonValue] = Field(default_factory=dict)


class BrainGraphEdge(WireModel):
    """A directed edge between two nodes of the expanded neighbourhood."""

    edge_type: str
    from_node_id: str
    to_node_id: str
    properties: dict[str, JsonValue] = Field(default_factory=dict)


class BrainSearchEpisode(WireModel):
    """A cluster node that groups hits, scored by the sum of its member hits' scores."""

    cluster_node_id: str
    cluster_kind: str
    project_key: str
    score: float
    size: int = Field(description="Number of members of the cluster visible to the caller.")
    member_node_ids: list[str] = Field(description="The hits that are members, best first.")


class BrainRagPassage(WireModel):
    """A bounded text passage taken from a hit, for the prompt."""

    source_node_id: str
    source_kind: SourceKind
    text: str
    url: str | None = None


class BrainCandidateSupport(WireModel):
    """One seed's part in a candidate's graph evidence (see :mod:`brain_graph.pipeline.ranking`)."""

    seed_node_id: str
    seed_score: float
    hops: int
    via_node_id: str
    edge_type: str
    direction: Literal["out", "in"]
    path_weight: float
    contribution: float = Field(description="linkWeight * (seedScore - marginFloor) * pathWeight, rounded.")


class BrainScoringBreakdown(WireModel):
    """Every term of ``adjustedScore = vector + graph``."""

    vector: float
    graph: float
    margin_floor: float = Field(description="The weakest hit's score; a seed lends its margin above it.")
    link_weight: float
    support: list[BrainCandidateSupport]


class BrainCandidateVia(WireModel):
    """How a node reached by expansion was reached: its strongest supporting seed and path."""

    seed_node_id: str
    via_node_id: str
    edge_type: str
    direction: Literal["out", "in"]
    hops: int


class BrainSearchCandidate(WireModel):
    """A ranked candidate: a vector hit or a node reached by expansion, with its scores."""

    node_id: str
    node_type: str
    title: str | None = None
    url: str | None = None
    profile_id: str | None = None
    vector_score: float | None = Field(description="Similarity to the query in 0..1; None without a vector.")
    adjusted_score: float = Field(description="vectorScore plus the graph evidence (scoringBreakdown).")
    reached_by: Literal["vector", "graph"]
    hops: int
    via: BrainCandidateVia | None = None
    scoring_breakdown: BrainScoringBreakdown


class BrainCitation(WireModel):
    """A structured citation of the prompt pack, in rank order."""

    source_node_id: str
    url: str | None
    title: str | None
    node_type: str
    vector_score: float | None = None
    adjusted_score: float
    reached_by: Literal["vector", "graph"]
    via: BrainCandidateVia | None = None


class BrainPromptPack(WireModel):
    """Markdown context and structured citations to feed an LLM."""

    context_markdown: str
    citations: list[BrainCitation]


class BrainSearchResult(WireModel):
    """The whole result of a search."""

    hits: list[BrainSearchHit]
    episodes: list[BrainSearchEpisode]
    graph_nodes: list[BrainGraphNode]
    graph_edges: list[BrainGraphEdge]
    passages: list[BrainRagPassage]
    prompt_pack: BrainPromptPack
    candidates: list[BrainSearchCandidate] = Field(
        default_factory=list, description="Hits and expanded nodes, ranked by adjustedScore (the pack's order)."
    )


QueryText = Annotated[
    str,
    Field(
        title="Query text",
        description="Natural-language query to search for.",
        min_length=1,
        max_length=MAX_QUERY_CHARS,
        strict=True,  # a JSON string: bytes are not decoded
    ),
]


class BrainSearchRequest(WireModel):
    """The graph's input: ``{queryText, filter, options}``."""

    query_text: QueryText
    filter: BrainSearchFilterInput
    options: BrainSearchOptionsInput = Field(default_factory=BrainSearchOptionsInput)
