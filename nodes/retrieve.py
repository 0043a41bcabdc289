"""Step 2: vector retrieval across the selected profiles, with the hit nodes' metadata and, when the
search expands, the first hop's links of the hits, in one combined read
(:meth:`~brain_graph.stores.base.SearchReads.seeds`)."""

from __future__ import annotations

from typing import TypedDict

from brain_graph.core.wire import NodeMeta, SearchHit
from brain_graph.pipeline.binding import StepDeps
from brain_graph.pipeline.records import link_row, node_meta, seed_scores
from brain_graph.pipeline.search_plan import expansion_types, profile_queries
from brain_graph.pipeline.state import BrainSearchState, LinkRow, SeedScores


class RetrieveUpdate(TypedDict):
    hits: list[SearchHit]
    nodeRecords: dict[str, NodeMeta]
    seedLinks: list[LinkRow] | None
    seedScores: SeedScores | None


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
