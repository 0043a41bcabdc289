"""The reads of a search on the mapped backend: what the composition of its single reads returns
(:class:`~brain_graph.stores.search_reads.ComposedSearchReads`), in fewer statements.

* seeds: the candidates of every Neo4j-index profile with their vectors, the visibility of the
  other sources' candidates and, with a recency filter, whether it left out a node for having no
  update time, in one statement (:meth:`.MappedVectorIndex.search`); then the hits' metadata, their
  links and the stored vectors of the nodes the links reach in one more, so the first hop needs no
  similarity read for those profiles;
* a further hop: its links and the reached nodes' vectors in one statement;
* the context: the metadata of the new and known nodes, then their edges, the hits' clusters and the
  cited texts in one statement.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from brain_graph.core.filters import SeedFilter
from brain_graph.core.passage_heads import FieldHead
from brain_graph.core.security import AccessScope
from brain_graph.stores.base import (
    ClusterMembership,
    ContextRequest,
    EdgeRecord,
    Hop,
    LexicalQuery,
    Seeds,
    VectorQuery,
    best_hits,
)
from brain_graph.stores.mapped.graph import MappedGraph
from brain_graph.stores.mapped.vectors import MappedVectorIndex
from brain_graph.stores.search_reads import ComposedSearchReads


class MappedSearchReads(ComposedSearchReads):
    """See the module docstring; every method returns what the composition returns."""

    def __init__(self, vectors: MappedVectorIndex, graph: MappedGraph) -> None:
        super().__init__(vectors, graph, graph)
        self._mapped = graph
        self._index = vectors

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
        if lexical:
            self._index.lexical(lexical, scope=scope, seed_filter=seed_filter, top_k=top_k)  # refused
        raw, untimed = self._index.search(queries, scope=scope, seed_filter=seed_filter, top_k=top_k, untimed=True)
        ranked = best_hits(raw, top_k)
        indexed = self._index.indexed(queries) if link_types else []
        found = self._mapped.reach(
            [hit.node_id for hit in ranked],
            scope=scope,
            edge_types=link_types,
            max_degree=max_degree,
            vector_properties=self._index.vector_properties(indexed),
            metadata=True,
        )
        hits = [hit for hit in ranked if hit.node_id in found.nodes]
        if not link_types:
            return Seeds(hits, found.nodes, None, untimed=untimed)
        scored = self._index.scored(queries, found.reached, {hit.node_id for hit in hits})
        return Seeds(hits, found.nodes, found.links, scored, untimed=untimed)

    def hop(
        self,
        queries: Sequence[VectorQuery],
        frontier: Sequence[str],
        *,
        scope: AccessScope,
        edge_types: Sequence[str],
        max_degree: int,
    ) -> Hop:
        indexed = self._index.indexed(queries)
        found = self._mapped.reach(
            frontier,
            scope=scope,
            edge_types=edge_types,
            max_degree=max_degree,
            vector_properties=self._index.vector_properties(indexed),
            metadata=False,
        )
        return Hop(found.links, self._index.scored(queries, found.reached, set(frontier)))

    def context_rest(
        self,
        request: ContextRequest,
        admitted: Sequence[str],
        known: Sequence[str],
        cited: Sequence[str],
        *,
        scope: AccessScope,
    ) -> tuple[list[EdgeRecord], list[ClusterMembership], dict[str, Mapping[str, FieldHead]]]:
        return self._mapped.context_rest(
            admitted, request.edge_types, request.members, known, cited, scope=scope, whole=request.whole_texts
        )
