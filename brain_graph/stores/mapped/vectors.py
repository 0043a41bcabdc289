"""The mapped backend's :class:`~brain_graph.stores.base.VectorIndex`: candidates from each profile's
vector source, checked against the graph (tenant, ACL, project: one read for all profiles) and scored
with the reference formula (:func:`~brain_graph.stores.exact.exact_scores`) over the stored vectors,
so a mapped store scores exactly as brain-graph's own stores do.

A source's index is approximate and knows nothing of ACLs, so each query asks it for
:func:`candidate_limit` of ``top_k`` candidates: when more than that many of the nearest are invisible
to the caller, a query returns fewer than ``top_k`` hits (never a hit the caller may not see). A
Neo4j index's visible candidates are pre-ranked in Neo4j by its own cosine of their stored vectors
(ties by node id), and only the first :func:`scored_limit` have their vectors read and scored here: a
node outside them could only belong to the exact top ``top_k`` if more than ``top_k + 10`` candidates
scored within Neo4j's float rounding of the last hit.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any

from brain_graph.core.errors import InvalidRequestError
from brain_graph.core.filters import SeedFilter
from brain_graph.core.security import AccessScope
from brain_graph.stores.base import (
    LexicalQuery,
    ProfileIndexInfo,
    ScoredNeighbors,
    VectorHit,
    VectorQuery,
    refuse_facets,
)
from brain_graph.stores.exact import exact_scores
from brain_graph.stores.identity import check_query_matches
from brain_graph.stores.mapped.graph import MappedGraph
from brain_graph.stores.mapped.neo4j_source import Neo4jIndexSource
from brain_graph.stores.mapped.sources import VectorSource

MAX_CANDIDATES = 10_000


def candidate_limit(top_k: int) -> int:
    """How many candidates a source is asked for: four times ``top_k``, at least 100."""
    return min(MAX_CANDIDATES, max(100, 4 * top_k))


def scored_limit(top_k: int) -> int:
    """How many of a Neo4j index's visible candidates, pre-ranked in Neo4j, have their stored vectors
    read and scored exactly: ``2 * top_k + 10``."""
    return min(MAX_CANDIDATES, 2 * top_k + 10)


def score_all(query: VectorQuery, stored: Mapping[str, Sequence[float]]) -> list[VectorHit]:
    """The reference score of ``query`` against each stored vector (by node id)."""
    scores = exact_scores(query.vector, list(stored.values()))
    return [VectorHit(node_id, query.profile_id, score) for node_id, score in zip(stored, scores, strict=True)]


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

    def indexed(self, queries: Sequence[VectorQuery]) -> list[tuple[VectorQuery, Neo4jIndexSource]]:
        """The queries whose profile's vectors are in a Neo4j vector index (read in the graph's
        statements), in their order."""
        return [
            (query, source)
            for query in queries
            if isinstance(source := self._sources.get(query.profile_id), Neo4jIndexSource)
        ]

    def untimed(self, profile_ids: Sequence[str], *, scope: AccessScope, seed_filter: SeedFilter) -> bool:
        """See :meth:`brain_graph.stores.base.VectorIndex.untimed`."""
        refuse_facets(seed_filter, "mapped")
        return False

    def lexical(
        self, queries: Sequence[LexicalQuery], *, scope: AccessScope, seed_filter: SeedFilter, top_k: int
    ) -> list[VectorHit]:
        """Refused: a mapped graph has no lexical documents of brain-graph's."""
        raise InvalidRequestError(
            "options.retrievalMode", "lexical retrieval is not available on the mapped backend; use vector"
        )

    def query(
        self, queries: Sequence[VectorQuery], *, scope: AccessScope, seed_filter: SeedFilter, top_k: int
    ) -> list[VectorHit]:
        """Each profile's best ``top_k`` visible candidates: a Neo4j index's candidates, the other
        sources' candidates checked, all in one graph statement (plus one request per other source)."""
        refuse_facets(seed_filter, "mapped")
        project_key = seed_filter.project_key
        if top_k <= 0:
            return []
        limit = candidate_limit(top_k)
        index_queries: list[dict[str, Any]] = []
        found: dict[str, list[tuple[str, list[float]]]] = {}
        for query in queries:
            source = self._sources.get(query.profile_id)
            if source is None:
                continue
            self._check(query, source)
            if isinstance(source, Neo4jIndexSource):
                index_queries.append(source.query_parameters(query.vector, limit))
            else:
                found[query.profile_id] = source.nearest(query.vector, tenant_id=scope.tenant_id, limit=limit)
        ids = [node_id for candidates in found.values() for node_id, _ in candidates]
        indexed, visible = self._graph.candidates(
            index_queries, ids, scope=scope, project_key=project_key, keep=scored_limit(top_k)
        )
        hits: list[VectorHit] = []
        for query in queries:
            if query.profile_id in indexed:
                kept = {node_id: vector for node_id, vector in indexed[query.profile_id] if isinstance(vector, list)}
            elif query.profile_id in found:
                kept = {node_id: vector for node_id, vector in found[query.profile_id] if node_id in visible}
            else:
                continue
            if kept:
                hits += _ranked(score_all(query, kept))[:top_k]
        return hits

    def scored(
        self, queries: Sequence[VectorQuery], reached: Mapping[str, Sequence[Any]], skip: Collection[str]
    ) -> ScoredNeighbors | None:
        """The similarity, in the Neo4j-index profiles of ``queries``, of the ``reached`` nodes (their
        values of :meth:`vector_properties`, in that order) but ``skip``; as :meth:`similarity` of those
        profiles returns it (None: no such profile)."""
        indexed = self.indexed(queries)
        if not indexed:
            return None
        hits: list[VectorHit] = []
        for position, (query, source) in enumerate(indexed):
            self._check(query, source)
            kept = {
                node_id: values[position]
                for node_id, values in sorted(reached.items())
                if node_id not in skip and isinstance(values[position], list)
            }
            hits += _ranked(score_all(query, kept))
        return ScoredNeighbors(tuple(query.profile_id for query, _ in indexed), hits)

    @staticmethod
    def vector_properties(indexed: Sequence[tuple[VectorQuery, Neo4jIndexSource]]) -> list[str]:
        """The node property of each Neo4j-index profile of :meth:`indexed`, in its order."""
        return [source.config.property for _, source in indexed]

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
