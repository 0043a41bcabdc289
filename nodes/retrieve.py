"""Step 2: vector retrieval across the selected profiles, in one vector-index call."""

from __future__ import annotations

from typing import Any

from brain_graph.contracts import BrainSearchHit
from brain_graph.dataset import embedder_name
from brain_graph.requests import access_scope, read_request
from brain_graph.state import BrainSearchState
from brain_graph.steps import StepDeps
from brain_graph.stores.base import VectorHit, VectorQuery


def merge_hits(raw: list[VectorHit], top_k: int) -> list[VectorHit]:
    """One hit per node (its best profile: score, then profile id), the best ``top_k`` ordered by
    score descending, then node id."""
    best: dict[str, VectorHit] = {}
    for hit in raw:
        current = best.get(hit.node_id)
        if current is None or (-hit.score, hit.profile_id) < (-current.score, current.profile_id):
            best[hit.node_id] = hit
    return sorted(best.values(), key=lambda hit: (-hit.score, hit.node_id))[:top_k]


def retrieve(state: BrainSearchState, deps: StepDeps) -> dict[str, Any]:
    """Write ``hits``: nodes of the tenant (and project) most similar to the query, hydrated with
    type, title and url in one batched node fetch. A vector whose node is gone or not visible is dropped."""
    services = deps.services
    request = read_request(state, services)
    scope = access_scope(request, deps.principal, services)
    registry = services.profiles
    profiles = registry.select(request.filter.profile_kind_in)
    vectors = state.get("queryVectors") or {}
    queries = [
        VectorQuery(p.profile_id, vectors[p.embedder_id], embedder_name(registry, p))
        for p in profiles
        if p.embedder_id in vectors
    ]
    top_k = request.options.top_k
    raw = services.backend.vector_index.query(queries, scope=scope, project_key=request.filter.project_key, top_k=top_k)
    ranked = merge_hits(raw, top_k)
    nodes = {
        node.node_id: node
        for node in services.backend.graph_store.get_nodes([hit.node_id for hit in ranked], scope=scope)
    }
    hits = [
        BrainSearchHit(
            node_id=hit.node_id,
            node_type=nodes[hit.node_id].node_type,
            profile_id=hit.profile_id,
            profile_kind=registry.get(hit.profile_id).profile_kind,
            score=hit.score,
            title=nodes[hit.node_id].title,
            url=nodes[hit.node_id].url,
        )
        for hit in ranked
        if hit.node_id in nodes
    ]
    return {"hits": hits}
