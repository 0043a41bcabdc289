"""Step 2: retrieval across the selected profiles, by vector similarity, lexical match (BM25) or both,
with the hit nodes' metadata and, when the search expands, the first hop's links of the hits, in one
combined read (:meth:`~brain_graph.stores.base.SearchReads.seeds`).

Hybrid fusion: the vector hits and the lexical hits (each the best ``topK``) are pooled; each node's
retrieval score is its similarity plus its lexical term, ``lexicalWeight`` times the spread of the
vector hits' similarities times its BM25 score over the best BM25 score of the search
(:func:`lexical_terms`); the pool's best ``topK`` are the hits, the
nodes the query names exactly first. A lexical hit that is not a vector hit gets its similarity from
one :meth:`~brain_graph.stores.base.SearchReads.similarity` read. Lexical mode scores by the lexical
term alone (weight 1), vector mode by similarity alone.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TypedDict

from brain_graph.core.bm25 import is_exact_match
from brain_graph.core.errors import BackendUnavailableError
from brain_graph.core.scoring import SCORE_DECIMALS
from brain_graph.core.wire import FiltersApplied, NodeMeta, SearchHit, SearchWarning
from brain_graph.embedding.profiles import hybrid_weight
from brain_graph.observability.timing import timed_reads
from brain_graph.pipeline.binding import StepDeps
from brain_graph.pipeline.degradation import graph_unavailable_warning, unknown_node, vector_only_reads
from brain_graph.pipeline.filters import UNTIMED_MESSAGE, UNTIMED_WARNING, seed_filter
from brain_graph.pipeline.ranking import own_score, rank_key
from brain_graph.pipeline.records import link_row, node_meta, seed_scores
from brain_graph.pipeline.search_plan import expansion_types, lexical_queries, profile_queries
from brain_graph.pipeline.state import BrainSearchState, HitHow, HitSource, LinkRow, ScoreRow, SeedScores
from brain_graph.stores.base import SearchReads, Seeds, VectorHit, best_hits
from brain_graph.stores.vector_only import VectorOnlyReads


class RetrieveUpdate(TypedDict):
    hits: list[SearchHit]
    filtersApplied: FiltersApplied
    warnings: list[SearchWarning]
    nodeRecords: dict[str, NodeMeta]
    seedLinks: list[LinkRow] | None
    seedScores: SeedScores | None
    hitSources: dict[str, HitSource]
    graphContextIncluded: bool


def lexical_terms(lexical: Sequence[VectorHit], weight: float, similar: Sequence[VectorHit]) -> dict[str, float]:
    """Each lexical hit's term of the retrieval score: ``weight`` times the spread of the vector hits'
    similarities (best minus weakest; 1 without vector hits, or when they all score alike) times its
    BM25 score over the best one, rounded. In units of the spread, the term means the same whatever
    range an embedder's similarities fall in (relative score fusion)."""
    best = max((hit.score for hit in lexical), default=0.0)
    if best <= 0:
        return {}
    scores = [hit.score for hit in similar]
    spread = (max(scores) - min(scores)) if scores else 0.0
    scale = weight * (spread if spread > 0 else 1.0)
    return {hit.node_id: round(scale * hit.score / best, SCORE_DECIMALS) for hit in lexical}


def retrieve(state: BrainSearchState, deps: StepDeps) -> RetrieveUpdate:
    """Write ``hits``: the nodes of the tenant that pass the request's seed filter (project, node
    types, namespaces, tags, recency) the query retrieves best, with type, title and url;
    ``filtersApplied``, that filter resolved; ``warnings`` (a recency filter skipping nodes without an
    update time; a vector-only result); ``nodeRecords`` for them; ``hitSources``, how each hit was
    found (``exact``, ``vector``, ``lexical``) and its lexical term; ``seedLinks``, the links
    ``expand`` starts from; and
    ``seedScores``, the similarity of the nodes those links reach (and of the retrieved nodes that are
    not hits) when the backend read it. A node gone or not visible is dropped.

    ``graphContextIncluded``: True, unless the graph store is down and the backend and the deployment
    allow a vector-only result (:mod:`brain_graph.pipeline.degradation`): then the hits are what the
    vector store alone finds, visible in the scope, with unknown metadata, and no links."""
    request = state["request"]
    options = request["options"]
    scope = deps.scope(request)
    services = deps.services
    registry = services.profiles
    reads = timed_reads(services.backend)
    vector_queries = profile_queries(request, state["queryVectors"], deps)
    lexical = lexical_queries(request)
    searched = seed_filter(request["filtersApplied"])
    scored_by: SearchReads | VectorOnlyReads = reads
    try:
        seeds = reads.seeds(
            vector_queries,
            scope=scope,
            seed_filter=searched,
            top_k=options["topK"],
            link_types=expansion_types(request, deps) if options["expandDepth"] > 0 else [],
            max_degree=services.scoring.hub_degree,
            lexical=lexical,
        )
    except BackendUnavailableError as error:
        vector_only = vector_only_reads(services, error, scope.tenant_id)
        if vector_only is None:
            raise
        seeds = vector_only.seeds(
            vector_queries, scope=scope, seed_filter=searched, top_k=options["topK"], lexical=lexical
        )
        scored_by = vector_only
    graph = scored_by is reads
    weight = 1.0 if options["retrievalMode"] == "lexical" else fusion_weight(request["profileIds"], deps)
    terms = lexical_terms(seeds.lexical, weight, seeds.hits)
    similar: dict[str, VectorHit] = {hit.node_id: hit for hit in seeds.hits}
    lexical_only = sorted({hit.node_id for hit in seeds.lexical} - similar.keys())
    if vector_queries and lexical_only:
        found = scored_by.similarity(vector_queries, lexical_only, scope=scope)
        similar.update({hit.node_id: hit for hit in best_hits(found, len(found))})
    by_lexical = {hit.node_id: hit for hit in seeds.lexical}
    pool = list(dict.fromkeys([*(hit.node_id for hit in seeds.hits), *(hit.node_id for hit in seeds.lexical)]))
    records = {node_id: hit_meta(seeds, node_id, graph=graph) for node_id in pool}
    exact = {node_id for node_id in pool if is_exact_match(request["queryText"], node_id, records[node_id]["title"])}
    own = {node_id: own_score(score_of(similar, node_id), terms.get(node_id, 0.0)) or 0.0 for node_id in pool}
    chosen = sorted(pool, key=lambda node_id: rank_key(own[node_id], own[node_id], node_id, exact=node_id in exact))
    chosen = chosen[: options["topK"]]
    vector_found = {hit.node_id for hit in seeds.hits}
    hits: list[SearchHit] = []
    sources: dict[str, HitSource] = {}
    for node_id in chosen:
        hit = similar.get(node_id) or by_lexical[node_id]
        lexical_hit = by_lexical.get(node_id)
        how: HitHow = "exact" if node_id in exact else "vector" if node_id in vector_found else "lexical"
        sources[node_id] = {"reachedBy": how, "lexical": terms.get(node_id, 0.0)}
        hits.append(
            {
                "nodeId": node_id,
                "nodeType": records[node_id]["nodeType"],
                "profileId": hit.profile_id,
                "profileKind": registry.get(hit.profile_id).profile_kind,
                "score": own[node_id],
                "title": records[node_id]["title"],
                "url": records[node_id]["url"],
                "vectorScore": score_of(similar, node_id),
                "lexicalScore": round(lexical_hit.score, SCORE_DECIMALS) if lexical_hit is not None else None,
            }
        )
    kept = set(chosen)
    links = None if seeds.links is None else [link_row(link) for link in seeds.links if link.frontier_id in kept]
    scores = None
    if seeds.links is not None and seeds.scored is not None:
        scores = seed_scores(seeds.scored)
        scores["scores"].extend(left_out_scores(similar, pool, kept, scores["profileIds"]))
    warnings: list[SearchWarning] = []
    if seeds.untimed:
        warnings.append({"code": UNTIMED_WARNING, "message": UNTIMED_MESSAGE})
    if not graph:
        warnings.append(graph_unavailable_warning())
    return {
        "hits": hits,
        "filtersApplied": request["filtersApplied"],
        "warnings": warnings,
        "nodeRecords": {node_id: records[node_id] for node_id in chosen},
        "seedLinks": links,
        "seedScores": scores,
        "hitSources": sources,
        "graphContextIncluded": graph,
    }


def hit_meta(seeds: Seeds, node_id: str, *, graph: bool) -> NodeMeta:
    """A retrieved node's metadata: read from the graph store, or unknown without it."""
    return node_meta(seeds.nodes[node_id]) if graph else unknown_node()


def fusion_weight(profile_ids: Sequence[str], deps: StepDeps) -> float:
    """Hybrid retrieval's lexical weight: the configured one, else the searched embedders' own."""
    configured = deps.services.scoring.lexical_weight
    if configured is not None:
        return configured
    registry = deps.services.profiles
    return hybrid_weight([registry.embedders[registry.get(profile_id).embedder_id] for profile_id in profile_ids])


def score_of(similar: Mapping[str, VectorHit], node_id: str) -> float | None:
    """A node's similarity, None when it has none."""
    hit = similar.get(node_id)
    return hit.score if hit is not None else None


def left_out_scores(
    similar: Mapping[str, VectorHit], pool: Sequence[str], kept: set[str], profile_ids: Sequence[str]
) -> list[ScoreRow]:
    """The best similarity, in the profiles ``seedScores`` covers, of the retrieved nodes that are
    not hits: expansion may reach them, and the backend did not score them with the links (they were
    among the nodes it read as seeds)."""
    covered = set(profile_ids)
    return [
        {"nodeId": node_id, "profileId": hit.profile_id, "score": hit.score}
        for node_id in pool
        if node_id not in kept and (hit := similar.get(node_id)) is not None and hit.profile_id in covered
    ]
