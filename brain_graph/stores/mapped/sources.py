"""Where a mapped profile's vectors are read from: the protocol each vector source implements.

A source only finds and returns stored vectors of one tenant; the mapped backend checks every id it
returns against the graph (tenant, ACL, project) and scores the vectors itself with the one formula
of :mod:`brain_graph.stores.exact`, so a source never decides what a caller may see or what a score is.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable


@runtime_checkable
class VectorSource(Protocol):
    """The vectors of one profile in a store the team already has (read only)."""

    profile_id: str

    def nearest(self, vector: Sequence[float], *, tenant_id: str, limit: int) -> list[tuple[str, list[float]]]:
        """Up to ``limit`` ``(node id, stored vector)`` pairs of the tenant nearest to ``vector`` by the
        source's own index (approximate when the index is), in its order. One request."""
        ...

    def vectors_of(self, node_ids: Sequence[str], *, tenant_id: str) -> dict[str, list[float]]:
        """The stored vectors of the tenant's nodes among ``node_ids`` that have one. One request."""
        ...

    def dimension(self) -> int | None:
        """The dimension of the stored vectors (None when the source holds none yet)."""
        ...

    def close(self) -> None:
        """Release connections."""
        ...
