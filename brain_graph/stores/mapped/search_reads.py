"""The reads of a search on the mapped backend: the composition of its single reads
(:class:`~brain_graph.stores.search_reads.ComposedSearchReads`), with the reads after the expansion
in two statements instead of four (the metadata of the new and known nodes, then their edges, the
hits' clusters and the cited texts together)."""

from __future__ import annotations

from brain_graph.core.security import AccessScope
from brain_graph.stores.base import ContextRequest, SearchContext
from brain_graph.stores.mapped.graph import MappedGraph
from brain_graph.stores.mapped.vectors import MappedVectorIndex
from brain_graph.stores.search_reads import ComposedSearchReads, cited_ids


class MappedSearchReads(ComposedSearchReads):
    """See the module docstring; every method returns what the composition returns."""

    def __init__(self, vectors: MappedVectorIndex, graph: MappedGraph) -> None:
        super().__init__(vectors, graph, graph)
        self._mapped = graph

    def context(self, request: ContextRequest, *, scope: AccessScope) -> SearchContext:
        sought = list(dict.fromkeys([*request.new, *request.known]))
        found = {node.node_id: node for node in self._mapped.get_nodes(sought, scope=scope)} if sought else {}
        nodes = [found[node_id] for node_id in dict.fromkeys(request.new) if node_id in found]
        visible = set(found)
        admitted = [node_id for node_id in dict.fromkeys([*request.known, *request.new]) if node_id in visible]
        known = list(dict.fromkeys([*request.records, *(node.node_id for node in nodes)]))
        cited = cited_ids(request.ranked, visible, request.passages)
        edges, memberships, texts = self._mapped.context_rest(
            admitted,
            request.edge_types,
            request.members,
            known,
            cited,
            scope=scope,
            whole=request.whole_texts,
        )
        return SearchContext(nodes, edges, memberships, cited, texts)
