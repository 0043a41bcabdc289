"""The reads of a search on the mapped backend: the composition of its single reads
(:class:`~brain_graph.stores.search_reads.ComposedSearchReads`), with the reads after the expansion
in two statements instead of four (the metadata of the new and known nodes, then their edges, the
hits' clusters and the cited texts together)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from brain_graph.core.passage_heads import FieldHead
from brain_graph.core.security import AccessScope
from brain_graph.stores.base import ClusterMembership, ContextRequest, EdgeRecord
from brain_graph.stores.mapped.graph import MappedGraph
from brain_graph.stores.mapped.vectors import MappedVectorIndex
from brain_graph.stores.search_reads import ComposedSearchReads


class MappedSearchReads(ComposedSearchReads):
    """See the module docstring; every method returns what the composition returns."""

    def __init__(self, vectors: MappedVectorIndex, graph: MappedGraph) -> None:
        super().__init__(vectors, graph, graph)
        self._mapped = graph

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
