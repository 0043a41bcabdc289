"""Step 2: vector retrieval across the selected profiles, in one vector-index call, and one batched
read of the hit nodes' metadata."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypedDict

from brain_graph.state import BrainSearchState
from brain_graph.steps import StepDeps
from brain_graph.stores.base import NodeRecord, VectorHit, VectorQuery
from brain_graph.wire import NodeMeta, SearchHit, SearchRequest


class RetrieveUpdate(TypedDict):
    hits: list[SearchHit]
    nodeRecords: dict[str, NodeMeta]


def merge_hits(raw: list[VectorHit], top_k: int) -> list[VectorHit]:
    """One hit per node (its best profile: score, then profile id), the best ``top_k`` ordered by
    score descending, then node id."""
    best: dict[str, VectorHit] = {}
    for hit in raw:
        current = best.get(hit.node_id)
        if current is None or (-hit.score, hit.profile_id) < (-current.score, current.profile_id):
            best[hit.node_id] = hit
    return sorted(best.values(), key=lambda hit: (-hit.score, hit.node_id))[:top_k]


def node_meta(node: NodeRecord) -> NodeMeta:
    """What later steps need of a node (never its text or ACL)."""
    return NodeMeta(
        nodeType=node.node_type,
        projectKey=node.project_key,
        title=node.title,
        url=node.url,
        properties=dict(node.properties),
    )


def profile_queries(
    request: SearchRequest, query_vectors: Mapping[str, list[float]], deps: StepDeps
) -> list[VectorQuery]:
    """One vector query per searched profile, with its embedder's query vector."""
    registry = deps.services.profiles
    profiles = [registry.get(profile_id) for profile_id in request["profileIds"]]
    return [VectorQuery(p.profile_id, query_vectors[p.embedder_id], registry.embedder_name(p)) for p in profiles]


def retrieve(state: BrainSearchState, deps: StepDeps) -> RetrieveUpdate:
    """Write ``hits``: nodes of the tenant (and project) most similar to the query, with type, title and
    url; and ``nodeRecords`` for them. A vector whose node is gone or not visible is dropped."""
    request = state["request"]
    scope = deps.scope(request)
    registry = deps.services.profiles
    queries = profile_queries(request, state["queryVectors"], deps)
    top_k = request["options"]["topK"]
    backend = deps.services.backend
    raw = backend.vector_index.query(queries, scope=scope, project_key=request["filter"]["projectKey"], top_k=top_k)
    ranked = merge_hits(raw, top_k)
    records = {
        node.node_id: node_meta(node)
        for node in backend.graph_store.get_nodes([h.node_id for h in ranked], scope=scope)
    }
    hits = [
        SearchHit(
            nodeId=hit.node_id,
            nodeType=records[hit.node_id]["nodeType"],
            profileId=hit.profile_id,
            profileKind=registry.get(hit.profile_id).profile_kind,
            score=hit.score,
            title=records[hit.node_id]["title"],
            url=records[hit.node_id]["url"],
        )
        for hit in ranked
        if hit.node_id in records
    ]
    return {"hits": hits, "nodeRecords": {hit["nodeId"]: records[hit["nodeId"]] for hit in hits}}
