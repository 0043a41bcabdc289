"""Step 4: episodes, the cluster nodes the hits belong to, scored by the sum of member hit scores."""

from __future__ import annotations

import math
from typing import Any

from brain_graph.contracts import BrainSearchEpisode, BrainSearchHit
from brain_graph.requests import access_scope, read_list, read_request
from brain_graph.state import BrainSearchState
from brain_graph.steps import StepDeps
from brain_graph.stores.base import SCORE_DECIMALS


def score_episodes(state: BrainSearchState, deps: StepDeps) -> dict[str, Any]:
    """Write ``episodes`` and ``episodeLabels`` (cluster id -> title, for the pack).

    Episodes are the top ``maxEpisodes`` clusters reachable via IN_CLUSTER from the hits, ordered by
    score descending then cluster id; members are the hits in the cluster, best first. One
    cluster-membership call, whatever the number of hits.
    """
    services = deps.services
    request = read_request(state, services)
    options = request.options
    if not options.include_episodes or options.max_episodes == 0:
        return {"episodes": [], "episodeLabels": {}}
    hits = read_list(state, "hits", BrainSearchHit)
    if not hits:
        return {"episodes": [], "episodeLabels": {}}
    scope = access_scope(request, deps.principal, services)
    rank = {hit.node_id: index for index, hit in enumerate(hits)}
    score = {hit.node_id: hit.score for hit in hits}
    memberships = services.backend.graph_store.cluster_memberships(list(rank), scope=scope)

    clusters: dict[str, tuple[Any, list[str]]] = {}
    for membership in memberships:
        if membership.member_id not in rank:
            continue
        entry = clusters.setdefault(membership.cluster.node_id, (membership, []))
        entry[1].append(membership.member_id)
    episodes = []
    for cluster_id, (membership, members) in clusters.items():
        members.sort(key=rank.__getitem__)
        cluster = membership.cluster
        episodes.append(
            BrainSearchEpisode(
                cluster_node_id=cluster_id,
                cluster_kind=str(cluster.properties.get("clusterKind") or "cluster"),
                project_key=cluster.project_key or "",
                score=round(math.fsum(score[m] for m in members), SCORE_DECIMALS),
                size=membership.cluster_size,
                member_node_ids=members,
            )
        )
    episodes.sort(key=lambda episode: (-episode.score, episode.cluster_node_id))
    top = episodes[: options.max_episodes]
    labels = {e.cluster_node_id: clusters[e.cluster_node_id][0].cluster.title or e.cluster_node_id for e in top}
    return {"episodes": top, "episodeLabels": labels}
