"""The mapped backend's :class:`~brain_graph.stores.base.VectorIndex`: candidates from each profile's
vector source, checked against the graph (tenant, ACL, project: one read for all profiles) and scored
with the reference formula (:func:`~brain_graph.stores.exact.exact_scores`) over the stored vectors,
so a mapped store scores exactly as brain-graph's own stores do.

A source's index is approximate and knows nothing of ACLs, so each query asks it for
:func:`candidate_limit` of ``top_k`` candidates: when more than that many of the nearest are invisible
to the caller, a query returns fewer than ``top_k`` hits (never a hit the caller may not see).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from brain_graph.core.security import AccessScope
from brain_graph.stores.base import ProfileIndexInfo, VectorHit, VectorQuery
from brain_graph.stores.exact import exact_scores
from brain_graph.stores.identity import check_query_matches
from brain_graph.stores.mapped.graph import MappedGraph
from brain_graph.stores.mapped.sources import VectorSource

MAX_CANDIDATES = 10_000


def candidate_limit(top_k: int) -> int:
    """How many candidates a source is asked for: four times ``top_k``, at least 100."""
    return min(MAX_CANDIDATES, max(100, 4 * top_k))


def _ranked(hits: list[VectorHit]) -> list[VectorHit]:
    return sorted(hits, key=lambda hit: (-hit.score, hit.node_id))


class MappedVectorIndex:
    """See the module docstring. ``embedders`` names the embedder that made each profile's vectors,
    when the mapping says (checked against the query's, as the dimension always is)."""

    def __init__(
        self, graph: MappedGraph, sources: Mapping[str, VectorSource], embedders: Mapping[str, str | None]
    ) -> None:
        self._graph = graph
        self._sources = dict(sources)
        self._embedders = dict(embedders)

    def _check(self, query: VectorQuery, source: VectorSource) -> None:
        dimension = source.dimension()
        if dimension is not None:
            embedder = self._embedders.get(query.profile_id) or query.embedder_name
            check_query_matches(query, ProfileIndexInfo(query.profile_id, embedder, dimension))

    def query(
        self, queries: Sequence[VectorQuery], *, scope: AccessScope, project_key: str | None, top_k: int
    ) -> list[VectorHit]:
        found: list[tuple[VectorQuery, list[tuple[str, list[float]]]]] = []
        for query in queries:
            source = self._sources.get(query.profile_id)
            if source is None or top_k <= 0:
                continue
            self._check(query, source)
            found.append((query, source.nearest(query.vector, tenant_id=scope.tenant_id, limit=candidate_limit(top_k))))
        ids = [node_id for _, candidates in found for node_id, _ in candidates]
        visible = self._graph.visible_ids(ids, scope=scope, project_key=project_key)
        hits: list[VectorHit] = []
        for query, candidates in found:
            kept = {node_id: vector for node_id, vector in candidates if node_id in visible}
            if not kept:
                continue
            scores = exact_scores(query.vector, list(kept.values()))
            scored = [VectorHit(node_id, query.profile_id, score) for node_id, score in zip(kept, scores, strict=True)]
            hits += _ranked(scored)[:top_k]
        return hits

    def similarity(
        self, queries: Sequence[VectorQuery], node_ids: Sequence[str], *, scope: AccessScope
    ) -> list[VectorHit]:
        wanted = [query for query in queries if query.profile_id in self._sources]
        if not wanted or not node_ids:
            return []
        visible = sorted(self._graph.visible_ids(node_ids, scope=scope, project_key=None))
        hits: list[VectorHit] = []
        for query in wanted:
            source = self._sources[query.profile_id]
            self._check(query, source)
            stored = source.vectors_of(visible, tenant_id=scope.tenant_id) if visible else {}
            scores = exact_scores(query.vector, list(stored.values()))
            hits += _ranked(
                [VectorHit(node_id, query.profile_id, s) for node_id, s in zip(stored, scores, strict=True)]
            )
        return hits
