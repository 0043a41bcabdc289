"""The vector index on Weaviate (weaviate-client v4): one collection per embedding profile
(bring-your-own vectors, :mod:`.schema`), one Weaviate tenant per brain-graph tenant and generation
(:mod:`.naming`). Which generation searches see is decided in Neo4j
(:mod:`brain_graph.stores.neo4j_weaviate.backend`): a load writes a new Weaviate tenant; the older ones are
removed after the switch (:meth:`WeaviateVectorIndex.remove_older`).

Round trips: a search sends one gRPC ``Search`` per queried profile (Weaviate has no multi-collection
search), sent together on one gRPC channel (:mod:`.grpc_search`), so the wall time is one round trip,
plus the profile metadata when the cache is cold (:mod:`.schema`); so does a similarity read of given
nodes (up to 10,000 ids per request). A lexical search (:mod:`.lexical`) sends one gRPC BM25
``Search`` per query and one GraphQL ``Aggregate`` (REST) for the statistics of all of them, together:
one round trip of wall time, ``L + 1`` requests for ``L`` queries, whatever ``top_k``; a search with
both sends them all in that round (:meth:`WeaviateVectorIndex.search`). A load lists the tenants of
each collection once to remove older generations (and once per profile whose embedder changes). An incremental change
(:mod:`.changes`) reads the profile metadata once, then the objects it touches, then writes; the
write side's reads of vector states are paged (:mod:`.states`). Every call is bounded and its failures
mapped by :mod:`.client`. Reads and writes of objects use the consistency levels of
:mod:`.replication`; new collections its replication factor.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence

import weaviate
from weaviate.exceptions import WeaviateQueryError

from brain_graph.core.errors import ConfigurationError
from brain_graph.core.filters import SeedFilter
from brain_graph.core.security import AccessScope
from brain_graph.stores.base import (
    LexicalQuery,
    ProfileIndexInfo,
    VectorHit,
    VectorQuery,
    VectorRecord,
    VectorState,
)
from brain_graph.stores.identity import EmbeddingMismatchError
from brain_graph.stores.neo4j_weaviate.weaviate.changes import StoredObject, VectorPlan, WeaviateChanges
from brain_graph.stores.neo4j_weaviate.weaviate.client import WeaviateConnection
from brain_graph.stores.neo4j_weaviate.weaviate.errors import is_dimension_mismatch, is_missing
from brain_graph.stores.neo4j_weaviate.weaviate.grpc_search import GrpcSearch
from brain_graph.stores.neo4j_weaviate.weaviate.naming import (
    collection_name,
    legacy_tenant_name,
    split_tenant_name,
    tenant_name,
)
from brain_graph.stores.neo4j_weaviate.weaviate.replication import Replication
from brain_graph.stores.neo4j_weaviate.weaviate.schema import VectorIndexKind, WeaviateSchema
from brain_graph.stores.neo4j_weaviate.weaviate.search import Searched, WeaviateSearch
from brain_graph.stores.neo4j_weaviate.weaviate.states import read_states
from brain_graph.stores.neo4j_weaviate.weaviate.writes import WeaviateWrites

Client = weaviate.WeaviateAsyncClient


class WeaviateVectorIndex:
    """Search, writes and administration of the vectors of every generation. Connects lazily."""

    def __init__(
        self,
        *,
        host: str,
        http_port: int,
        grpc_port: int,
        api_key: str = "",
        timeout_s: float = 5.0,
        secure: bool = False,
        vector_index: VectorIndexKind = "flat",
        profile_cache_ttl_s: float = 60.0,
        replication: Replication | None = None,
    ) -> None:
        self.replication = replication or Replication()
        self.connection = WeaviateConnection(
            host=host, http_port=http_port, grpc_port=grpc_port, api_key=api_key, timeout_s=timeout_s, secure=secure
        )
        self.schema = WeaviateSchema(
            self.connection, vector_index=vector_index, cache_ttl_s=profile_cache_ttl_s, replication=self.replication
        )
        self.grpc_search = GrpcSearch(
            host=host, port=grpc_port, api_key=api_key, timeout_s=timeout_s, secure=secure, replication=self.replication
        )
        self.writes = WeaviateWrites(self.connection, self.schema, self.grpc_search)
        self.changes = WeaviateChanges(self.connection, self.writes, self.replication)
        self._search = WeaviateSearch(self.connection, self.schema, self.grpc_search)

    @property
    def round_trips(self) -> int:
        """Requests sent so far."""
        return self.connection.round_trips

    def query(
        self,
        queries: Sequence[VectorQuery],
        *,
        scope: AccessScope,
        seed_filter: SeedFilter,
        top_k: int,
        generation: int | None,
    ) -> list[VectorHit]:
        """:meth:`brain_graph.stores.base.VectorIndex.query` over the Weaviate tenant of ``generation`` of
        the scope's tenant. ``generation`` None (the tenant has no data) only checks the queries against
        the profiles and returns no hits."""
        if not queries:
            return []
        return self._search.query(queries, scope, seed_filter, top_k, generation)

    def lexical(
        self,
        queries: Sequence[LexicalQuery],
        *,
        scope: AccessScope,
        seed_filter: SeedFilter,
        top_k: int,
        generation: int | None,
    ) -> list[VectorHit]:
        """:meth:`brain_graph.stores.base.VectorIndex.lexical` over the Weaviate tenant of ``generation``
        of the scope's tenant (None: no hits): a query without terms, or of a profile without a
        collection holding lexical documents, has none. One round: ``L`` BM25 requests and one
        statistics request (:mod:`.lexical`)."""
        if not queries:
            return []
        return self._search.lexical(queries, scope, seed_filter, top_k, generation)

    def untimed(
        self, profile_ids: Sequence[str], *, scope: AccessScope, seed_filter: SeedFilter, generation: int | None
    ) -> bool:
        """:meth:`brain_graph.stores.base.VectorIndex.untimed` in the Weaviate tenant of ``generation`` of
        the scope's tenant (None: False): one gRPC request per profile's collection, sent together
        (:mod:`.untimed`), none without a recency part."""
        if seed_filter.updated_after is None or not profile_ids:
            return False
        return self._search.untimed(profile_ids, scope, seed_filter, generation)

    def search(
        self,
        queries: Sequence[VectorQuery],
        lexical: Sequence[LexicalQuery],
        *,
        scope: AccessScope,
        seed_filter: SeedFilter,
        top_k: int,
        generation: int | None,
        untimed: Sequence[str] = (),
    ) -> Searched:
        """:meth:`query` of ``queries``, :meth:`lexical` of ``lexical`` and, with a recency part,
        :meth:`untimed` of the profiles ``untimed``, their requests sent in one round."""
        if not queries and not lexical and (seed_filter.updated_after is None or not untimed):
            return Searched()
        return self._search.search(queries, lexical, scope, seed_filter, top_k, generation, untimed=untimed)

    def similarity(
        self, queries: Sequence[VectorQuery], node_ids: Sequence[str], *, scope: AccessScope, generation: int | None
    ) -> list[VectorHit]:
        """:meth:`brain_graph.stores.base.VectorIndex.similarity` in the Weaviate tenant of ``generation``
        of the scope's tenant (None: only checks the queries, no hits). No request without ids."""
        if not queries or not node_ids:
            return []
        return self._search.similarity(queries, node_ids, scope, generation)

    def write(
        self,
        vectors: Sequence[VectorRecord],
        profiles: Sequence[ProfileIndexInfo],
        *,
        generations: Mapping[str, int],
        replace_tenants: Sequence[str] = (),
    ) -> None:
        """Create missing collections (applying the embedder-identity rule, with ``replace_tenants`` the
        tenants this load replaces), then upsert ``vectors`` into the Weaviate tenant of each tenant's
        generation in ``generations``. Rerunning is safe."""
        extra = sorted({v.profile_id for v in vectors} - {p.profile_id for p in profiles})
        if extra:
            raise ConfigurationError(f"vectors of profile(s) {extra} come without profile metadata")

        async def op(client: Client) -> None:
            cache = await self.schema.read(client)
            await self.schema.ensure(client, profiles, cache, replace_tenants)
            await self.writes.insert(vectors, generations)

        try:
            self.connection.call(op, None)
        finally:
            self.schema.invalidate()

    def check_write(self, profiles: Sequence[ProfileIndexInfo], *, replace_tenants: Sequence[str] = ()) -> list[str]:
        """Raise the :class:`ConfigurationError` :meth:`write` would raise for these profiles, writing
        nothing (run before the graph is written, so a rejected load changes neither store); the
        profiles whose recorded identity the write would change."""

        async def op(client: Client) -> list[str]:
            cache = await self.schema.read(client)
            return await self.schema.ensure(client, profiles, cache, replace_tenants, dry_run=True)

        return self.connection.call(op, None)

    # -- incremental changes (see :mod:`.changes`) -------------------------------------------------

    def prepare_changes(self, profiles: Sequence[ProfileIndexInfo]) -> set[str]:
        """Refuse profiles whose identity differs from the recorded one, create the collections of new
        ones (recording their identity); the brain-graph collections that exist then. One REST call,
        plus one per collection created."""

        async def op(client: Client) -> set[str]:
            cache = await self.schema.read(client)
            self.schema.check_unchanged(cache, profiles)
            await self.schema.ensure(client, profiles, cache, ())
            return set(cache.collections)

        try:
            return self.connection.call(op, None)
        except BaseException:
            self.schema.invalidate()
            raise

    def read_objects(self, plan: VectorPlan) -> list[StoredObject]:
        """The objects ``plan`` touches, as they are now (what :meth:`restore` puts back)."""

        async def op(client: Client) -> list[StoredObject]:
            return await self.changes.read(client, plan)

        return self.connection.call(op, None) if plan else []

    def write_changes(self, plan: VectorPlan, previous: Sequence[StoredObject]) -> None:
        """Delete, then upsert, the objects of ``plan`` (``previous``: what :meth:`read_objects` read)."""

        async def op(client: Client) -> None:
            await self.changes.write(client, plan, previous)

        if plan:
            self.connection.call(op, None)

    def restore(self, plan: VectorPlan, previous: Sequence[StoredObject]) -> None:
        """Undo :meth:`write_changes`, however far it went."""

        async def op(client: Client) -> None:
            await self.changes.restore(client, plan, previous)

        if plan:
            self.connection.call(op, None)

    # -- write-side reads ------------------------------------------------------------------------

    def vector_states(
        self, tenant_id: str, generation: int | None, profile_id: str, node_ids: Sequence[str] | None
    ) -> list[VectorState]:
        """The states of a profile's objects in a tenant's generation (those of ``node_ids`` when given),
        sorted by node id, each saying whether a vector search reaches it (:mod:`.states`; checked at
        the profile's recorded dimension, from the schema cache); none without a generation, a
        collection or a Weaviate tenant. Stored vectors of another dimension than the recorded one in
        the vector index are an :class:`~brain_graph.stores.identity.EmbeddingMismatchError`."""
        if generation is None or (node_ids is not None and not node_ids):
            return []
        tenant = tenant_name(tenant_id, generation)

        async def op(client: Client) -> list[VectorState]:
            recorded = (await self.schema.for_query(client, [profile_id])).profiles.get(profile_id)
            collection = self.replication.reading(
                client.collections.use(collection_name(profile_id)).with_tenant(tenant)
            )
            dimension = recorded.dimension if recorded is not None else None
            try:
                return await read_states(self.connection, collection, node_ids, dimension=dimension)
            except WeaviateQueryError as error:
                if not is_dimension_mismatch(error):
                    raise
                self.schema.invalidate()
                raise EmbeddingMismatchError(
                    f"profile {profile_id}: the vector index of tenant {tenant_id!r} refuses vectors of the "
                    f"recorded dimension {dimension}: {str(error)[:300]}"
                ) from None

        return self.connection.call(op, None)

    def recorded_profiles(self) -> dict[str, ProfileIndexInfo]:
        """The embedder identity each profile's collection records (one REST call)."""

        async def op(client: Client) -> dict[str, ProfileIndexInfo]:
            return dict((await self.schema.read(client)).profiles)

        return self.connection.call(op, None)

    # -- administration --------------------------------------------------------------------------

    def remove_older(self, current: Mapping[str, int], *, legacy: Sequence[str] = ()) -> None:
        """Remove, from every brain-graph collection, the Weaviate tenants of each tenant's generations
        older than ``current[tenant]`` (never the current one or a newer one being staged), and the
        pre-generation Weaviate tenants of the ``legacy`` tenant ids."""
        below = {tenant_name(tenant): generation for tenant, generation in current.items()}
        legacy_names = {legacy_tenant_name(tenant) for tenant in legacy}

        def pick(name: str) -> bool:
            base, generation = split_tenant_name(name)
            if generation is None:
                return name in legacy_names
            return base in below and generation < below[base]

        async def op(client: Client) -> None:
            await self.writes.remove_tenants(client, pick, (await self.schema.read(client)).collections)

        if below:
            self.connection.call(op, None)

    def drop_tenants(self, tenant_ids: Sequence[str]) -> None:
        """Remove every generation of the tenants (all their vectors) from every brain-graph collection."""
        bases = {tenant_name(t) for t in tenant_ids}
        legacy = {legacy_tenant_name(t) for t in tenant_ids}

        def pick(name: str) -> bool:
            base, generation = split_tenant_name(name)
            return base in bases if generation is not None else name in legacy

        async def op(client: Client) -> None:
            await self.writes.remove_tenants(client, pick, (await self.schema.read(client)).collections)

        try:
            self.connection.call(op, None)
        finally:
            self.schema.invalidate()

    def drop_profiles(self, profile_ids: Sequence[str]) -> None:
        """Delete the collections of these profiles (all tenants)."""

        async def op(client: Client) -> None:
            await self.writes.drop_collections(client, profile_ids)

        try:
            self.connection.call(op, None)
        finally:
            self.schema.invalidate()

    def count(self, tenant_id: str, generation: int | None) -> dict[str, int]:
        """Objects per recorded profile in a tenant's generation (profiles without any left out). Reads
        the profile metadata even when ``generation`` is None, so it also checks that Weaviate answers."""

        async def aggregate(client: Client, profile_id: str, tenant: str) -> int:
            collection = client.collections.use(collection_name(profile_id)).with_tenant(tenant)
            self.connection.tick()
            try:
                result = await collection.aggregate.over_all(total_count=True)
            except WeaviateQueryError as error:
                if is_missing(error):
                    return 0
                raise
            return int(result.total_count or 0)

        async def op(client: Client) -> dict[str, int]:
            cache = await self.schema.read(client)
            if generation is None:
                return {}
            tenant = tenant_name(tenant_id, generation)
            profiles = sorted(p for p in cache.profiles if collection_name(p) in cache.collections)
            totals = await asyncio.gather(*(aggregate(client, p, tenant) for p in profiles))
            return {p: n for p, n in zip(profiles, totals, strict=True) if n}

        return self.connection.call(op, None)

    def stored_generations(self, tenant_id: str) -> list[int]:
        """The generations of a tenant that hold vectors in any brain-graph collection (0: pre-generation)."""
        base, legacy = tenant_name(tenant_id), legacy_tenant_name(tenant_id)

        async def op(client: Client) -> set[int]:
            found: set[int] = set()
            for collection in sorted((await self.schema.read(client)).collections):
                for name in await self.schema.tenant_names(client, collection):
                    name_base, generation = split_tenant_name(name)
                    if generation is not None and name_base == base:
                        found.add(generation)
                    elif generation is None and name == legacy:
                        found.add(0)
            return found

        return sorted(self.connection.call(op, None))

    def close(self) -> None:
        """Close the client, the search channel and the loop thread (a later call opens them again)."""
        self.grpc_search.close()
        self.connection.close()
