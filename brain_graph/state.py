"""The graph's typed state, its input and output schemas, and its runtime context."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, NotRequired

from pydantic import Field
from typing_extensions import TypedDict

from brain_graph.contracts import (
    MAX_QUERY_CHARS,
    BrainGraphEdge,
    BrainGraphNode,
    BrainPromptPack,
    BrainRagPassage,
    BrainSearchEpisode,
    BrainSearchFilterInput,
    BrainSearchHit,
    BrainSearchOptionsInput,
)
from brain_graph.security import Principal
from brain_graph.services import SearchServices


class BrainSearchInput(TypedDict):
    """What a caller sends: ``{queryText, filter, options}`` (the seed's ``brainSearch`` arguments).

    The field annotations only document the JSON schema (LangGraph Studio's input form); ``embed``
    validates the values against :class:`brain_graph.contracts.BrainSearchRequest`.
    """

    queryText: Annotated[
        str,
        Field(
            title="Query text",
            description="Natural-language query to search for.",
            min_length=1,
            max_length=MAX_QUERY_CHARS,
        ),
    ]
    filter: Annotated[
        BrainSearchFilterInput,
        Field(title="Filter", description="Tenant (required), project, profile kinds and secured mode."),
    ]
    options: NotRequired[
        Annotated[
            BrainSearchOptionsInput,
            Field(title="Options", description="Bounds of the search; every option has a default."),
        ]
    ]


class BrainSearchOutput(TypedDict):
    """What a caller gets back: the fields of ``BrainSearchResult``."""

    hits: list[BrainSearchHit]
    episodes: list[BrainSearchEpisode]
    graphNodes: list[BrainGraphNode]
    graphEdges: list[BrainGraphEdge]
    passages: list[BrainRagPassage]
    promptPack: BrainPromptPack


class BrainSearchState(BrainSearchInput, BrainSearchOutput, total=False):
    """Input, output and the intermediate keys, each written by one node.

    ``embed`` writes the normalised ``filter`` and ``options`` and ``queryVectors`` (embedder id ->
    vector); ``retrieve`` writes ``hits``; ``expand`` ``graphNodes``/``graphEdges``; ``score_episodes``
    ``episodes`` and ``episodeLabels``; ``assemble_passages`` ``passages``; ``build_pack`` ``promptPack``.
    """

    queryVectors: dict[str, list[float]]
    episodeLabels: dict[str, str]


@dataclass(frozen=True)
class BrainSearchContext:
    """Run-scoped dependencies (LangGraph runtime context).

    ``principal`` is the authenticated caller, required for secured searches. ``services`` overrides
    the stores and profiles the graph was built with. When brain-graph runs as a subgraph, the parent's
    context is used if it has these attributes.
    """

    principal: Principal | None = None
    services: Any = None  # SearchServices; typed loosely so the context has a JSON schema for Studio

    def search_services(self) -> SearchServices | None:
        """The services override, if any."""
        return self.services if isinstance(self.services, SearchServices) else None
