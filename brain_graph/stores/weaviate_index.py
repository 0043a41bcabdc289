"""Vector index on Weaviate (weaviate-client v4): one collection per embedding profile, bring-your-own
vectors, native multi-tenancy.

Layout
    * Collection per profile: :func:`collection_name` (``BrainGraph_<slug>_<8 hex of sha256(profile id)>``,
      injective up to a hash collision, which :meth:`WeaviateVectorIndex.write` detects). Its description
      is JSON ``{"brainGraph": 1, "profileId", "embedderName", "dimension"}``: what the index was built
      with, checked against every query by :func:`~brain_graph.stores.base.check_query_matches`.
    * Tenant per (brain-graph tenant, generation): :func:`tenant_name`, a safe, deterministic,
      injective encoding into Weaviate's tenant alphabet ``[A-Za-z0-9_-]{1,64}``. Which generation
      searches see is decided in Neo4j (:mod:`brain_graph.stores.neo4j_weaviate`): a load writes a new
      Weaviate tenant; the older ones are removed after the switch (:meth:`WeaviateVectorIndex.remove_older`).
    * Object per (tenant, profile, node): properties ``tenantId``, ``nodeId``, ``projectKey``, ``secured``,
      ``acl`` (text[]; ``field`` tokenization so filters compare whole values) and the vector; its UUID
      is ``generate_uuid5`` of (tenant, profile, node), so loading twice upserts the same objects.
    * Embedder identity: a new embedder name or dimension for a profile is refused while a Weaviate
      tenant of a tenant this load does not replace holds vectors
      (:func:`~brain_graph.stores.base.profile_conflict`); else a new name is recorded in the
      description and a new dimension recreates the collection.

Search
    The vector index is FLAT with cosine distance by default: an exact scan, so candidates do not depend
    on graph construction order and results are deterministic (``vector_index="hnsw"`` trades that for
    speed on large tenants). Tenant, project and visibility are filtered in the same request.
    ``top_k * 2 + 10`` candidates are fetched with their vectors; those within :data:`TIE_MARGIN` of the
    ``top_k``-th (by Weaviate's own distance) are re-scored with :func:`~brain_graph.stores.base.cosine`
    over the returned float32 vector and :func:`~brain_graph.stores.base.similarity_from_cosine`
    (bit-identical to the embedded store), ordered by (score desc, node id) and cut to ``top_k``. When
    the last fetched candidate is itself that close to the boundary, an unfetched object could still
    tie, and the fetch is repeated with a four times larger limit (only with mass ties).

Round trips
    Weaviate has no multi-collection search, so a search sends one gRPC ``Search`` per queried profile
    (to the Weaviate tenant of the generation the caller read from Neo4j); they run concurrently on
    one connection, so the wall time is one round trip. Profile metadata is read with one REST call
    (``list_all``) and cached: refreshed after this process writes, when a query names an unknown
    profile (at most once a second) and every ``profile_cache_ttl_s`` (60 s). A load lists the tenants
    of each collection once to remove older generations (and once per profile whose embedder changes).

Failures
    All I/O runs on the async client inside a private event-loop thread, under ``asyncio.wait_for`` with
    the configured timeout; connection errors, timeouts and gRPC UNAVAILABLE become
    :class:`~brain_graph.errors.BackendUnavailableError` (``backend="weaviate"``). A client that failed is
    discarded and the next call builds a new one, so a restarted server is picked up at once; a client
    whose gRPC channel lost its connection is replaced before use, so a stopped server is reported in
    milliseconds instead of after the client's own UNAVAILABLE retries.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import re
import threading
import time
from collections.abc import Awaitable, Callable, Coroutine, Iterable, Mapping, Sequence
from concurrent.futures import TimeoutError as FutureTimeoutError
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

import grpc  # type: ignore[import-untyped]
import httpx
import weaviate
from weaviate.classes.config import Configure, DataType, Property, Tokenization, VectorDistances
from weaviate.classes.data import DataObject
from weaviate.classes.init import AdditionalConfig, Auth, Timeout
from weaviate.classes.query import Filter, MetadataQuery
from weaviate.exceptions import WeaviateBaseError, WeaviateQueryError
from weaviate.util import generate_uuid5

from brain_graph.errors import BackendUnavailableError, BrainGraphError, ConfigurationError
from brain_graph.security import AccessScope
from brain_graph.stores.base import (
    EmbeddingMismatchError,
    ProfileIndexInfo,
    VectorHit,
    VectorQuery,
    VectorRecord,
    check_query_matches,
    cosine,
    profile_conflict,
    similarity_from_cosine,
)

BACKEND = "weaviate"
COLLECTION_PREFIX = "BrainGraph_"
METADATA_VERSION = 1
INSERT_BATCH = 1000
QUERY_MAX_RESULTS = 10_000  # Weaviate's default QUERY_MAXIMUM_RESULTS
TIE_MARGIN = 1e-5  # > float32 distance error + score rounding
VectorIndexKind = Literal["flat", "hnsw"]

T = TypeVar("T")
_TENANT_SAFE = re.compile(r"[A-Za-z0-9-]")
_GENERATION_SUFFIX = re.compile(r"(.+)_g([1-9][0-9]*)")
_ENCODED_BYTES = re.compile(r"(?:_[0-9a-f]{2})+")
TENANT_BASE_MAX = 40
MAX_GENERATION = 10**19


def collection_name(profile_id: str) -> str:
    """The collection of a profile: readable slug plus a hash of the exact id (Weaviate class names
    allow only ``[A-Za-z0-9_]``, so the slug alone would not be injective)."""
    slug = re.sub(r"[^a-z0-9]+", "_", profile_id.lower()).strip("_")[:64] or "profile"
    digest = hashlib.sha256(profile_id.encode("utf-8")).hexdigest()[:8]
    return f"{COLLECTION_PREFIX}{slug}_{digest}"


def _direct_tenant_name(tenant_id: str) -> str:
    return "".join(
        char if _TENANT_SAFE.fullmatch(char) else "".join(f"_{byte:02x}" for byte in char.encode("utf-8"))
        for char in tenant_id
    )


def tenant_name(tenant_id: str, generation: int | None = None) -> str:
    """The Weaviate tenant of a tenant id (``generation`` None: the base name shared by all its generations).

    Base name: ASCII letters, digits and ``-`` are kept; every other character (``_`` included) becomes
    ``_`` plus two lowercase hex digits per UTF-8 byte, so the encoding is injective. A base over
    :data:`TENANT_BASE_MAX` characters becomes ``__`` + 38 hex digits of SHA-256 (``__`` never occurs in
    the direct encoding). A generation appends ``_g<decimal>``: the direct encoding has ``_`` only before
    two hex digits and the hash form has no ``g``, so the suffix is unambiguous and the name stays
    within Weaviate's 64 characters (40 + 2 + at most 19 digits)."""
    base = _direct_tenant_name(tenant_id)
    if not 0 < len(base) <= TENANT_BASE_MAX:
        base = "__" + hashlib.sha256(tenant_id.encode("utf-8")).hexdigest()[: TENANT_BASE_MAX - 2]
    if generation is None:
        return base
    if not 0 < generation < MAX_GENERATION:
        raise ValueError(f"generation {generation} is out of range")
    return f"{base}_g{generation}"


def split_tenant_name(name: str) -> tuple[str, int | None]:
    """``(base name, generation)`` of a Weaviate tenant name (generation None when it has no suffix)."""
    match = _GENERATION_SUFFIX.fullmatch(name)
    return (match[1], int(match[2])) if match else (name, None)


def tenant_id_of(base: str) -> str:
    """The tenant id a base name encodes (a hashed base is returned as it is: it cannot be decoded)."""
    if base.startswith("__"):
        return base
    try:
        return _ENCODED_BYTES.sub(lambda m: bytes.fromhex(m[0].replace("_", "")).decode("utf-8"), base)
    except UnicodeDecodeError:
        return base


def legacy_tenant_name(tenant_id: str) -> str:
    """The Weaviate tenant of data loaded before generations (direct encoding up to 64 characters,
    else ``__`` + 62 hex digits): removed by the first replace-load and by :meth:`drop_tenants`."""
    name = _direct_tenant_name(tenant_id)
    return name if 0 < len(name) <= 64 else "__" + hashlib.sha256(tenant_id.encode("utf-8")).hexdigest()[:62]


def object_uuid(tenant_id: str, profile_id: str, node_id: str) -> str:
    """Deterministic object id, so reloading upserts instead of duplicating."""
    return str(generate_uuid5(json.dumps([tenant_id, profile_id, node_id], ensure_ascii=False)))


def _data_object(record: VectorRecord) -> DataObject[Any, Any]:
    return DataObject(
        properties={
            "tenantId": record.tenant_id,
            "nodeId": record.node_id,
            "projectKey": record.project_key,
            "secured": record.secured,
            "acl": list(record.acl),
        },
        vector=[float(x) for x in record.vector],
        uuid=object_uuid(record.tenant_id, record.profile_id, record.node_id),
    )


def _description(info: ProfileIndexInfo) -> str:
    return json.dumps(
        {
            "brainGraph": METADATA_VERSION,
            "profileId": info.profile_id,
            "embedderName": info.embedder_name,
            "dimension": info.dimension,
        },
        sort_keys=True,
    )


def _parse_description(description: str | None) -> ProfileIndexInfo | None:
    try:
        meta = json.loads(description or "")
        return ProfileIndexInfo(str(meta["profileId"]), str(meta["embedderName"]), int(meta["dimension"]))
    except (ValueError, KeyError, TypeError):
        return None


def _filters(scope: AccessScope, project_key: str | None) -> Any:
    """Project and visibility filters (the tenant is the Weaviate tenant)."""
    parts = []
    if project_key is not None:
        parts.append(Filter.by_property("projectKey").equal(project_key))
    if not scope.all_secured:
        public = Filter.by_property("secured").equal(False)
        identities = list(scope.sorted_identities)
        parts.append(public | Filter.by_property("acl").contains_any(identities) if identities else public)
    if not parts:
        return None
    return parts[0] if len(parts) == 1 else Filter.all_of(parts)


def _is_connectivity(error: BaseException) -> bool:
    """Whether an error means the server cannot be reached (as opposed to a rejected request)."""
    if isinstance(error, BrainGraphError):
        return False
    if isinstance(error, httpx.TransportError | OSError | grpc.RpcError):
        return True
    if not isinstance(error, WeaviateBaseError):
        return False
    if type(error).__name__ in {
        "WeaviateConnectionError",
        "WeaviateStartUpError",
        "WeaviateGRPCUnavailableError",
        "WeaviateClosedClientError",
        "WeaviateTimeoutError",
        "WeaviateRetryError",
    }:
        return True
    text = str(error).lower()
    return any(
        mark in text for mark in ("unavailable", "connect", "deadline", "socket closed", "connection reset", "eof")
    )


def _is_tenant_missing(error: BaseException) -> bool:
    return isinstance(error, WeaviateQueryError) and "tenant not found" in str(error).lower()


def _is_collection_missing(error: BaseException) -> bool:
    text = str(error).lower()
    return isinstance(error, WeaviateQueryError) and ("could not find class" in text or "class not found" in text)


def _is_dimension_mismatch(error: BaseException) -> bool:
    text = str(error).lower()
    return isinstance(error, WeaviateQueryError) and ("vector lengths" in text or "dimension" in text)


def _channel_state(client: weaviate.WeaviateAsyncClient) -> Any:
    """The connectivity state of the client's gRPC channel, without I/O (None if not readable: the
    client's private attributes are read defensively)."""
    channel = getattr(getattr(client, "_connection", None), "_grpc_channel", None)
    get_state = getattr(channel, "get_state", None)
    return get_state(try_to_connect=False) if get_state is not None else None


class _LoopThread:
    """A private asyncio loop on a daemon thread: the async Weaviate client lives here, and callers on
    any thread submit coroutines to it."""

    def __init__(self, name: str) -> None:
        self._name = name
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def _start(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None or self._thread is None or not self._thread.is_alive():
                loop = asyncio.new_event_loop()
                thread = threading.Thread(target=loop.run_forever, name=self._name, daemon=True)
                thread.start()
                self._loop, self._thread = loop, thread
            return self._loop

    def run(self, coro: Coroutine[Any, Any, T], wait: float | None) -> T:
        """Run ``coro`` on the loop; ``wait`` bounds how long the caller blocks (seconds)."""
        future = asyncio.run_coroutine_threadsafe(coro, self._start())
        try:
            return future.result(wait)
        except FutureTimeoutError:
            future.cancel()
            raise

    def stop(self) -> None:
        with self._lock:
            loop, thread = self._loop, self._thread
            self._loop = self._thread = None
        if loop is not None and thread is not None:
            loop.call_soon_threadsafe(loop.stop)
            thread.join(timeout=5)
            if not thread.is_alive():
                loop.close()


@dataclass
class _ProfileCache:
    profiles: dict[str, ProfileIndexInfo]
    collections: set[str]
    loaded_at: float


class WeaviateVectorIndex:
    """:class:`~brain_graph.stores.base.VectorIndex` over Weaviate. Connects lazily on first use."""

    def __init__(
        self,
        *,
        host: str,
        http_port: int,
        grpc_port: int,
        api_key: str = "",
        timeout_s: float = 5.0,
        vector_index: VectorIndexKind = "flat",
        profile_cache_ttl_s: float = 60.0,
    ) -> None:
        self.host = host
        self.http_port = http_port
        self.grpc_port = grpc_port
        self.timeout_s = timeout_s
        self.vector_index_kind: VectorIndexKind = vector_index
        self.profile_cache_ttl_s = profile_cache_ttl_s
        self._api_key = api_key
        self._loop = _LoopThread(f"brain-graph-weaviate-{id(self):x}")
        self._client: weaviate.WeaviateAsyncClient | None = None
        self._client_lock: asyncio.Lock | None = None
        self._grpc_used = False
        self._cache: _ProfileCache | None = None
        self._counter_lock = threading.Lock()
        self.round_trips = 0

    # -- plumbing --------------------------------------------------------------------------------

    def _tick(self, requests: int = 1) -> None:
        with self._counter_lock:
            self.round_trips += requests

    def _new_client(self) -> weaviate.WeaviateAsyncClient:
        timeout = Timeout(init=self.timeout_s, query=self.timeout_s, insert=max(30.0, 6 * self.timeout_s))
        return weaviate.use_async_with_custom(
            http_host=self.host,
            http_port=self.http_port,
            http_secure=False,
            grpc_host=self.host,
            grpc_port=self.grpc_port,
            grpc_secure=False,
            additional_config=AdditionalConfig(timeout=timeout),
            auth_credentials=Auth.api_key(self._api_key) if self._api_key else None,
            skip_init_checks=True,
        )

    async def _get_client(self) -> tuple[weaviate.WeaviateAsyncClient, bool]:
        """The connected client and whether it was just created."""
        if self._client_lock is None:
            self._client_lock = asyncio.Lock()
        async with self._client_lock:
            if self._client is not None and self._channel_lost(self._client):
                await self._discard_client()
            if self._client is not None:
                return self._client, False
            try:
                client = self._new_client()
            except ValueError as error:  # pydantic validation of hosts/ports
                raise ConfigurationError(f"Weaviate connection settings: {error}".splitlines()[0]) from None
            try:
                self._tick()  # connect() reads /v1/meta
                await client.connect()
            except BaseException:
                with contextlib.suppress(Exception):
                    await client.close()
                raise
            self._client = client
            return client, True

    def _channel_lost(self, client: weaviate.WeaviateAsyncClient) -> bool:
        """Whether the gRPC channel of a client that has answered before lost its connection (it goes
        IDLE when the server closes it). Such a client is replaced before use: this fails fast when the
        server is down, where the client's own UNAVAILABLE retries would sleep for a minute, and costs
        one REST call after a restart or a long idle period. No I/O; private attributes read defensively."""
        if not self._grpc_used:
            return False
        return _channel_state(client) in (
            grpc.ChannelConnectivity.IDLE,
            grpc.ChannelConnectivity.TRANSIENT_FAILURE,
            grpc.ChannelConnectivity.SHUTDOWN,
        )

    def _note_success(self, client: weaviate.WeaviateAsyncClient) -> None:
        """Remember that the client's gRPC channel has been connected (REST-only calls do not count)."""
        if _channel_state(client) == grpc.ChannelConnectivity.READY:
            self._grpc_used = True

    async def _discard_client(self) -> None:
        self._grpc_used = False
        client, self._client = self._client, None
        if client is not None:
            with contextlib.suppress(Exception):
                await client.close()

    async def _with_client(self, op: Callable[[weaviate.WeaviateAsyncClient], Awaitable[T]]) -> T:
        client, fresh = await self._get_client()
        try:
            result = await op(client)
        except Exception as error:
            if not _is_connectivity(error):
                raise
            await self._discard_client()
            if fresh:
                raise
        else:
            self._note_success(client)
            return result
        client, _ = await self._get_client()  # a stale connection: one retry on a new client
        result = await op(client)
        self._note_success(client)
        return result

    def _call(self, op: Callable[[weaviate.WeaviateAsyncClient], Awaitable[T]], timeout: float | None) -> T:
        """Run ``op`` with a connected client within ``timeout`` seconds; map failures."""

        async def bounded() -> T:
            if timeout is None:
                return await self._with_client(op)
            try:
                return await asyncio.wait_for(self._with_client(op), timeout)
            except TimeoutError:
                await self._discard_client()
                raise

        started = time.monotonic()
        try:
            return self._loop.run(bounded(), None if timeout is None else timeout + 5)
        except (TimeoutError, FutureTimeoutError):
            raise BackendUnavailableError(
                BACKEND, f"no answer from {self.host}:{self.http_port} within {time.monotonic() - started:.1f}s"
            ) from None
        except BrainGraphError:
            raise
        except (WeaviateBaseError, httpx.HTTPError, grpc.RpcError, OSError) as error:
            detail = str(error).splitlines()[0] if str(error) else type(error).__name__
            raise BackendUnavailableError(
                BACKEND, f"{self.host}:{self.http_port}/{self.grpc_port}: {detail[:300]}"
            ) from None

    # -- profile metadata ------------------------------------------------------------------------

    async def _read_profiles(self, client: weaviate.WeaviateAsyncClient) -> _ProfileCache:
        self._tick()
        configs = await client.collections.list_all(simple=False)
        profiles: dict[str, ProfileIndexInfo] = {}
        collections: set[str] = set()
        for name, config in configs.items():
            if not name.startswith(COLLECTION_PREFIX):
                continue
            collections.add(name)
            info = _parse_description(getattr(config, "description", None))
            if info is not None and collection_name(info.profile_id) == name:
                profiles[info.profile_id] = info
        self._cache = _ProfileCache(profiles, collections, time.monotonic())
        return self._cache

    async def _profiles_for(self, client: weaviate.WeaviateAsyncClient, profile_ids: Iterable[str]) -> _ProfileCache:
        cache = self._cache
        now = time.monotonic()
        if cache is None or now - cache.loaded_at > self.profile_cache_ttl_s:
            return await self._read_profiles(client)
        unknown = [p for p in profile_ids if p not in cache.profiles]
        if unknown and now - cache.loaded_at > min(1.0, self.profile_cache_ttl_s):
            return await self._read_profiles(client)
        return cache

    # -- VectorIndex -----------------------------------------------------------------------------

    def query(
        self,
        queries: Sequence[VectorQuery],
        *,
        scope: AccessScope,
        project_key: str | None,
        top_k: int,
        generation: int | None,
    ) -> list[VectorHit]:
        """:meth:`brain_graph.stores.base.VectorIndex.query` over the Weaviate tenant of ``generation`` of
        the scope's tenant (one concurrent request per profile). ``generation`` None (the tenant has no
        data) only checks the queries against the profiles and returns no hits."""
        if not queries:
            return []

        async def op(client: weaviate.WeaviateAsyncClient) -> list[list[VectorHit]]:
            cache = await self._profiles_for(client, [q.profile_id for q in queries])
            for query in queries:
                check_query_matches(query, cache.profiles.get(query.profile_id))
            targets = [q for q in queries if collection_name(q.profile_id) in cache.collections]
            if top_k <= 0 or not targets or generation is None:
                return []
            filters = _filters(scope, project_key)
            tenant = tenant_name(scope.tenant_id, generation)
            return list(
                await asyncio.gather(
                    *(self._search(client, q, tenant, scope, project_key, filters, top_k) for q in targets)
                )
            )

        per_profile = self._call(op, self.timeout_s)
        return [hit for hits in per_profile for hit in hits]

    async def _search(
        self,
        client: weaviate.WeaviateAsyncClient,
        query: VectorQuery,
        tenant: str,
        scope: AccessScope,
        project_key: str | None,
        filters: Any,
        top_k: int,
    ) -> list[VectorHit]:
        collection = client.collections.use(collection_name(query.profile_id)).with_tenant(tenant)
        limit = min(top_k * 2 + 10, QUERY_MAX_RESULTS)
        while True:
            self._tick()
            try:
                response = await collection.query.near_vector(
                    near_vector=[float(x) for x in query.vector],
                    limit=limit,
                    filters=filters,
                    include_vector=True,
                    return_properties=["tenantId", "nodeId", "projectKey", "secured", "acl"],
                    return_metadata=MetadataQuery(distance=True),
                )
            except WeaviateQueryError as error:
                if _is_tenant_missing(error) or _is_collection_missing(error):
                    return []
                if _is_dimension_mismatch(error):
                    self._cache = None
                    raise EmbeddingMismatchError(
                        f"profile {query.profile_id}: query vector has dimension {len(query.vector)}, "
                        f"which the index rejects: {error}"
                    ) from None
                raise
            objects = response.objects
            hits, saturated = self._rescore(query, objects, scope, project_key, top_k)
            if not (saturated and len(objects) >= limit) or limit >= QUERY_MAX_RESULTS:
                return hits[:top_k]
            limit = min(limit * 4, QUERY_MAX_RESULTS)

    @staticmethod
    def _rescore(
        query: VectorQuery, objects: Sequence[Any], scope: AccessScope, project_key: str | None, top_k: int
    ) -> tuple[list[VectorHit], bool]:
        """Score the candidates exactly like the embedded store (tenant, project and ACL re-checked) and
        tell whether unfetched objects could still tie at the ``top_k`` boundary.

        Weaviate's certainty ``1 - distance / 2`` is the score before rounding, within float32 error
        (far below :data:`TIE_MARGIN`). Candidates more than the margin below the ``top_k``-th visible
        candidate cannot reach the top ``top_k`` and are not re-scored; objects not fetched rank after
        the last fetched one, so they matter only if it is within the margin of that boundary."""
        visible = [
            obj
            for obj in objects
            if scope.may_see(
                str(obj.properties.get("tenantId")),
                bool(obj.properties.get("secured")),
                obj.properties.get("acl") or (),
            )
            and (project_key is None or obj.properties.get("projectKey") == project_key)
        ]

        def certainty(obj: Any) -> float:
            distance = obj.metadata.distance
            return 1.0 - float(distance) / 2.0 if distance is not None else 1.0

        bound = certainty(visible[top_k - 1]) - TIE_MARGIN if len(visible) >= top_k else float("-inf")
        hits = []
        for obj in visible:
            if certainty(obj) < bound:
                break
            vector = obj.vector
            stored = next(iter(vector.values())) if isinstance(vector, dict) else vector
            if len(stored) != len(query.vector):
                raise EmbeddingMismatchError(
                    f"profile {query.profile_id}: query vector has dimension {len(query.vector)}, "
                    f"the index holds dimension {len(stored)}"
                )
            score = similarity_from_cosine(cosine(query.vector, stored))
            hits.append(VectorHit(str(obj.properties["nodeId"]), query.profile_id, score))
        hits.sort(key=lambda hit: (-hit.score, hit.node_id))
        saturated = bool(objects) and certainty(objects[-1]) >= bound
        return hits, saturated

    # -- writes ----------------------------------------------------------------------------------

    def _properties(self) -> list[Property]:
        field = Tokenization.FIELD
        return [
            Property(name="tenantId", data_type=DataType.TEXT, tokenization=field, index_searchable=False),
            Property(name="nodeId", data_type=DataType.TEXT, tokenization=field, index_searchable=False),
            Property(name="projectKey", data_type=DataType.TEXT, tokenization=field, index_searchable=False),
            Property(name="secured", data_type=DataType.BOOL),
            Property(name="acl", data_type=DataType.TEXT_ARRAY, tokenization=field, index_searchable=False),
        ]

    def _vector_config(self) -> Any:
        if self.vector_index_kind == "hnsw":
            index: Any = Configure.VectorIndex.hnsw(distance_metric=VectorDistances.COSINE)
        else:
            index = Configure.VectorIndex.flat(distance_metric=VectorDistances.COSINE)
        return Configure.Vectors.self_provided(vector_index_config=index)

    async def _create_collection(
        self, client: weaviate.WeaviateAsyncClient, info: ProfileIndexInfo, cache: _ProfileCache
    ) -> None:
        name = collection_name(info.profile_id)
        self._tick()
        await client.collections.create(
            name,
            description=_description(info),
            properties=self._properties(),
            vector_config=self._vector_config(),
            multi_tenancy_config=Configure.multi_tenancy(
                enabled=True, auto_tenant_creation=True, auto_tenant_activation=True
            ),
        )
        cache.collections.add(name)

    async def _tenant_names(self, client: weaviate.WeaviateAsyncClient, collection: str) -> list[str]:
        """Every Weaviate tenant of a collection (one REST call)."""
        self._tick()
        return sorted(await client.collections.use(collection).tenants.get())

    async def _check_holders(
        self,
        client: weaviate.WeaviateAsyncClient,
        recorded: ProfileIndexInfo,
        loading: ProfileIndexInfo,
        replace_tenants: Sequence[str],
    ) -> None:
        """Refuse a new embedder identity while a tenant not replaced by this load holds vectors of the
        recorded one (any generation counts: staged and not yet removed ones too)."""
        replaced = {tenant_name(t) for t in replace_tenants} | {legacy_tenant_name(t) for t in replace_tenants}
        names = await self._tenant_names(client, collection_name(recorded.profile_id))
        holders = sorted({tenant_id_of(base) for base, _ in map(split_tenant_name, names) if base not in replaced})
        if holders:
            raise profile_conflict(recorded, loading, holders)

    async def _ensure_collections(
        self,
        client: weaviate.WeaviateAsyncClient,
        profiles: Sequence[ProfileIndexInfo],
        cache: _ProfileCache,
        replace_tenants: Sequence[str],
        *,
        dry_run: bool = False,
    ) -> None:
        """Create missing collections and apply the embedder-identity rule
        (:func:`~brain_graph.stores.base.profile_conflict`): a new embedder name or dimension is refused
        while a tenant not in ``replace_tenants`` holds vectors; else a new name is recorded and a new
        dimension recreates the collection. ``dry_run`` only checks."""
        for info in profiles:
            name = collection_name(info.profile_id)
            existing = cache.profiles.get(info.profile_id)
            if name not in cache.collections:
                if not dry_run:
                    await self._create_collection(client, info, cache)
            elif existing is None:
                raise ConfigurationError(
                    f"Weaviate collection {name} exists but does not record profile {info.profile_id}; "
                    "delete it or choose another profile id"
                )
            elif existing != info:
                await self._check_holders(client, existing, info, replace_tenants)
                if dry_run:
                    continue
                self._tick()
                if existing.dimension != info.dimension:
                    await client.collections.delete(name)
                    cache.collections.discard(name)
                    await self._create_collection(client, info, cache)
                else:
                    await client.collections.use(name).config.update(description=_description(info))
            if not dry_run:
                cache.profiles[info.profile_id] = info

    async def _remove_tenants(
        self, client: weaviate.WeaviateAsyncClient, pick: Callable[[str], bool], collections: Iterable[str]
    ) -> None:
        """Remove the Weaviate tenants ``pick`` selects from each collection (listed, then removed)."""
        for collection in sorted(collections):
            chosen = [name for name in await self._tenant_names(client, collection) if pick(name)]
            if chosen:
                self._tick()
                await client.collections.use(collection).tenants.remove(chosen)

    async def _insert_batch(self, collection: Any, profile_id: str, batch: list[DataObject[Any, Any]]) -> None:
        """Upsert one batch of objects into one Weaviate tenant."""
        self._tick()
        result = await collection.data.insert_many(batch)
        if result.has_errors:
            first = next(iter(result.errors.values()))
            raise BackendUnavailableError(
                BACKEND, f"{len(result.errors)} object(s) rejected in {profile_id}: {first.message}"
            )

    async def _insert(
        self, client: weaviate.WeaviateAsyncClient, vectors: Sequence[VectorRecord], generations: Mapping[str, int]
    ) -> None:
        groups: dict[tuple[str, str], list[VectorRecord]] = {}
        for record in vectors:
            groups.setdefault((record.profile_id, record.tenant_id), []).append(record)
        for (profile_id, tenant_id), records in sorted(groups.items()):
            tenant = tenant_name(tenant_id, generations[tenant_id])
            collection = client.collections.use(collection_name(profile_id)).with_tenant(tenant)
            for start in range(0, len(records), INSERT_BATCH):
                batch = [_data_object(r) for r in records[start : start + INSERT_BATCH]]
                await self._insert_batch(collection, profile_id, batch)

    def write(
        self,
        vectors: Sequence[VectorRecord],
        profiles: Sequence[ProfileIndexInfo],
        *,
        generations: Mapping[str, int],
        replace_tenants: Sequence[str] = (),
    ) -> None:
        """Create missing collections (applying the embedder-identity rule, with ``replace_tenants`` the
        tenants this load replaces), then upsert ``vectors`` in batches of :data:`INSERT_BATCH` into the
        Weaviate tenant of each tenant's generation in ``generations``. Rerunning is safe."""
        known = {p.profile_id for p in profiles}
        extra = sorted({v.profile_id for v in vectors} - known)
        if extra:
            raise ConfigurationError(f"vectors of profile(s) {extra} come without profile metadata")

        async def op(client: weaviate.WeaviateAsyncClient) -> None:
            cache = await self._read_profiles(client)
            await self._ensure_collections(client, profiles, cache, replace_tenants)
            await self._insert(client, vectors, generations)

        try:
            self._call(op, None)
        finally:
            self._cache = None

    def check_write(self, profiles: Sequence[ProfileIndexInfo], *, replace_tenants: Sequence[str] = ()) -> None:
        """Raise the :class:`ConfigurationError` :meth:`write` would raise for these profiles, writing
        nothing (run before the graph is written, so a rejected load changes neither store)."""

        async def op(client: weaviate.WeaviateAsyncClient) -> None:
            cache = await self._read_profiles(client)
            await self._ensure_collections(client, profiles, cache, replace_tenants, dry_run=True)

        self._call(op, None)

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

        async def op(client: weaviate.WeaviateAsyncClient) -> None:
            await self._remove_tenants(client, pick, (await self._read_profiles(client)).collections)

        if below:
            self._call(op, None)

    def drop_tenants(self, tenant_ids: Sequence[str]) -> None:
        """Remove every generation of the tenants (all their vectors) from every brain-graph collection."""
        bases = {tenant_name(t) for t in tenant_ids}
        legacy = {legacy_tenant_name(t) for t in tenant_ids}

        def pick(name: str) -> bool:
            base, generation = split_tenant_name(name)
            return base in bases if generation is not None else name in legacy

        async def op(client: weaviate.WeaviateAsyncClient) -> None:
            await self._remove_tenants(client, pick, (await self._read_profiles(client)).collections)

        try:
            self._call(op, None)
        finally:
            self._cache = None

    def drop_profiles(self, profile_ids: Sequence[str]) -> None:
        """Delete the collections of these profiles (all tenants)."""

        async def op(client: weaviate.WeaviateAsyncClient) -> None:
            self._tick()
            await client.collections.delete([collection_name(p) for p in profile_ids])

        try:
            self._call(op, None)
        finally:
            self._cache = None

    def count(self, profile_id: str, tenant_id: str, generation: int | None) -> int:
        """Objects of a profile in a tenant's generation (0 when it does not exist)."""
        if generation is None:
            return 0

        async def op(client: weaviate.WeaviateAsyncClient) -> int:
            tenant = tenant_name(tenant_id, generation)
            collection = client.collections.use(collection_name(profile_id)).with_tenant(tenant)
            self._tick()
            try:
                result = await collection.aggregate.over_all(total_count=True)
            except WeaviateQueryError as error:
                if _is_tenant_missing(error) or _is_collection_missing(error):
                    return 0
                raise
            return int(result.total_count or 0)

        return self._call(op, self.timeout_s)

    def stored_generations(self, tenant_id: str) -> list[int]:
        """The generations of a tenant that hold vectors in any brain-graph collection (0: pre-generation)."""
        base, legacy = tenant_name(tenant_id), legacy_tenant_name(tenant_id)

        async def op(client: weaviate.WeaviateAsyncClient) -> set[int]:
            found: set[int] = set()
            for collection in sorted((await self._read_profiles(client)).collections):
                for name in await self._tenant_names(client, collection):
                    name_base, generation = split_tenant_name(name)
                    if generation is not None and name_base == base:
                        found.add(generation)
                    elif generation is None and name == legacy:
                        found.add(0)
            return found

        return sorted(self._call(op, None))

    def close(self) -> None:
        """Close the client and stop the loop thread (a later call starts them again)."""
        with contextlib.suppress(Exception):
            self._loop.run(self._discard_client(), 10)
        self._client_lock = None
        self._loop.stop()
