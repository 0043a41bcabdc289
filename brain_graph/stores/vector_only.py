"""Searching while a backend's graph store is down: the reads of a search that only its vector store
answers.

A backend whose vectors live in another service than its graph (Neo4j + Weaviate) may offer
:class:`GraphlessSearch` on its :class:`~brain_graph.stores.base.SearchReads`: when a search's
:meth:`~brain_graph.stores.base.SearchReads.seeds` fails with
:class:`~brain_graph.core.errors.BackendUnavailableError` naming :attr:`GraphlessSearch.graph_service`,
the pipeline may ask :meth:`GraphlessSearch.without_graph` for :class:`VectorOnlyReads` and build a
vector-only result (docs/degradation.md). The vector store enforces the scope on its own (every
stored vector carries its node's tenant, ``secured`` flag and ACL), so nothing it returns needs the
graph to be filtered; a backend that cannot tell which of its stored vectors searches would see
without the graph raises instead of guessing.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from brain_graph.core.filters import SeedFilter
from brain_graph.core.security import AccessScope
from brain_graph.stores.base import LexicalQuery, Seeds, VectorHit, VectorQuery


@runtime_checkable
class VectorOnlyReads(Protocol):
    """The vector reads of one search, answered by the vector store alone."""

    def seeds(
        self,
        queries: Sequence[VectorQuery],
        *,
        scope: AccessScope,
        seed_filter: SeedFilter,
        top_k: int,
        lexical: Sequence[LexicalQuery] = (),
    ) -> Seeds:
        """What :meth:`~brain_graph.stores.base.SearchReads.seeds` returns without its graph reads:
        ``hits``, ``lexical`` and ``untimed`` exactly as there (visible in ``scope``, passing
        ``seed_filter``, the same scores and order), ``nodes`` empty, ``links`` and ``scored`` None."""
        ...

    def similarity(
        self, queries: Sequence[VectorQuery], node_ids: Sequence[str], *, scope: AccessScope
    ) -> list[VectorHit]:
        """:meth:`~brain_graph.stores.base.VectorIndex.similarity`, answered by the vector store alone."""
        ...


@runtime_checkable
class GraphlessSearch(Protocol):
    """:class:`~brain_graph.stores.base.SearchReads` that can go on without its graph store."""

    @property
    def graph_service(self) -> str:
        """The name the graph store's :class:`~brain_graph.core.errors.BackendUnavailableError` carries."""
        ...

    def without_graph(self, tenant_id: str) -> VectorOnlyReads:
        """The vector-only reads of a search of ``tenant_id``; raises
        :class:`~brain_graph.core.errors.BackendUnavailableError` naming :attr:`graph_service` when the
        vector store alone cannot tell what searches see (the vector store's own failures name it)."""
        ...
