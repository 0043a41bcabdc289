"""The vector-only reads of a search while Neo4j is down (:mod:`brain_graph.stores.vector_only`).

Which Weaviate tenant searches see is named by the tenant's Neo4j pointer; without Neo4j it is read
from Weaviate itself: the tenant's generation when Weaviate holds exactly one (the steady state:
a load removes the older ones once it has flipped the pointer), no data when it holds none. With
several (a load staging a new one, or a clean-up left undone) Weaviate cannot tell which one the
pointer names, and the search fails with :class:`~brain_graph.core.errors.BackendUnavailableError`
naming ``neo4j`` rather than guess. The answer never depends on what this process saw before, so
the same request gives the same result in every process while Neo4j is down.

Round trips: the generation (one REST request per profile collection: its tenants), then what
:meth:`~brain_graph.stores.neo4j_weaviate.weaviate.index.WeaviateVectorIndex.search` sends; Weaviate's
filters and the Python re-check enforce tenant, ``secured`` and ACL on the copies each object holds.
"""

from __future__ import annotations

from collections.abc import Sequence

from brain_graph.core.errors import BackendUnavailableError
from brain_graph.core.filters import SeedFilter
from brain_graph.core.security import AccessScope
from brain_graph.stores.base import LexicalQuery, Seeds, VectorHit, VectorQuery, best_hits
from brain_graph.stores.neo4j_weaviate.weaviate.index import WeaviateVectorIndex
from brain_graph.stores.search_reads import searched_profiles

GRAPH_SERVICE = "neo4j"


def sole_generation(stored: Sequence[int]) -> int | None:
    """The generation searches see when Weaviate holds ``stored`` (None: no data); raises when it
    cannot be told without Neo4j (several generations, or a pre-generation tenant, ``0``)."""
    if not stored:
        return None
    if len(stored) == 1 and stored[0] > 0:
        return stored[0]
    raise BackendUnavailableError(
        GRAPH_SERVICE,
        f"Weaviate holds {len(stored)} generation(s) of the tenant and only Neo4j names the current one",
    )


class WeaviateOnlyReads:
    """:class:`~brain_graph.stores.vector_only.VectorOnlyReads` over one Weaviate generation of a tenant."""

    def __init__(self, index: WeaviateVectorIndex, generation: int | None) -> None:
        self._index = index
        self._generation = generation

    @classmethod
    def of_tenant(cls, index: WeaviateVectorIndex, tenant_id: str) -> WeaviateOnlyReads:
        """The reads of the generation Weaviate alone names (:func:`sole_generation`)."""
        return cls(index, sole_generation(index.stored_generations(tenant_id)))

    def seeds(
        self,
        queries: Sequence[VectorQuery],
        *,
        scope: AccessScope,
        seed_filter: SeedFilter,
        top_k: int,
        lexical: Sequence[LexicalQuery] = (),
    ) -> Seeds:
        untimed = searched_profiles(queries, lexical) if seed_filter.updated_after is not None else []
        searched = self._index.search(
            queries,
            lexical,
            scope=scope,
            seed_filter=seed_filter,
            top_k=top_k,
            generation=self._generation,
            untimed=untimed,
        )
        return Seeds(
            best_hits(searched.hits, top_k),
            {},
            None,
            lexical=best_hits(searched.lexical, top_k),
            untimed=searched.untimed,
        )

    def similarity(
        self, queries: Sequence[VectorQuery], node_ids: Sequence[str], *, scope: AccessScope
    ) -> list[VectorHit]:
        if not queries or not node_ids:
            return []
        return self._index.similarity(queries, node_ids, scope=scope, generation=self._generation)
