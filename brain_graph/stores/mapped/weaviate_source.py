"""A mapped profile's vectors in a Weaviate collection the team already has: a read-only
:class:`~brain_graph.stores.mapped.sources.VectorSource` (mapping: :class:`WeaviateVectors`).

It never creates or changes anything: no collection, tenant, property or object. It reads:

* the collection's config, once, on first use (one REST call, cached): whether the collection exists,
  its multi-tenancy, which vector to search, the data types of the id and tenant properties. A mapping
  that does not fit the collection is a :class:`~brain_graph.core.errors.ConfigurationError` line
  naming the mapping key (``vectors.<profile>.collection``, ``.vector``, ``.tenant_name``,
  ``.id_property``, ``.tenant_property``). A query that later fails because the collection changed
  forgets the cached config and raises the same kind of line; the next call reads it again.
* one gRPC query per :meth:`WeaviateSource.nearest` (nearVector, the stored vectors returned in the same
  reply) and per :meth:`WeaviateSource.vectors_of` (a ``contains_any`` filter on the id property; one
  query per :data:`QUERY_MAX_RESULTS` ids, sent together).

Tenancy: Weaviate's native multi-tenancy (the Weaviate tenant ``tenant_name`` with ``{tenant}``
replaced; a tenant that does not exist holds nothing), a property holding the tenant (a filter, and
every returned object's value re-checked in Python: a ``word``-tokenized property matches more than
the exact value), or neither when the mapping has one fixed tenant (the whole collection is that
tenant's; any other tenant id gets nothing, without a request).

The id and tenant properties are best ``field``-tokenized: a ``text`` filter matches by the property's
tokens, so with ``word`` tokenization (Weaviate's default) values sharing the words also come back
(dropped by the exact re-check, but they take places in the limit) and a value made only of stopwords
(``a``, ``the``) matches nothing; the config read logs a warning for such a property.

Node ids: the id property's value as text: a ``text`` value as it is, a ``uuid`` in its canonical form
(lowercase, hyphenated), an ``int`` in decimal. Objects without it, or without the vector, are
skipped. A node with several objects (chunks) has one vector here: :meth:`~WeaviateSource.nearest`
keeps its nearest object, :meth:`~WeaviateSource.vectors_of` the one with the smallest object UUID.

Vectors are returned as Weaviate stores them (float32, as Python floats: exact). Weaviate's distances
are not returned: the mapped backend scores the vectors itself. The order of
:meth:`~WeaviateSource.nearest` is Weaviate's (approximate with an HNSW index, by the collection's own
distance metric).

Connections: :class:`~brain_graph.stores.neo4j_weaviate.weaviate.client.WeaviateConnection` (the
official async client on a private loop thread, connected lazily, every call bounded by the timeout):
a server that cannot be reached is a :class:`~brain_graph.core.errors.BackendUnavailableError` naming
``weaviate`` within the timeout.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

import weaviate
from weaviate.classes.config import DataType, Tokenization
from weaviate.classes.query import Filter
from weaviate.classes.tenants import TenantActivityStatus
from weaviate.exceptions import UnexpectedStatusCodeError, WeaviateQueryError

from brain_graph.core.errors import BackendUnavailableError, ConfigurationError
from brain_graph.stores.identity import EmbeddingMismatchError
from brain_graph.stores.mapped.mapping import Mapping, WeaviateVectors
from brain_graph.stores.neo4j_weaviate.weaviate.client import WeaviateConnection
from brain_graph.stores.neo4j_weaviate.weaviate.errors import BACKEND

T = TypeVar("T")
logger = logging.getLogger(__name__)
Client = weaviate.WeaviateAsyncClient
Kind = Literal["text", "uuid", "int"]

QUERY_MAX_RESULTS = 10_000  # Weaviate's default QUERY_MAXIMUM_RESULTS: the most objects one query returns
DIMENSION_PROBE = 8  # objects read to find one with a vector (an object may lack it)
TENANT_PROBES = 16  # Weaviate tenants probed at once by dimension()
DIMENSION_TTL_S = 60.0  # how long dimension() answers from its cache
UNNAMED = "default"  # the key of a collection's unnamed vector in a returned object
_KINDS: dict[Any, Kind] = {DataType.TEXT: "text", DataType.UUID: "uuid", DataType.INT: "int"}


@dataclass(frozen=True)
class Layout:
    """What a query needs from the collection's config: the vector searched (``target`` None: the
    collection's unnamed vector, returned under ``vector_key``), the kinds of the id and tenant
    properties, and whether the collection has native multi-tenancy."""

    target: str | None
    vector_key: str
    id_kind: Kind
    tenant_kind: Kind | None
    multi_tenant: bool

    @property
    def include_vector(self) -> bool | list[str]:
        return True if self.target is None else [self.target]


def filter_value(kind: Kind, node_id: str) -> str | int | None:
    """The value a property of ``kind`` holds for the text ``node_id`` (None: it cannot hold it)."""
    if not node_id:
        return None
    if kind == "int":
        try:
            number = int(node_id)
        except ValueError:
            return None
        return number if str(number) == node_id else None
    if kind == "uuid":
        try:
            canonical = str(uuid.UUID(node_id))
        except ValueError:
            return None
        return canonical if canonical == node_id else None
    return node_id


def as_text(kind: Kind, value: Any) -> str | None:
    """A returned property value of ``kind`` as text (None: missing or not of the kind)."""
    if kind == "text":
        return value if isinstance(value, str) and value else None
    if kind == "uuid":
        if isinstance(value, uuid.UUID):
            return str(value)
        held = filter_value("uuid", value) if isinstance(value, str) else None
        return held if isinstance(held, str) else None
    return str(value) if isinstance(value, int) and not isinstance(value, bool) else None


def first_line(error: BaseException, limit: int = 300) -> str:
    text = str(error).strip()
    return (text.splitlines()[0] if text else type(error).__name__)[:limit]


class WeaviateSource:
    """The vectors of one mapped profile in a Weaviate collection (read only); see the module docstring.

    ``fixed_tenant`` is the mapping's fixed tenant (``tenant = { fixed = ... }``), ``origin`` how errors
    name the mapping (``mapping <name>``). With ``connection`` the source uses that connection (shared
    by several sources) and :meth:`close` leaves it open; otherwise it opens its own from the settings.
    """

    def __init__(
        self,
        config: WeaviateVectors,
        *,
        host: str = "127.0.0.1",
        http_port: int = 8080,
        grpc_port: int = 50051,
        api_key: str = "",
        secure: bool = False,
        timeout_s: float = 5.0,
        fixed_tenant: str | None = None,
        origin: str = "mapping",
        connection: WeaviateConnection | None = None,
    ) -> None:
        self.config = config
        self.profile_id = config.profile
        self.fixed_tenant = fixed_tenant
        self.origin = origin
        if config.tenant_name is None and config.tenant_property is None and fixed_tenant is None:
            raise self._misfit(
                "",
                "the mapping's tenant is a node property, so the collection must keep tenants apart: "
                "give tenant_name (Weaviate multi-tenancy) or tenant_property",
            )
        self._owned = connection is None
        self.connection = connection or WeaviateConnection(
            host=host, http_port=http_port, grpc_port=grpc_port, api_key=api_key, timeout_s=timeout_s, secure=secure
        )
        self._layout: Layout | None = None
        self._dimension: tuple[Layout, float, int | None] | None = None  # (read with, read at, value)

    @classmethod
    def from_mapping(cls, mapping: Mapping, config: WeaviateVectors, **settings: Any) -> WeaviateSource:
        """The source of ``config`` (one of ``mapping.vectors``), with the mapping's fixed tenant and name;
        ``settings`` are the connection keywords of the constructor."""
        return cls(config, fixed_tenant=mapping.tenant.fixed, origin=f"mapping {mapping.name}", **settings)

    # -- the VectorSource protocol ---------------------------------------------------------------------

    def nearest(self, vector: Sequence[float], *, tenant_id: str, limit: int) -> list[tuple[str, list[float]]]:
        """Up to ``limit`` (at most :data:`QUERY_MAX_RESULTS`) ``(node id, stored vector)`` pairs of the
        tenant nearest to ``vector`` by the collection's index, in Weaviate's order, one per node id."""
        if limit <= 0 or not self._may_hold(tenant_id):
            return []
        query = [float(value) for value in vector]
        if not query:
            raise EmbeddingMismatchError(f"profile {self.profile_id}: the query vector is empty")

        async def search(client: Client, layout: Layout) -> list[Any]:
            collection, where = self._scoped(client, layout, tenant_id)
            if collection is None:
                return []
            return await self._query(
                layout,
                tenant_id,
                lambda: collection.query.near_vector(
                    query,
                    limit=min(limit, QUERY_MAX_RESULTS),
                    filters=where,
                    target_vector=layout.target,
                    include_vector=layout.include_vector,
                    return_properties=self._returned(),
                ),
                dimension=len(query),
            )

        layout, objects = self._call(search)
        found: list[tuple[str, list[float]]] = []
        seen: set[str] = set()
        for obj in objects:
            node_id, stored = self._read(layout, obj, tenant_id)
            if node_id is None or stored is None or node_id in seen:
                continue
            seen.add(node_id)
            found.append((node_id, stored))
        return found

    def vectors_of(self, node_ids: Sequence[str], *, tenant_id: str) -> dict[str, list[float]]:
        """The stored vectors of the tenant's nodes among ``node_ids`` (one query per
        :data:`QUERY_MAX_RESULTS` ids, sent together)."""
        wanted = sorted({node_id for node_id in node_ids if node_id})
        if not wanted or not self._may_hold(tenant_id):
            return {}

        async def fetch(client: Client, layout: Layout) -> list[Any]:
            collection, where = self._scoped(client, layout, tenant_id)
            values = [v for v in (filter_value(layout.id_kind, node_id) for node_id in wanted) if v is not None]
            if collection is None or not values:
                return []
            chunks = [values[start : start + QUERY_MAX_RESULTS] for start in range(0, len(values), QUERY_MAX_RESULTS)]

            async def one(chunk: list[Any]) -> list[Any]:
                named = Filter.by_property(self.config.id_property).contains_any(chunk)
                return await self._query(
                    layout,
                    tenant_id,
                    lambda: collection.query.fetch_objects(
                        limit=QUERY_MAX_RESULTS,
                        filters=named if where is None else named & where,
                        include_vector=layout.include_vector,
                        return_properties=self._returned(),
                    ),
                )

            replies = await asyncio.gather(*(one(chunk) for chunk in chunks))
            return [obj for reply in replies for obj in reply]

        layout, objects = self._call(fetch)
        asked = set(wanted)
        chosen: dict[str, tuple[uuid.UUID, list[float]]] = {}
        for obj in objects:
            node_id, stored = self._read(layout, obj, tenant_id)
            if node_id is None or stored is None or node_id not in asked:
                continue
            held = chosen.get(node_id)
            if held is None or obj.uuid < held[0]:
                chosen[node_id] = (obj.uuid, stored)
        return {node_id: chosen[node_id][1] for node_id in sorted(chosen)}

    def dimension(self) -> int | None:
        """The dimension of the stored vectors: of the first object found with one (in a multi-tenant
        collection, in the active Weaviate tenants of the mapping's pattern, by tenant id, up to
        :data:`TENANT_PROBES` tenants a request); None when there is none. Cached for
        :data:`DIMENSION_TTL_S` seconds (and until a query finds the collection changed): no request then."""
        cached = self._dimension
        if cached is not None and cached[0] is self._layout and time.monotonic() - cached[1] < DIMENSION_TTL_S:
            return cached[2]
        layout, found = self._read_dimension()
        self._dimension = (layout, time.monotonic(), found)
        return found

    def _read_dimension(self) -> tuple[Layout, int | None]:
        """The layout the dimension was read with, and the dimension (see :meth:`dimension`)."""

        async def tenants(client: Client, layout: Layout) -> list[str | None]:
            if self.fixed_tenant is not None or not layout.multi_tenant:
                return [self.fixed_tenant]
            self.connection.tick()
            found = await client.collections.use(self.config.collection).tenants.get()
            active = [name for name, tenant in found.items() if tenant.activity_status == TenantActivityStatus.ACTIVE]
            return list(tenants_of(active, self.config.tenant_name or "{tenant}"))

        layout, candidates = self._call(tenants)
        for start in range(0, len(candidates), TENANT_PROBES):
            group = candidates[start : start + TENANT_PROBES]

            async def probe(client: Client, layout: Layout, group: list[str | None] = group) -> list[list[Any]]:
                async def one(tenant_id: str | None) -> list[Any]:
                    collection, where = self._scoped(client, layout, tenant_id)
                    if collection is None:
                        return []
                    return await self._query(
                        layout,
                        tenant_id,
                        lambda: collection.query.fetch_objects(
                            limit=DIMENSION_PROBE, filters=where, include_vector=layout.include_vector
                        ),
                    )

                return list(await asyncio.gather(*(one(tenant_id) for tenant_id in group)))

            layout, replies = self._call(probe)
            for objects in replies:
                for obj in objects:
                    stored = self._vector(layout, obj)
                    if stored is not None:
                        return layout, len(stored)
        return layout, None

    def close(self) -> None:
        """Release the connection (a shared one is left open); a later call opens it again."""
        if self._owned:
            self.connection.close()

    # -- beyond the protocol ---------------------------------------------------------------------------

    def check(self) -> None:
        """Read the collection's config (one REST call) and check the mapping fits it: a
        :class:`ConfigurationError` line naming the key when it does not."""
        self._layout = None

        async def nothing(client: Client, layout: Layout) -> None:
            return None

        self._call(nothing)

    def ping(self) -> None:
        """One request to the server (``/v1/meta``), bounded by the timeout: returns when it answers, else
        :class:`BackendUnavailableError` naming ``weaviate``."""
        self.connection.ping()

    # -- internals -------------------------------------------------------------------------------------

    def _misfit(self, key: str, problem: str) -> ConfigurationError:
        where = f"vectors.{self.profile_id}" + (f".{key}" if key else "")
        return ConfigurationError(f"{self.origin}: {where}: {problem}")

    def _missing_collection(self) -> ConfigurationError:
        at = f"{self.connection.host}:{self.connection.http_port}"
        return self._misfit("collection", f"Weaviate collection {self.config.collection!r} does not exist at {at}")

    def _tenant_name(self, tenant_id: str) -> str:
        return (self.config.tenant_name or "{tenant}").replace("{tenant}", tenant_id)

    def _may_hold(self, tenant_id: str) -> bool:
        """Whether the collection may hold objects of ``tenant_id`` (not with a fixed tenant of another id)."""
        return bool(tenant_id) and (self.fixed_tenant is None or tenant_id == self.fixed_tenant)

    def _returned(self) -> list[str]:
        names = [self.config.id_property]
        if self.config.tenant_property is not None:
            names.append(self.config.tenant_property)
        return names

    def _call(self, op: Callable[[Client, Layout], Awaitable[T]]) -> tuple[Layout, T]:
        """``op`` with a connected client and the collection's layout (read first when not cached),
        bounded by the timeout."""

        async def run(client: Client) -> tuple[Layout, T]:
            layout = self._layout
            if layout is None:
                layout = self._layout = await self._read_layout(client)
            return layout, await op(client, layout)

        return self.connection.call(run, self.connection.timeout_s)

    def _scoped(self, client: Client, layout: Layout, tenant_id: str | None) -> tuple[Any, Any]:
        """The collection handle of ``tenant_id`` and the filter to apply (None: none); a None handle
        when the tenant cannot be held (a tenant-property value the property's type cannot hold).
        ``tenant_id`` None: the whole collection (not with multi-tenancy)."""
        collection = client.collections.use(self.config.collection)
        if tenant_id is None:
            return collection, None
        if layout.multi_tenant:
            return collection.with_tenant(self._tenant_name(tenant_id)), None
        if self.config.tenant_property is not None:
            value = filter_value(layout.tenant_kind or "text", tenant_id)
            if value is None:
                return None, None
            return collection, Filter.by_property(self.config.tenant_property).equal(value)
        return collection, None

    def _read(self, layout: Layout, obj: Any, tenant_id: str) -> tuple[str | None, list[float] | None]:
        """An object's node id and stored vector (None: missing, or the object is not ``tenant_id``'s)."""
        properties = obj.properties or {}
        prop = self.config.tenant_property
        if (
            not layout.multi_tenant
            and prop is not None
            and as_text(layout.tenant_kind or "text", properties.get(prop)) != tenant_id
        ):
            return None, None
        return as_text(layout.id_kind, properties.get(self.config.id_property)), self._vector(layout, obj)

    @staticmethod
    def _vector(layout: Layout, obj: Any) -> list[float] | None:
        """An object's stored vector (a fresh list of floats the client decoded; None: it has none)."""
        stored: list[float] | None = (obj.vector or {}).get(layout.vector_key)
        if not stored or not isinstance(stored[0], float):
            return None  # none, or a multi-vector (refused by the config check, unless changed since)
        return stored

    async def _query(
        self, layout: Layout, tenant_id: str | None, send: Callable[[], Awaitable[Any]], *, dimension: int | None = None
    ) -> list[Any]:
        """The objects of one query (none when its Weaviate tenant does not exist); a refused query is
        classified (:meth:`_refused`)."""
        self.connection.tick()
        try:
            reply = await send()
        except WeaviateQueryError as error:
            self._refused(error, layout, tenant_id, dimension)
            return []
        return list(reply.objects)

    def _refused(self, error: WeaviateQueryError, layout: Layout, tenant_id: str | None, dimension: int | None) -> None:
        """Return when the query's Weaviate tenant does not exist (no objects); otherwise raise: the
        mapping no longer fits the collection (the cached config is forgotten), a refused dimension, an
        inactive tenant; anything else as it is (the connection reports it as unavailable)."""
        text = str(error).lower()
        if "tenant not found" in text:
            return
        collection = self.config.collection
        if "tenant not active" in text:
            raise BackendUnavailableError(
                BACKEND,
                f"the Weaviate tenant {self._tenant_name(tenant_id or '')!r} of collection {collection!r} is not "
                "active (cold or offloaded): activate it to search it",
            )
        if dimension is not None and ("vector lengths" in text or "dimension" in text):
            raise EmbeddingMismatchError(
                f"profile {self.profile_id}: query vector has dimension {dimension}, which Weaviate collection "
                f"{collection!r} rejects: {first_line(error)}"
            )
        self._layout = None
        if "could not find class" in text or "class not found" in text:
            raise self._missing_collection()
        if "named vector" in text or "target vector" in text:
            raise self._misfit("vector", f"Weaviate collection {collection!r} refused the vector: {first_line(error)}")
        if "multi-tenancy" in text:
            raise self._misfit("tenant_name", f"Weaviate collection {collection!r}: {first_line(error)}")
        if "no such prop" in text:
            key = "id_property"
            if self.config.tenant_property is not None and f"'{self.config.tenant_property.lower()}'" in text:
                key = "tenant_property"
            raise self._misfit(key, f"Weaviate collection {collection!r}: {first_line(error)}")
        raise error

    async def _read_layout(self, client: Client) -> Layout:
        """The collection's layout from its config (one REST call), checked against the mapping."""
        self.connection.tick()
        try:
            config = await client.collections.use(self.config.collection).config.get()
        except UnexpectedStatusCodeError as error:
            if error.status_code == 404:
                raise self._missing_collection() from None
            raise
        collection = self.config.collection
        multi_tenant = bool(config.multi_tenancy_config.enabled)
        if multi_tenant and self.config.tenant_name is None:
            raise self._misfit(
                "tenant_name",
                f"Weaviate collection {collection!r} has multi-tenancy: give the Weaviate tenant of a tenant "
                "(e.g. tenant_name = '{tenant}')",
            )
        if not multi_tenant and self.config.tenant_name is not None:
            raise self._misfit(
                "tenant_name",
                f"Weaviate collection {collection!r} has no multi-tenancy: remove tenant_name "
                "(tenant_property names a property holding the tenant)",
            )
        target, index = self._target(config)
        if getattr(index, "multi_vector", None) is not None:
            raise self._misfit(
                "vector", f"Weaviate collection {collection!r}: {target or UNNAMED!r} is a multi-vector (not supported)"
            )
        properties = {prop.name: prop for prop in config.properties or ()}
        id_kind = self._kind(properties, "id_property", self.config.id_property)
        tenant_kind = None
        if self.config.tenant_property is not None:
            tenant_kind = self._kind(properties, "tenant_property", self.config.tenant_property)
        return Layout(target, target or UNNAMED, id_kind, tenant_kind, multi_tenant)

    def _target(self, config: Any) -> tuple[str | None, Any]:
        """The named vector to search (None: the unnamed one) and its index config."""
        collection = self.config.collection
        named: dict[str, Any] = dict(config.vector_config or {})
        unnamed = config.vector_index_config
        names = ", ".join(sorted(named)) or "none"
        wanted = self.config.vector
        if wanted is not None:
            if wanted not in named:
                raise self._misfit(
                    "vector",
                    f"Weaviate collection {collection!r} has no named vector {wanted!r} (named vectors: {names})",
                )
            return wanted, named[wanted].vector_index_config
        if unnamed is not None:
            return None, unnamed
        if len(named) == 1:
            (name, vector), *_ = named.items()
            return name, vector.vector_index_config
        if not named:
            raise self._misfit("collection", f"Weaviate collection {collection!r} has no vectors")
        raise self._misfit(
            "vector", f"Weaviate collection {collection!r} has several named vectors ({names}): name the one to search"
        )

    def _kind(self, properties: dict[str, Any], key: str, name: str) -> Kind:
        """The kind of the property ``name`` the mapping key ``key`` names (a text property that is not
        ``field``-tokenized is logged: its filters match words, not values)."""
        collection = self.config.collection
        prop = properties.get(name)
        if prop is None:
            raise self._misfit(key, f"Weaviate collection {collection!r} has no property {name!r}")
        kind = _KINDS.get(prop.data_type)
        if kind is None:
            raise self._misfit(key, f"property {name!r} of Weaviate collection {collection!r} is not text, uuid or int")
        tokenization = getattr(prop, "tokenization", None)
        if kind == "text" and tokenization is not None and tokenization != Tokenization.FIELD:
            logger.warning(
                "%s: vectors.%s.%s: property %r of Weaviate collection %r has %s tokenization: its filters match "
                "words, not whole values (other values sharing the words come back and are dropped, a value made "
                "only of stopwords matches nothing); field tokenization matches exactly",
                self.origin,
                self.profile_id,
                key,
                name,
                collection,
                getattr(tokenization, "value", tokenization),
            )
        return kind


def tenants_of(names: Iterable[str], tenant_name: str) -> list[str]:
    """The brain-graph tenants whose Weaviate tenant under the pattern ``tenant_name`` is among
    ``names``, sorted (names of no tenant left out)."""
    prefix, _, suffix = tenant_name.partition("{tenant}")
    found = set()
    for name in names:
        if len(name) > len(prefix) + len(suffix) and name.startswith(prefix) and name.endswith(suffix):
            tenant_id = name[len(prefix) : len(name) - len(suffix)]
            if tenant_name.replace("{tenant}", tenant_id) == name:
                found.add(tenant_id)
    return sorted(found)
