"""Store reads of the read-only graph API (browsing one node's relationships, finding nodes by title),
outside searches. Every read takes an :class:`~brain_graph.core.security.AccessScope` and returns only
what is visible in it: a node the scope cannot see is as missing, and so is a relationship whose other
end it cannot see. Relationship types are always named by the caller from the expansion allowlist
(:class:`~brain_graph.core.edges.EdgeRegistry`); no read lists edges of other types.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol, runtime_checkable

from brain_graph.core.security import AccessScope
from brain_graph.stores.base import NodeRecord

Direction = Literal["incoming", "outgoing", "all"]
DIRECTIONS: tuple[Direction, ...] = ("outgoing", "incoming", "all")


@dataclass(frozen=True, order=True)
class RelationshipKey:
    """Where a relationship sorts among a node's relationships, and a page's resume point: edge type,
    then ``outgoing`` (incoming, False, first), then the other end's id (code-point order)."""

    edge_type: str
    outgoing: bool
    neighbor_id: str


@dataclass(frozen=True)
class Relationship:
    """An edge between the browsed node and a visible node other than itself, seen from the browsed
    node, with the other end's metadata (``text`` empty)."""

    edge_type: str
    outgoing: bool
    neighbor: NodeRecord

    @property
    def key(self) -> RelationshipKey:
        return RelationshipKey(self.edge_type, self.outgoing, self.neighbor.node_id)


@runtime_checkable
class GraphBrowser(Protocol):
    """The graph API's reads; one round trip each."""

    def relationships(
        self,
        node_id: str,
        *,
        scope: AccessScope,
        direction: Direction,
        edge_types: Sequence[str],
        after: RelationshipKey | None,
        limit: int,
    ) -> list[Relationship]:
        """The first ``limit`` relationships of ``edge_types`` in ``direction`` between the visible
        node ``node_id`` and visible nodes other than itself, ordered by :class:`RelationshipKey`, those
        after ``after`` only (all when None); empty when ``node_id`` is not visible. Reads no more edges
        than the page needs (keyset pagination, not an offset)."""
        ...

    def title_matches(
        self, prefix: str, *, scope: AccessScope, node_types: Sequence[str] | None, limit: int
    ) -> list[NodeRecord]:
        """The first ``limit`` visible nodes (of ``node_types``, all types when None) whose title, lower-cased
        (:func:`brain_graph.core.text.title_key`), starts with ``prefix`` or has a word starting with it
        (``prefix`` already lower-cased, not empty), ordered by lower-cased title then id; metadata only."""
        ...
