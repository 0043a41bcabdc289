"""The registry of edge types that graph expansion may follow (an allowlist)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from brain_graph.core.vocabulary import HAS_SIGNAL, IN_CLUSTER, check_edge_type

DEFAULT_SAFE_EDGE_TYPES = ("DEPENDS_ON", "DOCUMENTS", "IMPLEMENTED_BY", "REFERENCES")


@dataclass(frozen=True)
class EdgeRegistry:
    """Edge types expansion may follow: HAS_SIGNAL and IN_CLUSTER (each behind its option) plus the
    types marked safe. Anything else (e.g. ASSIGNED_TO to people) is never traversed."""

    safe_edge_types: tuple[str, ...] = DEFAULT_SAFE_EDGE_TYPES

    def __post_init__(self) -> None:
        cleaned = tuple(sorted({check_edge_type(t) for t in self.safe_edge_types} - {HAS_SIGNAL, IN_CLUSTER}))
        object.__setattr__(self, "safe_edge_types", cleaned)

    @classmethod
    def with_safe(cls, edge_types: Iterable[str]) -> EdgeRegistry:
        """A registry whose safe types are ``edge_types``."""
        return cls(safe_edge_types=tuple(edge_types))

    def expansion_types(self, include_signals: bool, include_clusters: bool) -> tuple[str, ...]:
        """The sorted allowlist for one search."""
        types = set(self.safe_edge_types)
        if include_signals:
            types.add(HAS_SIGNAL)
        if include_clusters:
            types.add(IN_CLUSTER)
        return tuple(sorted(types))
