"""The registry of edge types that graph expansion may follow (an allowlist)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from brain_graph.errors import ConfigurationError

HAS_SIGNAL = "HAS_SIGNAL"
IN_CLUSTER = "IN_CLUSTER"
DEFAULT_SAFE_EDGE_TYPES = ("DEPENDS_ON", "DOCUMENTS", "IMPLEMENTED_BY", "REFERENCES")

_EDGE_TYPE_PATTERN = re.compile(r"^[A-Z][A-Z0-9_]{0,63}$")


def check_edge_type(edge_type: str) -> str:
    """Return ``edge_type`` if it is a plain UPPER_SNAKE identifier, else raise."""
    if not _EDGE_TYPE_PATTERN.match(edge_type):
        raise ConfigurationError(f"edge type {edge_type!r} is not an UPPER_SNAKE_CASE identifier")
    return edge_type


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

    @property
    def all_types(self) -> tuple[str, ...]:
        """Every type this registry could ever allow."""
        return self.expansion_types(include_signals=True, include_clusters=True)
