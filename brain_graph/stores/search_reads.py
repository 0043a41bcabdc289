"""The reads of a search as a composition of the single store reads (the embedded store's
:class:`~brain_graph.stores.base.SearchReads`, and the reference every other backend must equal)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from brain_graph.core.filters import SeedFilter
from brain_graph.core.passage_heads import FieldHead
from brain_graph.core.security import AccessScope
from brain_graph.stores.base import (
    ClusterMembership,
    ContextRequest,
    EdgeRecord,
    GraphStore,
    Hop,
    LexicalQuery,
    PassageSource,
    SearchContext,
    Seeds,
    VectorHit,
    VectorIndex,
    VectorQuery,
    best_hits,
)


def cited_ids(ranked: Sequence[str], visible: set[str], passages: int) -> list[str]:
    """The first ``passages`` ids of ``ranked`` that are in ``visible``."""
    return [node_id for node_id in ranked if node_id in visible][: max(0, passages)]


def searched_profiles(queries: Sequence[VectorQuery], lexical: Sequence[LexicalQuery]) -> list[str]:
    """The profiles a seeds read queries, vector and lexical, in first-seen order."""
    return list(dict.fromkeys([*(query.profile_id for query in queries), *(query.profile_id for query in lexical)]))


class ComposedSearchReads:
    """:class:`~brain_graph.stores.base.SearchReads` made of the stores' single reads: the round trips
    of the reads it calls, in the order the protocol documents."""

    def __init__(self, vectors: VectorIndex, graph: GraphStore, passages: PassageSource) -> None:
        self._vectors = vectors
        self._graph = graph
        self._passages = passages

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
        raw = self._vectors.query(queries, scope=scope, seed_filter=seed_filter, top_k=top_k) if queries else []
        ranked = best_hits(raw, top_k)
        raw_lexical = (
            self._vectors.lexical(lexical, scope=scope, seed_filter=seed_filter, top_k=top_k) if lexical else []
        )
        untimed = seed_filter.updated_after is not None and self._vectors.untimed(
            searched_profiles(queries, lexical), scope=scope, seed_filter=seed_filter
        )
        ranked_lexical = best_hits(raw_lexical, top_k)
        sought = list(dict.fromkeys(hit.node_id for hit in [*ranked, *ranked_lexical]))
        nodes = {node.node_id: node for node in self._graph.get_nodes(sought, scope=scope)}
        hits = [hit for hit in ranked if hit.node_id in nodes]
        lexical_hits = [hit for hit in ranked_lexical if hit.node_id in nodes]
        links = None
        if link_types:
            frontier = list(dict.fromkeys(hit.node_id for hit in [*hits, *lexical_hits]))
            links = self._graph.links(frontier, scope=scope, edge_types=link_types, max_degree=max_degree).links
        return Seeds(hits, nodes, links, lexical=lexical_hits, untimed=untimed)

    def hop(
        self,
        queries: Sequence[VectorQuery],
        frontier: Sequence[str],
        *,
        scope: AccessScope,
        edge_types: Sequence[str],
        max_degree: int,
    ) -> Hop:
        return Hop(self._graph.links(frontier, scope=scope, edge_types=edge_types, max_degree=max_degree).links)

    def similarity(
        self, queries: Sequence[VectorQuery], node_ids: Sequence[str], *, scope: AccessScope
    ) -> list[VectorHit]:
        return self._vectors.similarity(queries, node_ids, scope=scope)

    def context(self, request: ContextRequest, *, scope: AccessScope) -> SearchContext:
        sought = list(dict.fromkeys([*request.new, *request.known]))
        found = {node.node_id: node for node in self._graph.get_nodes(sought, scope=scope)} if sought else {}
        nodes = [found[node_id] for node_id in dict.fromkeys(request.new) if node_id in found]
        visible = set(found)
        admitted = [node_id for node_id in dict.fromkeys([*request.known, *request.new]) if node_id in visible]
        known = list(dict.fromkeys([*request.records, *(node.node_id for node in nodes)]))
        cited = cited_ids(request.ranked, visible, request.passages)
        edges, memberships, texts = self.context_rest(request, admitted, known, cited, scope=scope)
        return SearchContext(nodes, edges, memberships, cited, texts)

    def context_rest(
        self,
        request: ContextRequest,
        admitted: Sequence[str],
        known: Sequence[str],
        cited: Sequence[str],
        *,
        scope: AccessScope,
    ) -> tuple[list[EdgeRecord], list[ClusterMembership], dict[str, Mapping[str, FieldHead]]]:
        """The reads of :meth:`context` once the visible nodes are known: the edges among ``admitted``,
        the clusters of the request's members (records of ``known`` left out) and the passage heads of
        ``cited``; a backend may answer them together."""
        edges = self._graph.edges_among(admitted, scope=scope, edge_types=request.edge_types) if admitted else []
        memberships = (
            self._graph.cluster_memberships(request.members, scope=scope, known=known) if request.members else []
        )
        texts = self._passages.get_passage_heads(cited, scope=scope, whole=request.whole_texts) if cited else {}
        return edges, memberships, texts
