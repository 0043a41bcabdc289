"""The graph's typed state, its input and output schemas, and its runtime context.

Everything in the state is JSON-native (the TypedDicts of :mod:`brain_graph.core.wire`), so checkpoints,
strict msgpack, HTTP streaming and Studio all see the values the steps wrote.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Literal, NotRequired

from pydantic import Field
from typing_extensions import TypedDict

from brain_graph.auth.principals import as_principal
from brain_graph.core.contracts import BrainSearchFilterInput, BrainSearchOptionsInput, QueryText
from brain_graph.core.passage_heads import FieldHeadRow
from brain_graph.core.security import Principal
from brain_graph.core.wire import BrainSearchOutput as BrainSearchOutput  # the graph's output schema
from brain_graph.core.wire import NodeMeta, SearchRequest
from brain_graph.pipeline.requests import check_context_services


class BrainSearchInput(TypedDict):
    """What a caller sends: ``{queryText, filter, options}`` (the seed's ``brainSearch`` arguments).

    The annotations are the JSON schema of LangGraph Studio's input form; ``embed`` validates the
    values against :class:`brain_graph.core.contracts.BrainSearchRequest` and writes ``request``.
    """

    queryText: QueryText
    filter: Annotated[
        BrainSearchFilterInput,
        Field(
            title="Filter",
            description="Tenant (required), secured mode, and what narrows retrieval: project, profile kinds, "
            "node types, namespaces, tags, recency.",
        ),
    ]
    options: NotRequired[
        Annotated[
            BrainSearchOptionsInput,
            Field(title="Options", description="Bounds of the search; every option has a default."),
        ]
    ]


class LinkRow(TypedDict):
    """A :class:`~brain_graph.stores.base.Link` in the state."""

    frontierId: str
    edgeType: str
    neighborId: str
    outgoing: bool


class ScoreRow(TypedDict):
    """A :class:`~brain_graph.stores.base.VectorHit` in the state."""

    nodeId: str
    profileId: str
    score: float


HitHow = Literal["exact", "vector", "lexical"]


class HitSource(TypedDict):
    """How a hit was found (``exact``: the query names it; else ``vector`` or ``lexical``) and the
    lexical term of its retrieval score (0 when lexical retrieval did not find it)."""

    reachedBy: HitHow
    lexical: float


class SeedScores(TypedDict):
    """:class:`~brain_graph.stores.base.ScoredNeighbors` in the state: the vector scores, in
    ``profileIds``, of the nodes ``seedLinks`` reach (other than the hits)."""

    profileIds: list[str]
    scores: list[ScoreRow]


class MembershipRow(TypedDict):
    """A :class:`~brain_graph.stores.base.ClusterMembership` in the state (``cluster`` None: its
    metadata is in ``nodeRecords``)."""

    memberId: str
    clusterId: str
    clusterSize: int
    cluster: NodeMeta | None


class PassageTexts(TypedDict):
    """The passage fields of the visible nodes among ``nodeIds`` (the candidates passages are made
    of), as :class:`~brain_graph.core.passage_heads.FieldHead` rows: bounded however long the stored text."""

    nodeIds: list[str]
    texts: dict[str, dict[str, FieldHeadRow]]


class BrainSearchState(BrainSearchInput, BrainSearchOutput, total=False):
    """Input, output and the intermediate keys, each written by one node and never reshaped.

    ``embed`` writes ``request`` (the validated request, defaults applied) and ``queryVectors`` (embedder id
    -> vector); ``retrieve`` writes ``hits``, ``hitSources`` (how each was found, its lexical term),
    ``nodeRecords`` (metadata of the nodes read so far, by id),
    ``seedLinks`` (the first hop's links of the hits, read with them; None without expansion) and
    ``seedScores`` (the similarity of the nodes those links reach in some profiles, when the backend read it
    with them, else None); ``expand`` ``graphNodes``, ``graphEdges``, more ``nodeRecords``, ``candidates``
    (hits and expanded nodes ranked by :mod:`brain_graph.pipeline.ranking`), and what the next steps need, read in
    the same round trip as its last graph read: ``clusterMemberships`` (of the hits; None when episodes are
    off) and ``passageTexts`` (of the candidates passages are made of); ``score_episodes`` ``episodes`` and
    ``episodeLabels``; ``assemble_passages`` ``passages``; ``build_pack`` ``promptPack``. ``callerKey`` names the
    principal the rest was read for (:mod:`brain_graph.pipeline.run_binding`), written with ``embed``'s
    update. Each datum has one read path: a step uses what the step that read it wrote, never reads it
    again.
    """

    request: SearchRequest
    queryVectors: dict[str, list[float]]
    hitSources: dict[str, HitSource]
    nodeRecords: dict[str, NodeMeta]
    seedLinks: list[LinkRow] | None
    seedScores: SeedScores | None
    clusterMemberships: list[MembershipRow] | None
    passageTexts: PassageTexts
    episodeLabels: dict[str, str]
    callerKey: str


def search_input(
    query_text: str,
    tenant_id: str,
    *,
    project_key: str | None = None,
    profile_kinds: list[str] | None = None,
    secured: bool = True,
    options: Mapping[str, Any] | None = None,
    node_types: list[str] | None = None,
    namespaces: list[str] | None = None,
    tags: list[str] | None = None,
    updated_after: str | None = None,
    max_age_days: int | None = None,
    as_of: str | None = None,
) -> BrainSearchInput:
    """The graph input for a search, in the contract's camelCase (validated by ``embed``); filters
    left None are not sent."""
    narrowing = {
        "nodeTypes": node_types,
        "namespaces": namespaces,
        "tags": tags,
        "updatedAfter": updated_after,
        "maxAgeDays": max_age_days,
        "asOf": as_of,
    }
    return BrainSearchInput(
        queryText=query_text,
        filter={  # type: ignore[typeddict-item]  # the JSON form of BrainSearchFilterInput
            "tenantId": tenant_id,
            "projectKey": project_key,
            "profileKindIn": profile_kinds,
            "secured": secured,
            **{key: value for key, value in narrowing.items() if value is not None},
        },
        options=dict(options or {}),  # type: ignore[typeddict-item]
    )


@dataclass(frozen=True)
class BrainSearchContext:
    """Run-scoped dependencies (LangGraph runtime context).

    ``principal`` is the authenticated caller, required for secured searches: a
    :class:`~brain_graph.core.security.Principal` or its JSON form ``{principalId, groups}``, validated
    once here. ``services`` overrides the stores and profiles the graph was built with. When
    brain-graph runs as a subgraph, the parent's context is used if it has these attributes.
    """

    principal: Principal | None = None
    services: Any = None  # SearchServices; typed loosely so the context has a JSON schema for Studio

    def __post_init__(self) -> None:
        object.__setattr__(self, "principal", as_principal(self.principal))
        check_context_services(self.services)
