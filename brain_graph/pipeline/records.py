"""The state's JSON forms of the store records the steps pass on to each other."""

from __future__ import annotations

from brain_graph.core.wire import NodeMeta
from brain_graph.pipeline.state import LinkRow, MembershipRow, SeedScores
from brain_graph.stores.base import ClusterMembership, Link, NodeRecord, ScoredNeighbors


def node_meta(node: NodeRecord) -> NodeMeta:
    """What later steps need of a node (never its text or ACL)."""
    return {
        "nodeType": node.node_type,
        "projectKey": node.project_key,
        "title": node.title,
        "url": node.url,
        "properties": dict(node.properties),
    }


def link_row(link: Link) -> LinkRow:
    """A link as the state holds it."""
    return {
        "frontierId": link.frontier_id,
        "edgeType": link.edge_type,
        "neighborId": link.neighbor_id,
        "outgoing": link.outgoing,
    }


def row_links(rows: list[LinkRow], frontier: list[str]) -> list[Link]:
    """The links among ``rows`` of the frontier's nodes, as the store gave them (still sorted)."""
    ids = set(frontier)
    return [
        Link(row["frontierId"], row["edgeType"], row["neighborId"], row["outgoing"])
        for row in rows
        if row["frontierId"] in ids
    ]


def seed_scores(scored: ScoredNeighbors) -> SeedScores:
    """The similarity a backend read with a hop's links, as the state holds it."""
    return {
        "profileIds": list(scored.profile_ids),
        "scores": [{"nodeId": h.node_id, "profileId": h.profile_id, "score": h.score} for h in scored.hits],
    }


def membership_row(membership: ClusterMembership) -> MembershipRow:
    """A cluster membership as the state holds it."""
    cluster = membership.cluster
    return {
        "memberId": membership.member_id,
        "clusterId": membership.cluster_id,
        "clusterSize": membership.cluster_size,
        "cluster": node_meta(cluster) if cluster is not None else None,
    }
