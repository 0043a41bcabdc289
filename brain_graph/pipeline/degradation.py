"""Degradation: a search whose graph store is down answers its vector matches only, said so.

When the combined seeds read fails with :class:`~brain_graph.core.errors.BackendUnavailableError`
naming the graph store of a backend that offers :class:`~brain_graph.stores.vector_only.GraphlessSearch`,
and the deployment allows it (:attr:`~brain_graph.pipeline.services.SearchServices.degrade_without_graph`),
retrieval reads the vector store alone; the result then has ``graphContextIncluded`` false, the
:data:`GRAPH_UNAVAILABLE` warning, and hits without what only the graph holds (type, title, url:
:func:`unknown_node`); nothing else is read. Anything else fails as it did. See docs/degradation.md.
"""

from __future__ import annotations

from typing import Final

from brain_graph.core.errors import BackendUnavailableError
from brain_graph.core.wire import NodeMeta, SearchWarning
from brain_graph.pipeline.services import SearchServices
from brain_graph.stores.vector_only import GraphlessSearch, VectorOnlyReads

GRAPH_UNAVAILABLE: Final = "graph_unavailable"
GRAPH_UNAVAILABLE_MESSAGE: Final = (
    "the graph store did not answer: the hits are vector matches only, without graph context "
    "(no node types, titles, urls, relationships, episodes or passages)"
)


def unknown_node() -> NodeMeta:
    """The metadata of a hit in a vector-only result: unknown (empty type, no title, url, project or
    properties), as only the graph store holds it."""
    return {"nodeType": "", "projectKey": None, "title": None, "url": None, "properties": {}}


def graph_unavailable_warning() -> SearchWarning:
    """The warning of a vector-only result (one fixed text, whatever the data or the failure)."""
    return {"code": GRAPH_UNAVAILABLE, "message": GRAPH_UNAVAILABLE_MESSAGE}


def vector_only_reads(
    services: SearchServices, error: BackendUnavailableError, tenant_id: str
) -> VectorOnlyReads | None:
    """The reads to go on with after ``error`` failed a search's seeds read, None when the search
    must fail with it: degradation switched off, a backend without a vector-only mode, or a failure
    of another service than its graph store."""
    reads = services.backend.search_reads
    if not services.degrade_without_graph or not isinstance(reads, GraphlessSearch):
        return None
    if error.backend != reads.graph_service:
        return None
    return reads.without_graph(tenant_id)
