"""Wire contracts of ``brainSearch``: the seed's GraphQL types as pydantic models, the one hand-written
description of the wire format (fields, types, defaults, constraints and descriptions).

Python code uses snake_case attributes; on the wire (JSON, HTTP, snapshots) every field is the
seed's camelCase name, because the models validate and serialise by alias.

Two forms are generated from these models by ``scripts/generate_wire.py`` and committed, and a test
fails when a committed file is not what the generator writes:

- the TypedDicts of the graph state (:mod:`brain_graph.core.wire`), one per model marked with
  :func:`state_form`, which names it and gives its docstring, so mypy checks the steps' dict literals
  against these fields;
- the GraphQL SDL (``brain_graph/serving/graphql/schema.graphql``, :mod:`brain_graph.serving.graphql.sdl`):
  a type's description is its model's docstring, a field's its ``Field`` description; a :class:`GraphQL`
  annotation says where the served schema types or describes a field otherwise.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, field_validator
from pydantic.alias_generators import to_camel

from brain_graph.core.filters import parse_timestamp
from brain_graph.core.security import text_problem

JsonValue = Any
SourceKind = Literal["work", "doc", "code", "other"]
RetrievalMode = Literal["vector", "lexical", "hybrid"]
ReachedBy = Literal["exact", "vector", "lexical", "graph"]

MAX_TOP_K = 100
MAX_MAX_EPISODES = 50
MAX_MAX_NODES = 1000
MAX_QUERY_CHARS = 2000
MAX_TENANT_CHARS = 128
MAX_PROJECT_CHARS = 128
MAX_MIN_SCORE = 10.0
MAX_FILTER_VALUES = 50  # entries of one list filter (nodeTypes, namespaces, tags)
MAX_FILTER_VALUE_CHARS = 128
MAX_AGE_DAYS = 36_500


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


@dataclass(frozen=True)
class GraphQL:
    """How the GraphQL SDL serves a field where that differs from what its annotation gives (``Annotated``
    metadata of the field, or of a type alias such as :data:`NodeId`).

    Otherwise ``str`` is String, ``int`` Int, ``float`` Float, ``bool`` Boolean, a ``Literal`` a String
    described by its values, a ``dict`` JSON, a list ``[T!]`` and a model its own type; a field is
    nullable when its annotation allows None (an input field or argument: when it has a default) and
    described by its ``Field`` description.

    ``type`` names the GraphQL type of the whole value (``ID``; ``JSON`` for a list of models served as
    one JSON value, whose description then starts with the models' fields), ``nullable`` overrides the
    nullability and ``description`` the description (``""``: none)."""

    type: str | None = None
    nullable: bool | None = None
    description: str | None = None


NodeId = Annotated[str, GraphQL(type="ID")]
# Node and edge properties: any JSON object; the seed's SDL types them as nullable JSON.
JsonObject = Annotated[dict[str, JsonValue], GraphQL(nullable=True)]
# A field described for Python and LangGraph Studio (the JSON schema) but not in the served SDL.
UNDESCRIBED_IN_SDL = GraphQL(description="")


@dataclass(frozen=True)
class StateForm:
    """The TypedDict :mod:`brain_graph.core.wire` has for a model: its name and docstring (the
    docstring is what LangGraph's output schema shows). Every field is present in it, as in
    :meth:`WireModel.to_wire`."""

    name: str
    doc: str


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


_Model = TypeVar("_Model", bound=WireModel)
STATE_FORMS: dict[type[WireModel], StateForm] = {}  # in the order the models are defined


def state_form(name: str, doc: str) -> Callable[[type[_Model]], type[_Model]]:
    """Class decorator: the model has a TypedDict in the graph state, ``name`` with docstring ``doc``."""

    def register(model: type[_Model]) -> type[_Model]:
        STATE_FORMS[model] = StateForm(name, inspect.cleandoc(doc))
        return model

    return register


def _either(values: Sequence[str]) -> str:
    return f"{', '.join(values[:-1])} or {values[-1]}" if len(values) > 1 else "".join(values)


def _both(values: Sequence[str]) -> str:
    return f"{', '.join(values[:-1])} and {values[-1]}" if len(values) > 1 else "".join(values) or "none"


def filter_docs(kinds: Sequence[str], default_kinds: Sequence[str], node_types: Sequence[str]) -> tuple[str, str]:
    """The GraphQL descriptions of ``filter.profileKindIn`` and ``filter.nodeTypes`` for a deployment's
    profile kinds (in declaration order), its default kinds and the node types its profiles embed."""
    listed = node_types[:MAX_FILTER_VALUES]
    return (
        f"Embedding profile kinds to search: {_either(kinds)}; default: {_both(default_kinds)}.",
        f"Only retrieve hits of these node types (each one a searched profile embeds: {_either(listed)}); "
        "null: every type the searched profiles embed.",
    )


# The descriptions for the shipped profiles file (a unit test keeps these values equal to it); a server
# serves those of its own profiles file (brain_graph.serving.graphql.schema.build_schema).
PROFILE_KINDS_DOC, NODE_TYPES_DOC = filter_docs(
    ("work", "doc", "code"), ("work", "doc"), ("cdm.work_item", "cdm.doc", "code.file")
)


@state_form("SearchFilter", "The normalised ``filter``: every field present.")
class BrainSearchFilterInput(WireModel):
    """Who and what to search: the tenant is mandatory, everything else narrows the search."""

    model_config = ConfigDict(strict=True)  # JSON types only: "5" or true is no number, "false" no boolean

    tenant_id: Annotated[
        str, GraphQL(description="Tenant whose data is searched; a token names the tenants it may search.")
    ] = Field(
        min_length=1,
        max_length=MAX_TENANT_CHARS,
        description="Tenant whose data is searched. Required; nothing outside it is ever returned.",
    )
    project_key: str | None = Field(
        default=None, max_length=MAX_PROJECT_CHARS, description="Only retrieve hits from this project."
    )
    profile_kind_in: Annotated[
        list[str] | None,
        GraphQL(description=PROFILE_KINDS_DOC),
    ] = Field(
        default=None,
        description="Embedding profile kinds to search (e.g. work, doc, code). "
        "Default: the registry's default profiles (work and doc).",
    )
    secured: Annotated[
        bool,
        GraphQL(
            description="Secured items are visible only to a principal listed in their ACL; false: public items only."
        ),
    ] = Field(
        default=True,
        strict=True,
        description="Secured mode: secured items are visible only to a principal listed in their ACL; "
        "without a principal the search fails closed. When false, secured items are never returned.",
    )

    node_types: Annotated[list[str] | None, GraphQL(description=NODE_TYPES_DOC)] = Field(
        default=None,
        min_length=1,
        max_length=MAX_FILTER_VALUES,
        description="Only retrieve hits of these node types (each one a searched profile embeds); "
        "null: every type the searched profiles embed.",
    )
    namespaces: list[str] | None = Field(
        default=None,
        min_length=1,
        max_length=MAX_FILTER_VALUES,
        description="Only retrieve hits in one of these namespaces (case-insensitive): a node's namespace "
        "field, else the top-level directory of its path (src/<name> gives <name>).",
    )
    tags: list[str] | None = Field(
        default=None,
        min_length=1,
        max_length=MAX_FILTER_VALUES,
        description="Only retrieve hits with at least one of these tags (case-insensitive).",
    )
    updated_after: str | None = Field(
        default=None,
        description="Only retrieve hits updated at or after this ISO-8601 date or time (UTC unless it "
        "has an offset); hits without an update time are left out.",
    )
    max_age_days: int | None = Field(
        default=None,
        ge=1,
        le=MAX_AGE_DAYS,
        description="Only retrieve hits updated at most this many days before asOf; with updatedAfter "
        "the later cutoff applies.",
    )
    as_of: str | None = Field(
        default=None,
        description="The request time maxAgeDays counts back from (ISO-8601); null: the deployment's "
        "clock (BRAIN_GRAPH_CLOCK), and without one maxAgeDays is refused.",
    )

    @field_validator("tenant_id", "project_key")
    @classmethod
    def _usable_identifier(cls, value: str | None) -> str | None:
        if value is not None:
            problem = identifier_problem(value, MAX_TENANT_CHARS)
            if problem is not None:
                raise ValueError(problem)
        return value

    @field_validator("node_types", "namespaces", "tags")
    @classmethod
    def _usable_values(cls, values: list[str] | None) -> list[str] | None:
        for value in values or ():
            problem = identifier_problem(value, MAX_FILTER_VALUE_CHARS)
            if problem is not None:
                raise ValueError(f"entry {value[:MAX_FILTER_VALUE_CHARS]!r} {problem}")
        return values

    @field_validator("updated_after", "as_of")
    @classmethod
    def _timestamp(cls, value: str | None) -> str | None:
        if value is not None:
            parse_timestamp(value)
        return value


@state_form("SearchOptions", "The normalised ``options``: every field present, defaults applied.")
class BrainSearchOptionsInput(WireModel):
    """Bounds of the search. Defaults are the seed's."""

    model_config = ConfigDict(strict=True)  # JSON types only: "5" or true is no number, "false" no boolean

    top_k: Annotated[int, UNDESCRIBED_IN_SDL] = Field(
        default=20, ge=1, le=MAX_TOP_K, description="Number of vector hits."
    )
    max_episodes: Annotated[int, UNDESCRIBED_IN_SDL] = Field(
        default=10, ge=0, le=MAX_MAX_EPISODES, description="Maximum number of episodes returned."
    )
    expand_depth: Annotated[int, UNDESCRIBED_IN_SDL] = Field(
        default=1, ge=0, description="Graph hops expanded around the hits (maximum configurable, 3 by default)."
    )
    max_nodes: Annotated[int, UNDESCRIBED_IN_SDL] = Field(
        default=200, ge=1, le=MAX_MAX_NODES, description="Maximum number of graph nodes, hits included."
    )
    include_episodes: Annotated[bool, UNDESCRIBED_IN_SDL] = Field(
        default=True, description="Score episodes (cluster nodes) of the hits."
    )
    include_signals: Annotated[bool, UNDESCRIBED_IN_SDL] = Field(
        default=True, description="Expand HAS_SIGNAL edges to signal nodes."
    )
    include_clusters: Annotated[bool, UNDESCRIBED_IN_SDL] = Field(
        default=True, description="Expand IN_CLUSTER edges to cluster nodes."
    )
    retrieval_mode: Annotated[RetrievalMode | None, UNDESCRIBED_IN_SDL] = Field(
        default=None,
        description="How hits are found: vector (similarity), lexical (BM25 over ids, titles and texts) or "
        "hybrid (both, fused); null: the deployment's default (hybrid where the backend has lexical documents).",
    )
    min_score: Annotated[float | None, UNDESCRIBED_IN_SDL] = Field(
        default=None,
        ge=0.0,
        le=MAX_MIN_SCORE,
        allow_inf_nan=False,
        description="Candidates whose adjustedScore is below it are not cited, and episodes without a member "
        "at or above it are not listed; null: no floor.",
    )


@state_form(
    "SearchHit",
    """A node found by retrieval: ``score`` is its retrieval score (``vectorScore`` plus its lexical
    term, 6 decimals), ``vectorScore`` its similarity in 0..1 (None in lexical mode) and
    ``lexicalScore`` its BM25 score (None when lexical retrieval did not find it).""",
)
class BrainSearchHit(WireModel):
    """A node found by vector similarity or lexical match."""

    node_id: NodeId
    node_type: str
    profile_id: str
    profile_kind: str
    score: float = Field(
        description="Retrieval score, higher is better: the similarity in 0..1 plus the lexical term "
        "(scoringBreakdown.lexical of its candidate), rounded to 6 decimals."
    )
    title: str | None = None
    url: str | None = None
    vector_score: Annotated[float | None, UNDESCRIBED_IN_SDL] = Field(
        default=None, description="Similarity to the query in 0..1; null in lexical mode."
    )
    lexical_score: Annotated[float | None, UNDESCRIBED_IN_SDL] = Field(
        default=None,
        description="BM25 score of the hit's lexical document; null when lexical retrieval did not find it.",
    )


@state_form("GraphNode", "A node of the expanded neighbourhood: its label and metadata properties.")
class BrainGraphNode(WireModel):
    """A node of the expanded neighbourhood."""

    node_id: NodeId
    node_type: str
    label: str | None = None
    properties: JsonObject = Field(default_factory=dict)


@state_form("GraphEdge", "A directed, typed edge between two nodes of the neighbourhood.")
class BrainGraphEdge(WireModel):
    """A directed edge between two nodes of the expanded neighbourhood."""

    edge_type: str
    from_node_id: NodeId
    to_node_id: NodeId
    properties: JsonObject = Field(default_factory=dict)


@state_form("SearchEpisode", "A cluster grouping hits, scored by the sum of its member hits' scores.")
class BrainSearchEpisode(WireModel):
    """A cluster node that groups hits, scored by the sum of its member hits' scores."""

    cluster_node_id: NodeId
    cluster_kind: str
    project_key: str
    score: float
    size: Annotated[int, UNDESCRIBED_IN_SDL] = Field(
        description="Number of members of the cluster visible to the caller."
    )
    member_node_ids: Annotated[list[NodeId], UNDESCRIBED_IN_SDL] = Field(
        description="The hits that are members, best first."
    )


@state_form("RagPassage", "A bounded text passage for the prompt.")
class BrainRagPassage(WireModel):
    """A bounded text passage taken from a ranked node, for the prompt."""

    source_node_id: NodeId
    source_kind: SourceKind
    text: str
    url: str | None = None


@state_form(
    "CandidateSupport",
    """One seed's part in a candidate's graph evidence: the seed (a hit) and its score, the best path
    from it (``hops`` long, its last edge ``edgeType`` from ``viaNodeId``, ``direction`` ``out`` when
    that edge points from ``viaNodeId`` to the candidate), the path's weight and the score it adds.""",
)
class BrainCandidateSupport(WireModel):
    """One seed's part in a candidate's graph evidence."""

    seed_node_id: NodeId
    seed_score: float
    hops: int
    via_node_id: NodeId
    edge_type: str
    direction: Literal["out", "in"]
    path_weight: float
    contribution: Annotated[float, UNDESCRIBED_IN_SDL] = Field(
        description="linkWeight * (seedScore - marginFloor) * pathWeight, rounded (0 beyond the maxSeeds strongest)."
    )


@state_form(
    "ScoringBreakdown",
    """Every term of ``adjustedScore = vector + lexical + graph``: ``lexical`` is the node's BM25
    score over the best BM25 score of the search, times ``lexicalWeight`` and the spread of the vector
    hits' similarities (0 unless lexical retrieval found it); ``graph`` is the sum of the ``support``
    contributions, each ``linkWeight * (seedScore - marginFloor) * pathWeight``, at most ``ceiling``
    minus ``vector + lexical`` (never below 0) when there is a ceiling.""",
)
class BrainScoringBreakdown(WireModel):
    """Every term of adjustedScore = vector + lexical + graph."""

    vector: float
    lexical: Annotated[float, UNDESCRIBED_IN_SDL] = Field(
        default=0.0,
        description="lexicalWeight * similarity spread * BM25 score / the search's best BM25 score; "
        "0 without a lexical hit.",
    )
    graph: float
    margin_floor: Annotated[float, UNDESCRIBED_IN_SDL] = Field(
        description="The weakest hit's score; a seed lends its margin above it."
    )
    link_weight: float
    support: list[BrainCandidateSupport]
    ceiling: Annotated[float | None, UNDESCRIBED_IN_SDL] = Field(
        description=(
            "The score graph evidence may lift the node to: the best counted seedScore (marginFloor for a "
            "node without a retrieval score); null without a seed ceiling or without support."
        )
    )


@state_form("CandidateVia", "How a node reached by expansion was reached: its strongest supporting seed and path.")
class BrainCandidateVia(WireModel):
    """How a node reached by expansion was reached: its strongest supporting seed and path."""

    seed_node_id: NodeId
    via_node_id: NodeId
    edge_type: str
    direction: Literal["out", "in"]
    hops: int


@state_form(
    "SearchCandidate",
    """A ranked candidate of the pack: a hit (``hops`` 0; ``reachedBy`` ``exact`` when the query is its
    id, the key part of its id or its title, else ``vector`` or ``lexical``: how it was found) or a
    node reached by expansion (``graph``, ``via`` says from where). ``vectorScore`` is its similarity
    to the query in 0..1 (None without a vector in the searched profiles, from ``profileId``, and in
    lexical mode).""",
)
class BrainSearchCandidate(WireModel):
    """A ranked candidate: a hit or a node reached by expansion, with its scores."""

    node_id: NodeId
    node_type: str
    title: str | None = None
    url: str | None = None
    profile_id: str | None = None
    vector_score: float | None = Field(description="Similarity to the query in 0..1; null without a vector.")
    adjusted_score: Annotated[float, UNDESCRIBED_IN_SDL] = Field(
        description="vectorScore plus the lexical and graph evidence (scoringBreakdown)."
    )
    reached_by: ReachedBy
    hops: int
    via: BrainCandidateVia | None = None
    scoring_breakdown: BrainScoringBreakdown


@state_form(
    "Citation",
    """A structured citation of the prompt pack, in rank order: the seed's four fields, plus the
    scores and how the item was reached (``via`` for items reached by expansion).""",
)
class BrainCitation(WireModel):
    """A structured citation of the prompt pack, in rank order."""

    source_node_id: NodeId
    url: str | None
    title: str | None
    node_type: str
    vector_score: float | None = None
    adjusted_score: float
    reached_by: ReachedBy
    via: BrainCandidateVia | None = None


@state_form("PromptPack", "Markdown context and structured citations.")
class BrainPromptPack(WireModel):
    """Markdown context and structured citations to feed an LLM."""

    context_markdown: str
    # The seed serves the citations as one JSON value.
    citations: Annotated[list[BrainCitation], GraphQL(type="JSON", description="in rank order.")]


@state_form(
    "FiltersApplied",
    """The seed filter a search applied, resolved: profile kinds searched, values normalised
    (namespaces and tags case-folded, sorted), ``updatedAfter`` the effective recency cutoff.""",
)
class BrainFiltersApplied(WireModel):
    """What narrowed the retrieval, as applied: the graph-reached candidates are not filtered."""

    project_key: str | None = Field(default=None, description="The project hits were retrieved from; null: all.")
    profile_kinds: list[str] = Field(default_factory=list, description="The profile kinds searched.")
    node_types: list[str] | None = Field(default=None, description="Node types hits were retrieved from; null: all.")
    namespaces: list[str] | None = Field(default=None, description="Namespaces (case-folded); null: all.")
    tags: list[str] | None = Field(default=None, description="Tags, at least one of which a hit has (case-folded).")
    updated_after: str | None = Field(
        default=None,
        description="The effective recency cutoff (UTC): the later of updatedAfter and asOf minus maxAgeDays.",
    )
    max_age_days: int | None = None
    as_of: str | None = Field(default=None, description="The request time maxAgeDays counted back from (UTC).")


@state_form("SearchWarning", "Something that made the result narrower than asked, for the caller to act on.")
class BrainSearchWarning(WireModel):
    """A condition of the search a caller should know about: a stable ``code`` and a one-line message."""

    code: str
    message: str


@state_form(
    "BrainSearchOutput", "What a caller gets back: the fields of :class:`brain_graph.core.contracts.BrainSearchResult`."
)
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
    filters_applied: BrainFiltersApplied | None = Field(
        default=None, description="The filter retrieval applied, resolved."
    )
    warnings: list[BrainSearchWarning] = Field(
        default_factory=list, description="Conditions that narrowed the result (e.g. items without timestamps)."
    )
    graph_context_included: bool = Field(
        default=True,
        description="False: the graph store was unavailable and the result holds vector matches only, without "
        "graph context (warning graph_unavailable).",
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


@state_form(
    "SearchRequestFields",
    """A validated request's fields, every one present, defaults applied (``SearchRequest`` adds the
    profiles it searches).""",
)
class BrainSearchRequest(WireModel):
    """The graph's input: ``{queryText, filter, options}``."""

    query_text: Annotated[QueryText, UNDESCRIBED_IN_SDL]
    filter: BrainSearchFilterInput
    options: BrainSearchOptionsInput = Field(default_factory=BrainSearchOptionsInput)
