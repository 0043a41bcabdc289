"""The mapped backend's :class:`~brain_graph.stores.base.VectorIndex`: candidates from each profile's
vector source, checked against the graph (tenant, ACL, project and the seed filter's facets, read
with :mod:`.facets`: one read for all profiles) and scored with the reference formula
(:func:`~brain_graph.stores.exact.exact_scores`) over the stored vectors, so a mapped store scores
exactly as brain-graph's own stores do.

A source's index is approximate and knows nothing of ACLs or facets, so each query asks it for its
:func:`candidate_limit` L nearest (:data:`FILTERED_WIDENING` times more when the filter has a facet
part): a Neo4j vector index's L nearest nodes of any tenant, a Weaviate collection's L nearest
objects of the tenant (one per node), each as its own search finds them (approximately, with HNSW).
What a query returns is exactly the best ``top_k`` of those L that are visible, in the project and
pass the facet filter: when fewer than ``top_k`` of them do (a selective filter, or many nodes
nearer the query that the caller may not see), it returns fewer hits, never a hit the caller may
not see or the filter refuses, and a node beyond the L nearest is never a hit. A Neo4j index's
admitted candidates are pre-ranked in Neo4j by its own cosine of their stored vectors (ties by node
id), and only the first :func:`scored_limit` have their vectors read and scored here: a node outside
them could only belong to the exact top ``top_k`` if more than ``top_k + 10`` candidates scored
within Neo4j's float rounding of the last hit.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any

from brain_graph.core.errors import InvalidRequestError
from brain_graph.core.filters import SeedFilter
from brain_graph.core.security import AccessScope
from brain_graph.stores.base import LexicalQuery, ProfileIndexInfo, ScoredNeighbors, VectorHit, VectorQuery
from brain_graph.stores.exact import exact_scores
from brain_graph.stores.identity import check_query_matches
from brain_graph.stores.mapped.graph import MappedGraph
from brain_graph.stores.mapped.neo4j_source import Neo4jIndexSource
from brain_graph.stores.mapped.sources import VectorSource

MAX_CANDIDATES = 10_000
FILTERED_WIDENING = 5  # how many times more candidates a query with a facet filter asks for


def candidate_limit(top_k: int, *, narrowed: bool = False) -> int:
    """How many candidates a source is asked for: four times ``top_k``, at least 100; with a facet
    filter (``narrowed``) :data:`FILTERED_WIDENING` times as many; at most :data:`MAX_CANDIDATES`."""
    base = max(100, 4 * top_k)
    return min(MAX_CANDIDATES, base * FILTERED_WIDENING if narrowed else base)


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

    def held(self, profile_ids: Sequence[str]) -> list[dict[str, object]]:
        """The nodes holding the vectors of ``profile_ids``, as ``$untimedSources``: a Neo4j index's
        (its labels, its property); any mapped node for a Weaviate collection (which nodes have
        objects is not known without reading the collection); none for a profile without a source."""
        found: list[dict[str, object]] = []
        for profile_id in dict.fromkeys(profile_ids):
            source = self._sources.get(profile_id)
            if isinstance(source, Neo4jIndexSource):
                found.append(source.held())
            elif source is not None:
                found.append({"labels": None, "property": None})
        return found

    def untimed(self, profile_ids: Sequence[str], *, scope: AccessScope, seed_filter: SeedFilter) -> bool:
        """See :meth:`brain_graph.stores.base.VectorIndex.untimed`: a visible node holding the vectors
        of one of ``profile_ids`` (:meth:`held`) that the filter leaves out only for having no update
        time. One graph statement (none without a recency part); it reads each mapped label until its
        first such node, so when none has one it reads every node of the mapped labels."""
        if seed_filter.updated_after is None:
            return False
        return self._graph.untimed(self.held(profile_ids), scope=scope, seed_filter=seed_filter)

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
        """Each profile's best ``top_k`` visible candidates that pass ``seed_filter`` (see the module
        docstring): a Neo4j index's candidates, the other sources' candidates checked, all in one
        graph statement (plus one request per other source)."""
        return self.search(queries, scope=scope, seed_filter=seed_filter, top_k=top_k)[0]

    def search(
        self,
        queries: Sequence[VectorQuery],
        *,
        scope: AccessScope,
        seed_filter: SeedFilter,
        top_k: int,
        untimed: bool = False,
    ) -> tuple[list[VectorHit], bool]:
        """:meth:`query`, and with ``untimed`` (and a recency part) :meth:`untimed` of the queried
        profiles, in the same graph statement."""
        if top_k <= 0:
            return [], False
        limit = candidate_limit(top_k, narrowed=bool(seed_filter.narrowed_facets))
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
        held = (
            self.held([query.profile_id for query in queries])
            if untimed and seed_filter.updated_after is not None
            else []
        )
        read = self._graph.candidates(
            index_queries, ids, scope=scope, seed_filter=seed_filter, keep=scored_limit(top_k), untimed_sources=held
        )
        hits: list[VectorHit] = []
        for query in queries:
            if query.profile_id in read.indexed:
                kept = {
                    node_id: vector for node_id, vector in read.indexed[query.profile_id] if isinstance(vector, list)
                }
            elif query.profile_id in found:
                kept = {node_id: vector for node_id, vector in found[query.profile_id] if node_id in read.visible}
            else:
                continue
            if kept:
                hits += _ranked(score_all(query, kept))[:top_k]
        return hits, read.untimed

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
