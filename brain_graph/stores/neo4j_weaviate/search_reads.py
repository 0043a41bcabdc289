"""The reads of a search on Neo4j + Weaviate (:class:`~brain_graph.stores.base.SearchReads`).

Round trips, warm caches (``P`` queried profiles, ``L`` lexical queries): :meth:`ServerSearchReads.seeds`
is one Weaviate round of ``P`` vector searches, with lexical queries ``L`` BM25 searches and one
statistics request (:mod:`brain_graph.stores.neo4j_weaviate.weaviate.lexical`), with a recency filter
one untimed check per profile (:mod:`brain_graph.stores.neo4j_weaviate.weaviate.untimed`), all
concurrent, then
Neo4j ``1`` (the metadata and links of the hits of both); :meth:`~ServerSearchReads.hop` Neo4j ``1``;
:meth:`~ServerSearchReads.similarity` Weaviate ``P`` (concurrent); :meth:`~ServerSearchReads.context`
Neo4j ``1``. ``seeds`` and ``hop`` score the nodes their links reach from the vector copies on the
Neo4j nodes where those count (:mod:`brain_graph.stores.neo4j_weaviate.neo4j.vector_copies`).

Generations: the Weaviate tenant to query is the tenant's generation as last seen by this process
(:class:`~brain_graph.stores.neo4j_weaviate.generation_cache.GenerationCache`). The Neo4j statement of ``seeds`` reads
the pointer in the same statement as the hits' metadata; when it names another generation (a load,
apply or drop happened since), the cache is updated and the vector search and the statement are
redone with that generation (the Weaviate round + Neo4j ``1`` more), at most :data:`GENERATION_REDOS`
times: a second flip during the redo (whose clean-up may delete the Weaviate tenant the redo is about
to query) takes one more. The first search of a tenant in
a process reads its generation first (Neo4j ``1`` more). So a search that starts after a load, apply or
drop returned sees only its result: the pointer it validates against was flipped before the search
began. A search that overlaps a flip may combine two generations (each statement sees one).
``similarity`` uses the generation in the cache, which the search's own ``seeds`` validated or a read
sent later replaced.
"""

from __future__ import annotations

from collections.abc import Sequence

from brain_graph.core.filters import SeedFilter
from brain_graph.core.security import AccessScope
from brain_graph.stores.base import (
    ContextRequest,
    Hop,
    LexicalQuery,
    ScoredNeighbors,
    SearchContext,
    Seeds,
    VectorHit,
    VectorQuery,
    best_hits,
)
from brain_graph.stores.neo4j_weaviate.generation_cache import GenerationCache
from brain_graph.stores.neo4j_weaviate.neo4j.generations import Neo4jGenerations
from brain_graph.stores.neo4j_weaviate.neo4j.search_reads import Neo4jSearchReads
from brain_graph.stores.neo4j_weaviate.neo4j.vector_copies import max_copied, score_copies
from brain_graph.stores.neo4j_weaviate.vector_only import GRAPH_SERVICE, WeaviateOnlyReads
from brain_graph.stores.neo4j_weaviate.weaviate.index import WeaviateVectorIndex
from brain_graph.stores.search_reads import searched_profiles

GENERATION_REDOS = 2  # redos of a search whose generation moved (one per flip it overlapped)


class ServerSearchReads:
    """:class:`~brain_graph.stores.base.SearchReads` over Weaviate (vectors) and Neo4j (the graph); also
    :class:`~brain_graph.stores.vector_only.GraphlessSearch` (:mod:`.vector_only`)."""

    graph_service = GRAPH_SERVICE

    def __init__(self, graph: Neo4jSearchReads, generations: Neo4jGenerations, index: WeaviateVectorIndex) -> None:
        self._graph = graph
        self._generations = generations
        self._index = index
        self.cache = GenerationCache()

    def seeds(
        self,
        queries: Sequence[VectorQuery],
        *,
        scope: AccessScope,
        seed_filter: SeedFilter,
        top_k: int,
        link_types: Sequence[str],
        max_degree: int,
        lexical: Sequence[LexicalQuery] = (),
    ) -> Seeds:
        tenant = scope.tenant_id
        generation = self._generation(tenant)
        untimed = searched_profiles(queries, lexical) if seed_filter.updated_after is not None else []
        for attempt in range(GENERATION_REDOS + 1):
            searched = self._index.search(
                queries,
                lexical,
                scope=scope,
                seed_filter=seed_filter,
                top_k=top_k,
                generation=generation,
                untimed=untimed,
            )
            ranked = best_hits(searched.hits, top_k)
            ranked_lexical = best_hits(searched.lexical, top_k)
            stamp = self.cache.stamp()
            found = self._graph.seeds(
                list(dict.fromkeys(hit.node_id for hit in [*ranked, *ranked_lexical])),
                scope=scope,
                link_types=link_types,
                max_degree=max_degree,
                profiles=[query.profile_id for query in queries],
                max_copied=max_copied(queries),
            )
            self.cache.put(tenant, found.generation, stamp)
            if found.generation == generation or attempt == GENERATION_REDOS:
                break
            generation = found.generation
        nodes = {node.node_id: node for node in found.nodes}
        scored = None
        if found.links is not None and found.copied:
            scored = ScoredNeighbors(found.copied, score_copies(queries, found.copied, found.copies))
        return Seeds(
            [hit for hit in ranked if hit.node_id in nodes],
            nodes,
            found.links,
            scored,
            lexical=[hit for hit in ranked_lexical if hit.node_id in nodes],
            untimed=searched.untimed,
        )

    def hop(
        self,
        queries: Sequence[VectorQuery],
        frontier: Sequence[str],
        *,
        scope: AccessScope,
        edge_types: Sequence[str],
        max_degree: int,
    ) -> Hop:
        links, copied, copies = self._graph.hop(
            frontier,
            scope=scope,
            edge_types=edge_types,
            max_degree=max_degree,
            profiles=[query.profile_id for query in queries],
            max_copied=max_copied(queries),
        )
        return Hop(links, ScoredNeighbors(copied, score_copies(queries, copied, copies)) if copied else None)

    def similarity(
        self, queries: Sequence[VectorQuery], node_ids: Sequence[str], *, scope: AccessScope
    ) -> list[VectorHit]:
        if not queries or not node_ids:
            return []
        generation = self._generation(scope.tenant_id)
        return self._index.similarity(queries, node_ids, scope=scope, generation=generation)

    def _generation(self, tenant_id: str) -> int | None:
        """The tenant's generation as last seen here, else read now (Neo4j 1; the tenant is new to this
        process, or was forgotten: more tenants than the cache holds)."""
        seen = self.cache.get(tenant_id)
        if seen is not None:
            return seen.generation
        stamp = self.cache.stamp()
        generation = self._generations.current_generation(tenant_id)
        self.cache.put(tenant_id, generation, stamp)
        return generation

    def context(self, request: ContextRequest, *, scope: AccessScope) -> SearchContext:
        return self._graph.context(request, scope=scope)

    def without_graph(self, tenant_id: str) -> WeaviateOnlyReads:
        """The reads of a search of ``tenant_id`` from Weaviate alone (:mod:`.vector_only`)."""
        return WeaviateOnlyReads.of_tenant(self._index, tenant_id)
