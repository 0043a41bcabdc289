"""The production backend: vectors in Weaviate, the graph (and passage texts) in Neo4j.

Nothing connects at construction; the first call does, and a server that is down or silent is reported
as :class:`~brain_graph.core.errors.BackendUnavailableError` naming ``neo4j`` or ``weaviate`` within
``timeout_s`` (:class:`Neo4jWeaviateSettings`, ``BRAIN_GRAPH_BACKEND_TIMEOUT``). The Neo4j half is
:mod:`brain_graph.stores.neo4j_weaviate.neo4j`, the Weaviate half :mod:`brain_graph.stores.neo4j_weaviate.weaviate`.

A tenant's data is one generation (its Neo4j nodes and one Weaviate tenant), and the Neo4j pointer
``(:BrainTenant {tenantId, generation})`` names the one searches see. A replace-load stages a new
generation in both stores and flips the pointer in one transaction, so a load that fails before the
flip changes nothing searches see; a change (:meth:`Neo4jWeaviateBackend.apply`) is all or nothing
across both stores: one Neo4j transaction, committed after the Weaviate writes, which are undone when
it fails. A search sends Neo4j ``D + 1`` statements and Weaviate ``P`` requests (expansion depth ``D``,
``P`` profiles), plus ``L + 1`` in the same Weaviate round with ``L`` lexical queries and ``1`` with a
recency filter, whatever ``topK`` and the number of hits.

Steps, failure cases and round trips of every operation: docs/internals/neo4j-weaviate-backend.md.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import neo4j
from neo4j.exceptions import DriverError, Neo4jError
from pydantic import Field, field_validator
from pydantic_settings import BaseSettings

from brain_graph.core.environment import ENV_CONFIG, read_settings
from brain_graph.core.errors import BackendUnavailableError, BrainGraphError, one_line_message
from brain_graph.core.filters import SeedFilter
from brain_graph.core.security import AccessScope
from brain_graph.stores.base import (
    ChangeSet,
    EdgeRecord,
    LexicalQuery,
    NodeRecord,
    ProfileIndexInfo,
    TenantCounts,
    VectorHit,
    VectorQuery,
    VectorRecord,
    VectorState,
)
from brain_graph.stores.neo4j_weaviate.neo4j import cypher
from brain_graph.stores.neo4j_weaviate.neo4j.changes import GraphChanges
from brain_graph.stores.neo4j_weaviate.neo4j.client import Neo4jClient, uri_problem
from brain_graph.stores.neo4j_weaviate.neo4j.generations import Flip, Neo4jGenerations
from brain_graph.stores.neo4j_weaviate.neo4j.graph import Neo4jGraphStore
from brain_graph.stores.neo4j_weaviate.neo4j.index_reads import Neo4jIndexReads
from brain_graph.stores.neo4j_weaviate.neo4j.search_reads import Neo4jSearchReads
from brain_graph.stores.neo4j_weaviate.neo4j.vector_copies import CopiesClock, read_copy_states, reconciled
from brain_graph.stores.neo4j_weaviate.search_reads import ServerSearchReads
from brain_graph.stores.neo4j_weaviate.weaviate.changes import StoredObject, VectorPlan, plan_vectors
from brain_graph.stores.neo4j_weaviate.weaviate.index import WeaviateVectorIndex
from brain_graph.stores.neo4j_weaviate.weaviate.replication import Level, Replication
from brain_graph.stores.neo4j_weaviate.weaviate.schema import VectorIndexKind
from brain_graph.stores.readiness import Check
from brain_graph.stores.write_checks import check_changes, check_load, dangling_edge_error, outside_ends


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
    weaviate_secure: bool = Field(default=False, validation_alias="WEAVIATE_SECURE")  # HTTPS and gRPC over TLS
    # Replicas of each shard of a new collection, and the replicas reads and writes wait for (.weaviate.replication).
    weaviate_replication_factor: int = Field(
        default=1, ge=1, le=64, validation_alias="BRAIN_GRAPH_WEAVIATE_REPLICATION_FACTOR"
    )
    weaviate_write_consistency: Level = Field(
        default="QUORUM", validation_alias="BRAIN_GRAPH_WEAVIATE_WRITE_CONSISTENCY"
    )
    weaviate_read_consistency: Level = Field(default="QUORUM", validation_alias="BRAIN_GRAPH_WEAVIATE_READ_CONSISTENCY")

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
        self, queries: Sequence[VectorQuery], *, scope: AccessScope, seed_filter: SeedFilter, top_k: int
    ) -> list[VectorHit]:
        """See :meth:`brain_graph.stores.base.VectorIndex.query`: one Neo4j statement (the generation),
        then one concurrent Weaviate request per profile."""
        if not queries:
            return []
        generation = self._generations.current_generation(scope.tenant_id)
        return self._index.query(queries, scope=scope, seed_filter=seed_filter, top_k=top_k, generation=generation)

    def untimed(self, profile_ids: Sequence[str], *, scope: AccessScope, seed_filter: SeedFilter) -> bool:
        """See :meth:`brain_graph.stores.base.VectorIndex.untimed`: one Neo4j statement (the
        generation), then one concurrent Weaviate request per profile (:mod:`.weaviate.untimed`); none
        without a recency part."""
        if seed_filter.updated_after is None or not profile_ids:
            return False
        generation = self._generations.current_generation(scope.tenant_id)
        return self._index.untimed(profile_ids, scope=scope, seed_filter=seed_filter, generation=generation)

    def lexical(
        self, queries: Sequence[LexicalQuery], *, scope: AccessScope, seed_filter: SeedFilter, top_k: int
    ) -> list[VectorHit]:
        """See :meth:`brain_graph.stores.base.VectorIndex.lexical`: one Neo4j statement (the generation),
        then one Weaviate round (a BM25 request per query and one statistics request,
        :mod:`.weaviate.lexical`)."""
        if not queries:
            return []
        generation = self._generations.current_generation(scope.tenant_id)
        return self._index.lexical(queries, scope=scope, seed_filter=seed_filter, top_k=top_k, generation=generation)

    def similarity(
        self, queries: Sequence[VectorQuery], node_ids: Sequence[str], *, scope: AccessScope
    ) -> list[VectorHit]:
        """See :meth:`brain_graph.stores.base.VectorIndex.similarity`: one Neo4j statement (the
        generation), then one concurrent Weaviate request per profile; nothing without ids."""
        if not queries or not node_ids:
            return []
        generation = self._generations.current_generation(scope.tenant_id)
        return self._index.similarity(queries, node_ids, scope=scope, generation=generation)


class Neo4jWeaviateIndexStore(Neo4jIndexReads):
    """The backend's :class:`~brain_graph.stores.base.IndexStore`: node records from Neo4j
    (:class:`~brain_graph.stores.neo4j_weaviate.neo4j.index_reads.Neo4jIndexReads`), vector states and recorded
    identities from Weaviate, at each tenant's current generation; a vector state is ``searchable``
    when a Weaviate vector search reaches its object and, where searches trust the copies on the
    nodes, its node holds a copy made from the same content hash."""

    def __init__(self, client: Neo4jClient, index: WeaviateVectorIndex) -> None:
        super().__init__(client)
        self._index = index

    def vector_states(
        self, tenant_id: str, profile_id: str, node_ids: Sequence[str] | None = None
    ) -> list[VectorState]:
        """See :meth:`brain_graph.stores.base.IndexStore.vector_states`: one Neo4j statement (the
        generation and the copies' hashes, :func:`.neo4j.vector_copies.read_copy_states`), then Weaviate
        pages; the two are :func:`.neo4j.vector_copies.reconciled`."""
        if node_ids is not None and not node_ids:
            return []
        copies = read_copy_states(self._client, tenant_id, profile_id, node_ids)
        return reconciled(self._index.vector_states(tenant_id, copies.generation, profile_id, node_ids), copies)

    def recorded_profiles(self) -> dict[str, ProfileIndexInfo]:
        return self._index.recorded_profiles()


def with_restore_failure(error: BaseException, failure: BaseException) -> BaseException:
    """``error`` (or an equal error whose message says so) noting that restoring Weaviate failed."""
    reason = one_line_message(f"{type(failure).__name__}: {failure}", 300)
    note = f"restoring Weaviate failed too ({reason}); it may hold part of the change"
    if isinstance(error, BackendUnavailableError):
        return BackendUnavailableError(error.backend, f"{error.detail}; {note}")
    if isinstance(error, BrainGraphError) and len(error.args) == 1 and isinstance(error.args[0], str):
        try:
            return type(error)(f"{error}; {note}")
        except TypeError:
            pass
    error.add_note(note)
    return error


class Neo4jWeaviateBackend:
    """:class:`~brain_graph.stores.base.StorageBackend` over Neo4j + Weaviate, with its administration.
    ``neo4j`` (the client), ``generations`` and ``weaviate`` give the stores' own operations (tests,
    operators)."""

    name = "neo4j-weaviate"
    supports_lexical = True  # each vector's object holds its lexical document (VectorIndex.lexical)

    def __init__(self, neo4j: Neo4jClient, weaviate: WeaviateVectorIndex) -> None:
        self.neo4j = neo4j
        self.generations = Neo4jGenerations(neo4j)
        self.weaviate = weaviate
        self._graph = Neo4jGraphStore(neo4j)
        self._vectors = CurrentGenerationIndex(self.generations, weaviate)
        self._index_store = Neo4jWeaviateIndexStore(neo4j, weaviate)
        self._search_reads = ServerSearchReads(Neo4jSearchReads(neo4j), self.generations, weaviate)
        self._graph_changes = GraphChanges(neo4j)
        self.copies = CopiesClock(neo4j)

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
                secure=settings.weaviate_secure,
                vector_index=settings.vector_index,
                replication=Replication(
                    factor=settings.weaviate_replication_factor,
                    write=settings.weaviate_write_consistency,
                    read=settings.weaviate_read_consistency,
                ),
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
    def search_reads(self) -> ServerSearchReads:
        return self._search_reads

    @property
    def admin(self) -> Neo4jWeaviateBackend:
        return self

    @property
    def index_store(self) -> Neo4jWeaviateIndexStore:
        return self._index_store

    def readiness_checks(self) -> dict[str, Check]:
        """Each server answers one cheap request (:meth:`Neo4jClient.ping`,
        :meth:`~brain_graph.stores.neo4j_weaviate.weaviate.client.WeaviateConnection.ping`); see
        :mod:`brain_graph.stores.readiness`."""
        return {"neo4j": self.neo4j.ping, "weaviate": self.weaviate.connection.ping}

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
        """Check, stage, flip, clean up (docs/internals/neo4j-weaviate-backend.md). With ``replace`` the
        tenants of ``nodes`` get a new generation, visible only once all of it is written; every other
        loaded tenant is upserted into its current generation (or gets a new one when it has none).
        Nothing is written before every check passed."""
        check_load(nodes, edges, vectors, profiles)
        generations, fresh = self._plan(nodes, edges, vectors, replace=replace)
        self._check_ends(nodes, edges, generations)
        self.copies.drop(self.weaviate.check_write(profiles, replace_tenants=fresh))
        self.copies.untrust({vector.tenant_id for vector in vectors} & set(generations))  # merged: not atomic
        clocks = dict.fromkeys(sorted(set(fresh) - nodeless_vector_tenants(nodes, vectors)), self.copies.read())
        generations.update(self.generations.take_generations(fresh))
        with ThreadPoolExecutor(1, thread_name_prefix="brain-graph-weaviate-load") as pool:
            vectors_written = pool.submit(
                self.weaviate.write, vectors, profiles, generations=generations, replace_tenants=fresh
            )
            try:
                self.generations.write(nodes, edges, generations, vectors)
            except BaseException:
                _wait_quietly(vectors_written)  # the graph's error is the one to report
                raise
            try:
                vectors_written.result()
            except BrainGraphError as error:
                self._write_past_drops(error, vectors, profiles, generations, fresh)
        flips = self.generations.flip(generations, clocks)
        for tenant, generation in generations.items():  # no pointer: deleted by a drop that left no tombstone
            flips.setdefault(tenant, Flip(None, False, generation))
        self.clean_up(flips)

    def _write_past_drops(
        self,
        error: BrainGraphError,
        vectors: Sequence[VectorRecord],
        profiles: Sequence[ProfileIndexInfo],
        generations: Mapping[str, int],
        fresh: Sequence[str],
    ) -> None:
        """After the vector write of a load failed: when a drop overtook some of its tenants (deleting the
        Weaviate tenants being written), the drop wins for those and the vectors of the others are
        written again (rerunning is safe); else ``error`` stands."""
        dropped = self.generations.dropped_since(generations)
        if not dropped:
            raise error
        rest = {tenant: generation for tenant, generation in generations.items() if tenant not in dropped}
        kept = [vector for vector in vectors if vector.tenant_id in rest]
        if kept:
            replaced = [tenant for tenant in fresh if tenant in rest]
            self.weaviate.write(kept, profiles, generations=rest, replace_tenants=replaced)

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

    def _check_ends(self, nodes: Sequence[NodeRecord], edges: Sequence[EdgeRecord], current: Mapping[str, int]) -> None:
        """Refuse an edge to a node neither in ``nodes`` nor stored in the current generation of its
        tenant (a tenant loaded into a fresh generation has no stored node), before anything is written."""
        ends = outside_ends(nodes, edges)
        error = dangling_edge_error(edges, set(ends) - self.generations.existing_nodes(ends, current))
        if error is not None:
            raise error

    def clean_up(self, flips: Mapping[str, Flip]) -> None:
        """Delete what is older than each tenant's current generation: Weaviate tenants, then nodes."""
        self.weaviate.remove_older(
            {tenant: flip.keep_from for tenant, flip in flips.items()},
            legacy=[tenant for tenant, flip in flips.items() if flip.legacy],
        )
        for tenant, flip in sorted(flips.items()):
            self.generations.delete_older(tenant, flip)

    # -- incremental changes ---------------------------------------------------------------------

    def apply(self, changes: ChangeSet) -> None:
        """Check, then write into the current generations, all or nothing across both stores
        (docs/internals/neo4j-weaviate-backend.md)."""
        check_changes(changes)
        if not changes:
            return
        touches_vectors = changes.profiles or changes.upsert_vectors or changes.delete_vectors or changes.delete_nodes
        collections = self.weaviate.prepare_changes(changes.profiles) if touches_vectors else set()
        unsure: set[str] = set()
        try:
            flips = self.neo4j.write(lambda session: self._apply_in(session, changes, collections, unsure))
        except BaseException:
            if unsure:  # the stores may now differ: stop trusting the copies (best effort, after the rollback)
                with contextlib.suppress(Exception):
                    self.copies.untrust(unsure)
            raise
        if flips:
            self.clean_up(flips)

    def _apply_in(
        self, session: neo4j.Session, changes: ChangeSet, collections: set[str], unsure: set[str]
    ) -> dict[str, Flip]:
        """The Neo4j transaction of a change, with the Weaviate writes before its commit. When the commit
        fails (its outcome unknown) or Weaviate cannot be restored, the change's tenants go into
        ``unsure``: their vector copies may no longer match Weaviate."""
        with self.neo4j.transaction(session) as tx:
            generations = self._graph_changes.lock(tx, changes)
            self._graph_changes.write(tx, changes, generations.current)
            changes = self._graph_changes.vectors_from_graph(tx, changes, generations.current)
            self._graph_changes.write_copies(tx, changes, generations.current)
            plan = plan_vectors(changes, generations.current, collections)
            previous = self.weaviate.read_objects(plan)
            committing = False
            try:
                self.weaviate.write_changes(plan, previous)
                committing = True
                tx.commit()
            except (DriverError, Neo4jError) as error:
                mapped = self.neo4j.failure(error)
                failure = self._restored(mapped, plan, previous)
                if committing or failure is not mapped:
                    unsure.update(generations.current)
                raise failure from None
            except BaseException as error:
                replacement = self._restored(error, plan, previous)
                if committing or replacement is not error:
                    unsure.update(generations.current)
                if replacement is error:
                    raise
                raise replacement from error
        return generations.fresh

    def _restored(self, error: BaseException, plan: VectorPlan, previous: Sequence[StoredObject]) -> BaseException:
        """Put Weaviate back as it was before the change; the error to raise (``error``, noting a failed
        restore)."""
        try:
            self.weaviate.restore(plan, previous)
        except Exception as failure:
            return with_restore_failure(error, failure)
        return error

    # -- AdminOperations -------------------------------------------------------------------------

    def drop_tenants(self, tenant_ids: Sequence[str]) -> None:
        """Delete everything of these tenants (every generation taken so far) from both servers: Weaviate
        first, then Neo4j, where each pointer stays as a tombstone. A replace-load of such a tenant that
        took its generation before the drop ends as if it had run before the drop: its flip is refused
        and its clean-up deletes what it wrote; a load after the drop is kept."""
        self.copies.untrust(tenant_ids)  # first: a tombstone that fails to follow leaves no trusted copy
        self.weaviate.drop_tenants(tenant_ids)
        self.generations.drop_tenants(tenant_ids)

    def drop_profiles(self, profile_ids: Sequence[str]) -> None:
        """Delete the Weaviate collections of these profiles (all tenants). The copies clock stamps them
        before and after (:mod:`~brain_graph.stores.neo4j_weaviate.neo4j.vector_copies`), so no search trusts the
        copies of their vectors on the nodes of a generation made before, even one made meanwhile."""
        self.copies.drop(profile_ids)
        try:
            self.weaviate.drop_profiles(profile_ids)
        finally:
            self.copies.drop(profile_ids)

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


def nodeless_vector_tenants(nodes: Sequence[NodeRecord], vectors: Sequence[VectorRecord]) -> set[str]:
    """The tenants of vectors whose node is not among ``nodes``: Weaviate stores such a vector, but
    its copy has no node to live on (in a fresh generation the node cannot exist)."""
    loaded = {(node.tenant_id, node.node_id) for node in nodes}
    return {vector.tenant_id for vector in vectors if (vector.tenant_id, vector.node_id) not in loaded}


def from_environment(**overrides: Any) -> Neo4jWeaviateBackend:
    """The backend the environment describes (``overrides`` by field name, e.g. ``timeout_s``)."""
    return Neo4jWeaviateBackend.from_settings(read_settings(Neo4jWeaviateSettings, **overrides))


def _wait_quietly(future: Future[Any]) -> None:
    """Wait for ``future`` to end, ignoring how (the caller reports an error of its own)."""
    with contextlib.suppress(BaseException):
        future.result()
