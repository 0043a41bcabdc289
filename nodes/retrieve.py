"""Step 2: vector retrieval across the selected profiles, with the hit nodes' metadata and, when the
search expands, the first hop's links of the hits, in one combined read
(:meth:`~brain_graph.stores.base.SearchReads.seeds`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypedDict

from brain_graph.core.wire import NodeMeta, SearchHit, SearchRequest
from brain_graph.pipeline.binding import StepDeps
from brain_graph.pipeline.state import BrainSearchState, LinkRow, SeedScores
from brain_graph.stores.base import Link, NodeRecord, ScoredNeighbors, VectorQuery
from brain_graph.stores.base import best_hits as merge_hits

__all__ = ["expansion_types", "link_row", "merge_hits", "node_meta", "profile_queries", "retrieve", "seed_scores"]


class RetrieveUpdate(TypedDict):
    hits: list[SearchHit]
    nodeRecords: dict[str, NodeMeta]
    seedLinks: list[LinkRow] | None
    seedScores: SeedScores | None


def node_meta(node: NodeRecord) -> NodeMeta:
    """What later steps need of a node (never its text or ACL)."""
    return {
        "nodeType": node.node_type,
        "projectKey": node.project_key,
        "title": node.title,
        "url": node.url,
        "properties": dict(node.properties),
    }


def profile_queries(
    request: SearchRequest, query_vectors: Mapping[str, list[float]], deps: StepDeps
) -> list[VectorQuery]:
    """One vector query per searched profile, with its embedder's query vector."""
    registry = deps.services.profiles
    profiles = [registry.get(profile_id) for profile_id in request["profileIds"]]
    return [VectorQuery(p.profile_id, query_vectors[p.embedder_id], registry.embedder_name(p)) for p in profiles]


def expansion_types(request: SearchRequest, deps: StepDeps) -> list[str]:
    """The edge types the search expands over and lists among its nodes."""
    options = request["options"]
    return list(deps.services.edges.expansion_types(options["includeSignals"], options["includeClusters"]))


def link_row(link: Link) -> LinkRow:
    """A link as the state holds it."""
    return {
        "frontierId": link.frontier_id,
        "edgeType": link.edge_type,
        "neighborId": link.neighbor_id,
        "outgoing": link.outgoing,
    }


def seed_scores(scored: ScoredNeighbors) -> SeedScores:
    """The similarity the backend read with the seeds, as the state holds it."""
    return {
        "profileIds": list(scored.profile_ids),
        "scores": [{"nodeId": h.node_id, "profileId": h.profile_id, "score": h.score} for h in scored.hits],
    }


def retrieve(state: BrainSearchState, deps: StepDeps) -> RetrieveUpdate:
    """Write ``hits``: nodes of the tenant (and project) most similar to the query, with type, title and
    url; ``nodeRecords`` for them; ``seedLinks``, the links ``expand`` starts from; and ``seedScores``,
    the similarity of the nodes those links reach when the backend read it with them. A vector whose
    node is gone or not visible is dropped."""
    request = state["request"]
    scope = deps.scope(request)
    registry = deps.services.profiles
    seeds = deps.services.backend.search_reads.seeds(
        profile_queries(request, state["queryVectors"], deps),
        scope=scope,
        project_key=request["filter"]["projectKey"],
        top_k=request["options"]["topK"],
        link_types=expansion_types(request, deps) if request["options"]["expandDepth"] > 0 else [],
        max_degree=deps.services.scoring.hub_degree,
    )
    records = {hit.node_id: node_meta(seeds.nodes[hit.node_id]) for hit in seeds.hits}
    hits: list[SearchHit] = [
        {
            "nodeId": hit.node_id,
            "nodeType": records[hit.node_id]["nodeType"],
            "profileId": hit.profile_id,
            "profileKind": registry.get(hit.profile_id).profile_kind,
            "score": hit.score,
            "title": records[hit.node_id]["title"],
            "url": records[hit.node_id]["url"],
        }
        for hit in seeds.hits
    ]
    links = None if seeds.links is None else [link_row(link) for link in seeds.links]
    scores = None if seeds.links is None or seeds.scored is None else seed_scores(seeds.scored)
    return {"hits": hits, "nodeRecords": records, "seedLinks": links, "seedScores": scores}
