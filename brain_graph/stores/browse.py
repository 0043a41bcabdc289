"""Store reads of the read-only graph API: one node's relationships, a page at a time, outside
searches. Built on the reads every backend has (:meth:`~brain_graph.stores.base.GraphStore.get_nodes`
and :meth:`~brain_graph.stores.base.GraphStore.links`), so it enforces what they enforce: a node the
scope cannot see is as missing, and so is a relationship whose other end it cannot see. Relationship
types are always named by the caller from the expansion allowlist (:class:`~brain_graph.core.edges.EdgeRegistry`);
no read lists edges of other types.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from brain_graph.core.security import AccessScope
from brain_graph.stores.base import GraphStore, NodeRecord

Direction = Literal["incoming", "outgoing", "all"]
DIRECTIONS: tuple[Direction, ...] = ("outgoing", "incoming", "all")
MAX_BROWSED_NEIGHBOURS = 10_000  # a node with more visible neighbours over the allowlist is refused


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


@dataclass(frozen=True)
class RelationshipPage:
    """What :func:`relationship_page` read: the browsed node (None: not visible), the page, and
    whether more relationships follow it. ``too_connected``: the node has more than
    :data:`MAX_BROWSED_NEIGHBOURS` visible neighbours over the types, and none were listed."""

    node: NodeRecord | None
    relationships: list[Relationship]
    has_more: bool
    too_connected: bool = False


def wanted(outgoing: bool, direction: Direction) -> bool:
    """Whether a relationship of this direction is asked for."""
    return direction == "all" or outgoing == (direction == "outgoing")


def relationship_page(
    graph: GraphStore,
    node_id: str,
    *,
    scope: AccessScope,
    direction: Direction,
    edge_types: Sequence[str],
    after: RelationshipKey | None,
    limit: int,
) -> RelationshipPage:
    """The first ``limit`` relationships of ``edge_types`` in ``direction`` between the visible node
    ``node_id`` and visible nodes other than itself, ordered by :class:`RelationshipKey`, those after
    ``after`` only: :func:`relationship_pages` of one direction."""
    [page] = relationship_pages(
        graph, node_id, scope=scope, directions=(direction,), edge_types=edge_types, after=after, limit=limit
    )
    return page


def relationship_pages(
    graph: GraphStore,
    node_id: str,
    *,
    scope: AccessScope,
    directions: Sequence[Direction],
    edge_types: Sequence[str],
    after: RelationshipKey | None,
    limit: int,
) -> list[RelationshipPage]:
    """One :class:`RelationshipPage` per direction of ``directions`` (see :func:`relationship_page`),
    all read in three round trips whatever the degree and the number of directions: the node, its
    links (counted no further than :data:`MAX_BROWSED_NEIGHBOURS` + 1), the pages' neighbours."""
    found = graph.get_nodes([node_id], scope=scope)
    node = next((record for record in found if record.node_id == node_id), None)
    if node is None or not edge_types:
        return [RelationshipPage(node, [], False) for _ in directions]
    neighborhood = graph.links([node_id], scope=scope, edge_types=edge_types, max_degree=MAX_BROWSED_NEIGHBOURS)
    if neighborhood.degrees.get(node_id, 0) > MAX_BROWSED_NEIGHBOURS:
        return [RelationshipPage(node, [], False, too_connected=True) for _ in directions]
    linked = sorted(
        {
            RelationshipKey(link.edge_type, link.outgoing, link.neighbor_id)
            for link in neighborhood.links
            if link.frontier_id == node_id
        }
    )
    keys = [
        [key for key in linked if wanted(key.outgoing, direction) and (after is None or key > after)]
        for direction in directions
    ]
    pages = [found_keys[:limit] for found_keys in keys]
    wanted_ids = sorted({key.neighbor_id for page in pages for key in page})
    neighbours = {record.node_id: record for record in graph.get_nodes(wanted_ids, scope=scope)}
    return [
        RelationshipPage(
            node,
            [
                Relationship(k.edge_type, k.outgoing, neighbours[k.neighbor_id])
                for k in page
                if k.neighbor_id in neighbours
            ],
            len(found_keys) > limit,
        )
        for page, found_keys in zip(pages, keys, strict=True)
    ]
