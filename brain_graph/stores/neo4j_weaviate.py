"""The production backend: vectors in Weaviate, the graph (and passage texts) in Neo4j.

Nothing connects at construction; the first call does, and a server that is down or silent is reported
as :class:`~brain_graph.errors.BackendUnavailableError` naming ``neo4j`` or ``weaviate`` within
``backend_timeout_s``.

Generations
    A tenant's data is one *generation*: its nodes in Neo4j carry ``generation``, its vectors live in
    the Weaviate tenant ``tenant_name(tenant, generation)``, and the pointer
    ``(:BrainTenant {tenantId, generation})`` names the generation searches see. A search reads the
    pointer first, then queries that Weaviate tenant; every Neo4j read joins the pointer itself.

Loading (:meth:`Neo4jWeaviateBackend.load`)
    1. :func:`~brain_graph.write_checks.check_load` and the embedder-identity rule
       (:func:`~brain_graph.stores.base.profile_conflict`) are checked: a refused load writes nothing.
    2. A replace-load takes a fresh generation per tenant, writes its nodes and edges to Neo4j, then its
       vectors to Weaviate, in bounded batches, all invisible to searches.
    3. The flip: ONE small Neo4j transaction moves every loaded tenant's pointer to its new generation,
       only if that is newer than the current one (a slower, older load never hides a newer one).
    4. Clean-up: every generation older than the current one is deleted from both stores (Weaviate
       tenants, then Neo4j nodes in batches); leftovers of crashed loads go at the same time, and so do
       (once per tenant) nodes and Weaviate tenants written before generations existed.
    A replace-load that fails or is killed before the flip changes nothing searches see; after the
    flip, searches see the new data, and what a failed clean-up left is removed by the next load of the
    tenant. A load overtaken by a newer one (its flip refused) removes its own generation and returns:
    the newer data stays. Generations newer than the current one are never deleted. A merge-load
    (``replace=False``) upserts into the current generation (a tenant without one is loaded as by a
    replace-load): idempotent, but not atomic (searches may see part of it while it runs). Exception:
    a load that changes a profile's embedder identity re-indexes that profile before writing (a new
    dimension recreates the Weaviate collection), so a failure after that point leaves the profile's
    vectors incomplete until the load is run again.

Round trips of one search (warm profile cache; ``P`` queried profiles, expansion depth ``D``, hits
found, no early stop of the expansion): Neo4j ``1`` (the tenant's generation), then Weaviate ``P``
(concurrent), then Neo4j ``1`` (hit nodes) + ``D`` (one per hop) + ``2`` (admitted nodes, their edges)
+ ``1`` (cluster memberships, when on) + ``1`` (passage texts). None of it depends on ``topK`` or on the
number of hits (one Neo4j statement more than before generations). :meth:`Neo4jWeaviateBackend.round_trips`
reads the counters. A search that runs while a load flips may combine two generations (each statement
sees one).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from brain_graph.security import AccessScope
from brain_graph.stores.base import (
    EdgeRecord,
    NodeRecord,
    ProfileIndexInfo,
    VectorHit,
    VectorQuery,
    VectorRecord,
)
from brain_graph.stores.neo4j_graph import Flip, Neo4jGraphStore
from brain_graph.stores.weaviate_index import VectorIndexKind, WeaviateVectorIndex
from brain_graph.write_checks import check_load

if TYPE_CHECKING:
    from brain_graph.config import Settings


class CurrentGenerationIndex:
    """The backend's :class:`~brain_graph.stores.base.VectorIndex`: Weaviate, at the generation the
    tenant's Neo4j pointer names."""

    def __init__(self, graph: Neo4jGraphStore, index: WeaviateVectorIndex) -> None:
        self._graph = graph
        self.weaviate = index

    def query(
        self, queries: Sequence[VectorQuery], *, scope: AccessScope, project_key: str | None, top_k: int
    ) -> list[VectorHit]:
        """See :meth:`brain_graph.stores.base.VectorIndex.query`: one Neo4j statement (the generation),
        then one concurrent Weaviate request per profile."""
        if not queries:
            return []
        generation = self._graph.current_generation(scope.tenant_id)
        return self.weaviate.query(queries, scope=scope, project_key=project_key, top_k=top_k, generation=generation)

    def count(self, profile_id: str, tenant_id: str) -> int:
        """Vectors of a profile in the tenant's current generation."""
        return self.weaviate.count(profile_id, tenant_id, self._graph.current_generation(tenant_id))

    def drop_profiles(self, profile_ids: Sequence[str]) -> None:
        """Delete the Weaviate collections of these profiles (all tenants)."""
        self.weaviate.drop_profiles(profile_ids)


class Neo4jWeaviateBackend:
    """:class:`~brain_graph.stores.base.StorageBackend` over Neo4j + Weaviate."""

    name = "neo4j-weaviate"

    def __init__(self, graph: Neo4jGraphStore, index: WeaviateVectorIndex) -> None:
        self._graph = graph
        self._index = index
        self._vectors = CurrentGenerationIndex(graph, index)

    @classmethod
    def from_settings(cls, settings: Settings) -> Neo4jWeaviateBackend:
        """The backend the settings describe; connects lazily."""
        timeout = settings.backend_timeout_s
        kind: VectorIndexKind = settings.weaviate_vector_index
        return cls(
            Neo4jGraphStore(
                uri=settings.neo4j_uri,
                user=settings.neo4j_user,
                password=settings.neo4j_password,
                database=settings.neo4j_database,
                timeout_s=timeout,
            ),
            WeaviateVectorIndex(
                host=settings.weaviate_host,
                http_port=settings.weaviate_http_port,
                grpc_port=settings.weaviate_grpc_port,
                api_key=settings.weaviate_api_key,
                timeout_s=timeout,
                vector_index=kind,
            ),
        )

    @property
    def vector_index(self) -> CurrentGenerationIndex:
        return self._vectors

    @property
    def weaviate(self) -> WeaviateVectorIndex:
        """The Weaviate index itself (all generations)."""
        return self._index

    @property
    def graph_store(self) -> Neo4jGraphStore:
        return self._graph

    @property
    def passage_source(self) -> Neo4jGraphStore:
        return self._graph

    def load(
        self,
        nodes: Sequence[NodeRecord],
        edges: Sequence[EdgeRecord],
        vectors: Sequence[VectorRecord],
        profiles: Sequence[ProfileIndexInfo],
        *,
        replace: bool,
    ) -> None:
        """Check, stage, flip, clean up (see the module docstring). With ``replace`` the tenants of
        ``nodes`` get a new generation; every other loaded tenant is upserted into its current
        generation (or gets a new one when it has none). Nothing is written before every check passed."""
        check_load(nodes, edges, vectors, profiles)
        generations, fresh = self._plan(nodes, edges, vectors, replace=replace)
        self._index.check_write(profiles, replace_tenants=fresh)
        generations.update(self._graph.take_generations(fresh))
        self._graph.write(nodes, edges, generations)
        self._index.write(vectors, profiles, generations=generations, replace_tenants=fresh)
        self._clean_up(self._graph.flip(generations))

    def _plan(
        self,
        nodes: Sequence[NodeRecord],
        edges: Sequence[EdgeRecord],
        vectors: Sequence[VectorRecord],
        *,
        replace: bool,
    ) -> tuple[dict[str, int], list[str]]:
        """The current generations of the tenants upserted into, and the tenants that need a fresh one."""
        replaced = {node.tenant_id for node in nodes} if replace else set()
        loaded = {r.tenant_id for r in nodes} | {r.tenant_id for r in edges} | {r.tenant_id for r in vectors}
        current = self._graph.current_generations(sorted(loaded - replaced))
        return current, sorted(loaded - set(current))

    def _clean_up(self, flips: Mapping[str, Flip]) -> None:
        """Delete what is older than each tenant's current generation: Weaviate tenants, then nodes."""
        self._index.remove_older(
            {tenant: flip.current for tenant, flip in flips.items()},
            legacy=[tenant for tenant, flip in flips.items() if flip.legacy],
        )
        for tenant, flip in sorted(flips.items()):
            self._graph.delete_older(tenant, flip)

    def drop_tenants(self, tenants: Sequence[str]) -> None:
        """Delete everything of these tenants (every generation) from both servers."""
        self._index.drop_tenants(tenants)
        self._graph.drop_tenants(tenants)

    def drop_profiles(self, profile_ids: Sequence[str]) -> None:
        """Delete the Weaviate collections of these profiles (all tenants)."""
        self._index.drop_profiles(profile_ids)

    def round_trips(self) -> dict[str, int]:
        """Requests sent so far: ``{"neo4j": statements, "weaviate": requests}``."""
        return {"neo4j": self._graph.round_trips, "weaviate": self._index.round_trips}

    def close(self) -> None:
        """Close both clients."""
        try:
            self._graph.close()
        finally:
            self._index.close()
