"""Everything a search needs besides its request: stores, embedding profiles, edge allowlist, limits."""

from __future__ import annotations

from dataclasses import dataclass, field

from brain_graph.edges import EdgeRegistry
from brain_graph.profiles import ProfileRegistry, default_profiles
from brain_graph.stores.base import StorageBackend

DEFAULT_MAX_EXPAND_DEPTH = 3


@dataclass(frozen=True)
class SearchLimits:
    """Bounds that are deployment configuration rather than request options."""

    max_expand_depth: int = DEFAULT_MAX_EXPAND_DEPTH
    passage_budget_chars: int = 30_000
    doc_excerpt_chars: int = 1_500
    description_excerpt_chars: int = 600
    code_excerpt_chars: int = 1_200
    max_passages: int = 40
    max_citations: int = 60


@dataclass(frozen=True)
class SearchServices:
    """The dependencies of the pipeline, handed to the nodes through the LangGraph runtime context.

    ``service_principal`` enables the service-principal mode: a secured search without a principal
    sees every item of its tenant instead of failing closed. Off unless configured.
    """

    backend: StorageBackend
    profiles: ProfileRegistry = field(default_factory=default_profiles)
    edges: EdgeRegistry = field(default_factory=EdgeRegistry)
    limits: SearchLimits = field(default_factory=SearchLimits)
    service_principal: bool = False
