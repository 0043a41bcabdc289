"""Everything a search needs besides its request: stores, embedding profiles, edge allowlist, limits."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import ClassVar

from brain_graph.core.contracts import RetrievalMode
from brain_graph.core.edges import EdgeRegistry
from brain_graph.core.errors import ConfigurationError
from brain_graph.embedding.profiles import ProfileRegistry, default_profiles
from brain_graph.pipeline.ranking import GraphScoring
from brain_graph.stores.base import StorageBackend

DEFAULT_MAX_EXPAND_DEPTH = 3


@dataclass(frozen=True)
class SearchLimits:
    """Bounds that are deployment configuration rather than request options.

    Passages: each passage text is at most ``max_passage_chars``; each field within it at most its
    excerpt limit (titles ``max_title_chars``); all passages together, each counted with the fence
    the prompt pack puts around it, at most ``passage_budget_chars``; a passage that would be cut
    below ``min_passage_chars`` is left out with the ones after it. Prompt pack: at most
    ``max_citations`` candidates are cited and listed, and at most ``max_facts`` relationships among
    them; what it prints of a title or label is at most ``max_title_chars`` characters, of an id,
    tenant or project key ``max_id_chars``, of a node type or kind ``max_kind_chars``; urls longer
    than ``max_url_chars`` are left out of the markdown. Together these bound the markdown
    (``brain_graph.nodes.build_pack.context_markdown_bound``).
    """

    max_expand_depth: int = DEFAULT_MAX_EXPAND_DEPTH
    passage_budget_chars: int = 30_000
    max_passage_chars: int = 2_000
    min_passage_chars: int = 200
    doc_excerpt_chars: int = 1_500
    summary_excerpt_chars: int = 600
    description_excerpt_chars: int = 600
    code_excerpt_chars: int = 1_200
    max_passages: int = 40
    max_citations: int = 60
    max_facts: int = 60
    max_title_chars: int = 200
    max_id_chars: int = 160
    max_kind_chars: int = 40
    max_url_chars: int = 300

    MIN_INLINE_CHARS: ClassVar[int] = 8  # room for a cut marker in the escaped or code-span form of a field

    @property
    def longest_excerpt_chars(self) -> int:
        """The longest excerpt of a text field a passage may show."""
        return max(
            self.doc_excerpt_chars, self.summary_excerpt_chars, self.description_excerpt_chars, self.code_excerpt_chars
        )

    def __post_init__(self) -> None:
        for name in ("max_title_chars", "max_id_chars", "max_kind_chars"):
            if getattr(self, name) < self.MIN_INLINE_CHARS:
                raise ConfigurationError(f"SearchLimits.{name} must be at least {self.MIN_INLINE_CHARS}")
        for name, value in vars(self).items():
            if value < 0:
                raise ConfigurationError(f"SearchLimits.{name} must not be negative")


@dataclass(frozen=True)
class SearchServices:
    """The dependencies of the pipeline, handed to the nodes through the LangGraph runtime context.
    ``scoring`` holds the settings of the graph-aware ranking (:mod:`brain_graph.pipeline.ranking`).

    ``service_principal`` enables the service-principal mode: a secured search without a principal
    sees every item of its tenant instead of failing closed. Off unless configured.
    ``degrade_without_graph``: a search whose graph store is down answers a vector-only result
    (``graphContextIncluded`` false, a ``graph_unavailable`` warning) on a backend that can
    (:mod:`brain_graph.stores.vector_only`); False: it fails with the store's
    :class:`~brain_graph.core.errors.BackendUnavailableError`. On unless configured.
    ``retrieval_mode`` is the mode of a request that names none (:meth:`default_mode`). ``clock`` gives
    the request time a ``maxAgeDays`` filter counts back from when the request has no ``asOf``; None:
    such a request is refused (:mod:`brain_graph.pipeline.filters`).
    """

    backend: StorageBackend
    profiles: ProfileRegistry = field(default_factory=default_profiles)
    edges: EdgeRegistry = field(default_factory=EdgeRegistry)
    limits: SearchLimits = field(default_factory=SearchLimits)
    scoring: GraphScoring = field(default_factory=GraphScoring)
    service_principal: bool = False
    degrade_without_graph: bool = True
    retrieval_mode: RetrievalMode | None = None
    clock: Callable[[], int] | None = None  # the request time of maxAgeDays without asOf (microseconds, UTC)

    @property
    def lexical(self) -> bool:
        """Whether the backend holds lexical documents (a backend that does not say has none)."""
        return bool(getattr(self.backend, "supports_lexical", False))

    def default_mode(self) -> RetrievalMode:
        """The mode of a request that names none: ``retrieval_mode`` when set, else hybrid where the
        backend holds lexical documents and vector elsewhere."""
        if self.retrieval_mode is not None:
            return self.retrieval_mode
        return "hybrid" if self.lexical else "vector"
