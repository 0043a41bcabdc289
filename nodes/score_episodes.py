"""Step 4: episodes, the cluster nodes the hits belong to, scored by the sum of member hit scores."""

from __future__ import annotations

import math
from typing import TypedDict

from brain_graph.core.scoring import SCORE_DECIMALS
from brain_graph.core.wire import NodeMeta, SearchEpisode
from brain_graph.pipeline.binding import StepDeps
from brain_graph.pipeline.state import BrainSearchState


class EpisodesUpdate(TypedDict):
    episodes: list[SearchEpisode]
    episodeLabels: dict[str, str]


NO_EPISODES = EpisodesUpdate(episodes=[], episodeLabels={})


def score_episodes(state: BrainSearchState, deps: StepDeps) -> EpisodesUpdate:
    """Write ``episodes`` and ``episodeLabels`` (cluster id -> title, for the pack).

    Episodes are the top ``maxEpisodes`` clusters reachable via IN_CLUSTER from the hits, ordered by
    score descending then cluster id; members are the hits in the cluster, best first (with
    ``minScore``, only the hits at or above it: an episode without such a member is not listed). The
    memberships are those ``expand`` read (``clusterMemberships``); a cluster's record is there, or in
    ``nodeRecords`` when the search read it before. Nothing is read here.
    """
    request = state["request"]
    options = request["options"]
    hits = state["hits"]
    if not options["includeEpisodes"] or options["maxEpisodes"] == 0 or not hits:
        return NO_EPISODES
    if options["minScore"] is not None:  # members must qualify: ranked, at or above the floor
        qualifying = {item["nodeId"] for item in state["candidates"]}
        hits = [hit for hit in hits if hit["nodeId"] in qualifying]
    rank = {hit["nodeId"]: index for index, hit in enumerate(hits)}
    score = {hit["nodeId"]: hit["score"] for hit in hits}
    known = state["nodeRecords"]
    memberships = state["clusterMemberships"] or []

    clusters: dict[str, tuple[NodeMeta, int, list[str]]] = {}
    for membership in memberships:
        if membership["memberId"] not in rank:
            continue
        cluster_id = membership["clusterId"]
        if cluster_id not in clusters:
            meta = membership["cluster"] if membership["cluster"] is not None else known[cluster_id]
            clusters[cluster_id] = (meta, membership["clusterSize"], [])
        clusters[cluster_id][2].append(membership["memberId"])
    episodes = []
    for cluster_id, (meta, size, members) in clusters.items():
        members.sort(key=rank.__getitem__)
        episodes.append(
            SearchEpisode(
                clusterNodeId=cluster_id,
                clusterKind=str(meta["properties"].get("clusterKind") or "cluster"),
                projectKey=meta["projectKey"] or "",
                score=round(math.fsum(score[m] for m in members), SCORE_DECIMALS),
                size=size,
                memberNodeIds=members,
            )
        )
    episodes.sort(key=lambda episode: (-episode["score"], episode["clusterNodeId"]))
    top = episodes[: options["maxEpisodes"]]
    labels = {e["clusterNodeId"]: clusters[e["clusterNodeId"]][0]["title"] or e["clusterNodeId"] for e in top}
    return {"episodes": top, "episodeLabels": labels}
