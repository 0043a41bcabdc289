"""The production backend: vectors in Weaviate, the graph (and passage texts) in Neo4j.

Nothing connects at construction; the first call does, and a server that is down or silent is reported
as :class:`~brain_graph.errors.BackendUnavailableError` naming ``neo4j`` or ``weaviate`` within
``timeout_s`` (:class:`Neo4jWeaviateSettings`, ``BRAIN_GRAPH_BACKEND_TIMEOUT``). The Neo4j half is
:mod:`brain_graph.stores.neo4j`, the Weaviate half :mod:`brain_graph.stores.weaviate`.

Generations
    A tenant's data is one *generation*: its nodes in Neo4j carry ``generation``, its vectors live in
    the Weaviate tenant ``tenant_name(tenant, generation)``, and the pointer
    ``(:BrainTenant {tenantId, generation})`` names the generation searches see. A search reads the
    pointer first, then queries that Weaviate tenant; every Neo4j read joins the pointer itself.

Loading (:meth:`Neo4jWeaviateBackend.load`)
    1. :func:`~brain_graph.write_checks.check_load` and the embedder-identity rule
       (:func:`~brain_graph.stores.identity.profile_conflict`) are checked: a refused load writes nothing.
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
(concurrent), then Neo4j ``1`` (hit metadata), then per hop Neo4j ``1`` (the frontier's links) and, for
the new nodes' similarity, Neo4j ``1`` (the generation) + Weaviate ``P`` (concurrent), then Neo4j ``1``
(metadata of the nodes the expansion added, when it added any) + ``1`` (edges among the admitted nodes)
+ ``1`` (cluster memberships, when on; clusters already read are not read again) + ``1`` (passage
texts). None of it depends on ``topK`` or on the number of hits. Per method:
:meth:`~CurrentGenerationIndex.query` and :meth:`~CurrentGenerationIndex.similarity` take Neo4j ``1``
(the generation) then Weaviate ``P`` (concurrent; the pipeline scores at most 10,000 ids per hop, one
request per profile), nothing without queries or ids; every
:class:`~brain_graph.stores.neo4j.graph.Neo4jGraphStore` read, ``links`` included (degrees and links of
the whole frontier), takes Neo4j ``1``.
:meth:`Neo4jWeaviateBackend.round_trips` reads the counters. A search that runs while a load flips
may combine two generations (each statement sees one).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings

from brain_graph.environment import ENV_CONFIG, read_settings
from brain_graph.security import AccessScope
from brain_graph.stores.base import (
    EdgeRecord,
    NodeRecord,
    ProfileIndexInfo,
    TenantCounts,
    VectorHit,
    VectorQuery,
    VectorRecord,
)
from brain_graph.stores.neo4j import cypher
from brain_graph.stores.neo4j.client import Neo4jClient, uri_problem
from brain_graph.stores.neo4j.generations import Flip, Neo4jGenerations
from brain_graph.stores.neo4j.graph import Neo4jGraphStore
from brain_graph.stores.weaviate.index import WeaviateVectorIndex
from brain_graph.stores.weaviate.schema import VectorIndexKind
from brain_graph.write_checks import check_load


class Neo4jWeaviateSettings(BaseSettings):
    """Connections of the backend, read from the environment when it is built (names in the README)."""

    model_config = ENV_CONFIG

    timeout_s: float = Field(default=5.0, gt=0, le=300, validation_alias="BRAIN_GRAPH_BACKEND_TIMEOUT")
    vector_index: VectorIndexKind = Field(default="flat", validation_alias="BRAIN_GRAPH_WEAVIATE_VECTOR_INDEX")
    neo4j_uri: str = Field(default="bolt://127.0.0.1:7687", validation_alias="NEO4J_URI")
    neo4j_user: str = Field(default="neo4j", validation_alias="NEO4J_USER")
    neo4j_password: str = Field(default="", validation_alias="NEO4J_PASSWORD")
    neo4j_database: str = Field(default="neo4j", validation_alias="NEO4J_DATABASE")
    weaviate_host: str = Field(default="127.0.0.1", validation_alias="WEAVIATE_HOST")
    weaviate_http_port: int = Field(default=8080, validation_alias="WEAVIATE_HTTP_PORT")
    weaviate_grpc_port: int = Field(default=50051, validation_alias="WEAVIATE_GRPC_PORT")
    weaviate_api_key: str = Field(default="", validation_alias="WEAVIATE_API_KEY")

    @field_validator("neo4j_uri")
    @classmethod
    def _neo4j_uri(cls, value: str) -> str:
        problem = uri_problem(value)
        if problem is not None:
            raise ValueError(problem)
        return value


class CurrentGenerationIndex:
    """The backend's :class:`~brain_graph.stores.base.VectorIndex`: Weaviate, at the generation the
    tenant's Neo4j pointer names."""

    def __init__(self, generations: Neo4jGenerations, index: WeaviateVectorIndex) -> None:
        self._generations = generations
        self._index = index

    def query(
        self, queries: Sequence[VectorQuery], *, scope: AccessScope, project_key: str | None, top_k: int
    ) -> list[VectorHit]:
        """See :meth:`brain_graph.stores.base.VectorIndex.query`: one Neo4j statement (the generation),
        then one concurrent Weaviate request per profile."""
        if not queries:
            return []
        generation = self._generations.current_generation(scope.tenant_id)
        return self._index.query(queries, scope=scope, project_key=project_key, top_k=top_k, generation=generation)

    def similarity(
        self, queries: Sequence[VectorQuery], node_ids: Sequence[str], *, scope: AccessScope
    ) -> list[VectorHit]:
        """See :meth:`brain_graph.stores.base.VectorIndex.similarity`: one Neo4j statement (the
        generation), then one concurrent Weaviate request per profile; nothing without ids."""
        if not queries or not node_ids:
            return []
        generation = self._generations.current_generation(scope.tenant_id)
        return self._index.similarity(queries, node_ids, scope=scope, generation=generation)


class Neo4jWeaviateBackend:
    """:class:`~brain_graph.stores.base.StorageBackend` over Neo4j + Weaviate, with its administration.
    ``neo4j`` (the client), ``generations`` and ``weaviate`` give the stores' own operations (tests,
    operators)."""

    name = "neo4j-weaviate"

    def __init__(self, neo4j: Neo4jClient, weaviate: WeaviateVectorIndex) -> None:
        self.neo4j = neo4j
        self.generations = Neo4jGenerations(neo4j)
        self.weaviate = weaviate
        self._graph = Neo4jGraphStore(neo4j)
        self._vectors = CurrentGenerationIndex(self.generations, weaviate)

    @classmethod
    def from_settings(cls, settings: Neo4jWeaviateSettings) -> Neo4jWeaviateBackend:
        """The backend the settings describe; connects lazily."""
        return cls(
            Neo4jClient(
                uri=settings.neo4j_uri,
                user=settings.neo4j_user,
                password=settings.neo4j_password,
                database=settings.neo4j_database,
                timeout_s=settings.timeout_s,
                schema=cypher.SCHEMA,
            ),
            WeaviateVectorIndex(
                host=settings.weaviate_host,
                http_port=settings.weaviate_http_port,
                grpc_port=settings.weaviate_grpc_port,
                api_key=settings.weaviate_api_key,
                timeout_s=settings.timeout_s,
                vector_index=settings.vector_index,
            ),
        )

    @property
    def vector_index(self) -> CurrentGenerationIndex:
        return self._vectors

    @property
    def graph_store(self) -> Neo4jGraphStore:
        return self._graph

    @property
    def passage_source(self) -> Neo4jGraphStore:
        return self._graph

    @property
    def admin(self) -> Neo4jWeaviateBackend:
        return self

    # -- loading ---------------------------------------------------------------------------------

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
        self.weaviate.check_write(profiles, replace_tenants=fresh)
        generations.update(self.generations.take_generations(fresh))
        self.generations.write(nodes, edges, generations)
        self.weaviate.write(vectors, profiles, generations=generations, replace_tenants=fresh)
        self.clean_up(self.generations.flip(generations))

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
        current = self.generations.current_generations(sorted(loaded - replaced))
        return current, sorted(loaded - set(current))

    def clean_up(self, flips: Mapping[str, Flip]) -> None:
        """Delete what is older than each tenant's current generation: Weaviate tenants, then nodes."""
        self.weaviate.remove_older(
            {tenant: flip.current for tenant, flip in flips.items()},
            legacy=[tenant for tenant, flip in flips.items() if flip.legacy],
        )
        for tenant, flip in sorted(flips.items()):
            self.generations.delete_older(tenant, flip)

    # -- AdminOperations -------------------------------------------------------------------------

    def drop_tenants(self, tenant_ids: Sequence[str]) -> None:
        """Delete everything of these tenants (every generation) from both servers."""
        self.weaviate.drop_tenants(tenant_ids)
        self.generations.drop_tenants(tenant_ids)

    def drop_profiles(self, profile_ids: Sequence[str]) -> None:
        """Delete the Weaviate collections of these profiles (all tenants)."""
        self.weaviate.drop_profiles(profile_ids)

    def count(self, tenant_id: str) -> TenantCounts:
        """Nodes and edges (Neo4j) and vectors per profile (Weaviate) of the tenant's current generation."""
        nodes, edges = self.generations.count(tenant_id)
        vectors = self.weaviate.count(tenant_id, self.generations.current_generation(tenant_id))
        return TenantCounts(nodes, edges, vectors)

    def round_trips(self) -> dict[str, int]:
        """Requests sent so far: ``{"neo4j": statements, "weaviate": requests}``."""
        return {"neo4j": self.neo4j.round_trips, "weaviate": self.weaviate.round_trips}

    def close(self) -> None:
        """Close both clients."""
        try:
            self.neo4j.close()
        finally:
            self.weaviate.close()


def from_environment(**overrides: Any) -> Neo4jWeaviateBackend:
    """The backend the environment describes (``overrides`` by field name, e.g. ``timeout_s``)."""
    return Neo4jWeaviateBackend.from_settings(read_settings(Neo4jWeaviateSettings, **overrides))
