"""Collections and the profile metadata they record, with a cache of it.

Each profile's collection records in its description the JSON ``{"brainGraph": 1, "profileId",
"embedderName", "dimension"}``: what the index was built with, checked against every query by
:func:`~brain_graph.stores.identity.check_query_matches`. Collections hold objects with the properties
``tenantId``, ``nodeId``, ``projectKey``, ``secured`` and ``acl`` (text[]; ``field`` tokenization so
filters compare whole values), ``contentHash`` (text, not indexed: what the vector was made from, read
by the indexer), ``lexical`` (text, ``whitespace`` tokenization, searchable and filterable: the lexical
document, :func:`brain_graph.core.bm25.lexical_document`, "" for none), ``lexicalLength`` (int: its
number of terms, only on objects with a non-empty document, so the unfiltered count and sum of the
property, read from the inverted index, are the corpus size and total length of BM25), the facets seed
filters match (:mod:`.facets`: ``nodeType``, ``namespace``, ``tags``, ``updatedAt``, ``updatedAtExact``,
``timed``) and a self-provided vector; native multi-tenancy, tenants created on first write. Collections are created
with BM25 ``k1`` 1.2 and ``b`` 0.75 and no stop words (:mod:`brain_graph.core.bm25`'s terms), and
with the configured replication factor (:mod:`.replication`; an existing collection keeps its own).

A collection created before ``contentHash``, the lexical or the facet properties gets the ones it lacks
when it is next written (:meth:`WeaviateSchema.ensure`; lacking ``lexical``, also BM25's settings and
no stop words); objects written before read as "" (no content hash, no lexical document) and as
``NodeFacets()`` (no facets), so the indexer writes them anew.

The metadata of every collection is read with one REST call (``list_all``) and cached: refreshed after
this process writes, when a query names an unknown profile, a lexical query a collection without the
lexical properties or a seed filter on facets one without the facet properties (at most once a
second), and every ``cache_ttl_s`` (60 s).

Embedder identity (:func:`~brain_graph.stores.identity.profile_conflict`): a new embedder name or
dimension for a profile is refused while a Weaviate tenant of a tenant the load does not replace holds
vectors; else a new name is recorded in the description and a new dimension recreates the collection.
An incremental write (:meth:`WeaviateSchema.check_unchanged`) never changes a recorded identity.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import weaviate
from weaviate.classes.config import (
    Configure,
    DataType,
    Property,
    Reconfigure,
    StopwordsPreset,
    Tokenization,
    VectorDistances,
)
from weaviate.exceptions import WeaviateBaseError

from brain_graph.core import bm25
from brain_graph.core.errors import ConfigurationError
from brain_graph.stores.base import ProfileIndexInfo
from brain_graph.stores.identity import identity_change_refused, profile_conflict
from brain_graph.stores.neo4j_weaviate.weaviate.client import WeaviateConnection
from brain_graph.stores.neo4j_weaviate.weaviate.naming import (
    COLLECTION_PREFIX,
    collection_name,
    legacy_tenant_name,
    split_tenant_name,
    tenant_id_of,
    tenant_name,
)
from brain_graph.stores.neo4j_weaviate.weaviate.replication import Replication

METADATA_VERSION = 1
CONTENT_HASH = "contentHash"
LEXICAL = "lexical"
LEXICAL_LENGTH = "lexicalLength"
NODE_TYPE = "nodeType"
NAMESPACE = "namespace"
TAGS = "tags"
UPDATED_AT = "updatedAt"
UPDATED_AT_EXACT = "updatedAtExact"
TIMED = "timed"
FACETS = (NODE_TYPE, NAMESPACE, TAGS, UPDATED_AT, UPDATED_AT_EXACT, TIMED)  # the seed filters' properties
ADDED_LATER = (CONTENT_HASH, LEXICAL, LEXICAL_LENGTH, *FACETS)  # properties collections created before may lack
VectorIndexKind = Literal["flat", "hnsw"]
Client = weaviate.WeaviateAsyncClient


def description(info: ProfileIndexInfo) -> str:
    """The description of a profile's collection."""
    return json.dumps(
        {
            "brainGraph": METADATA_VERSION,
            "profileId": info.profile_id,
            "embedderName": info.embedder_name,
            "dimension": info.dimension,
        },
        sort_keys=True,
    )


def parse_description(text: str | None) -> ProfileIndexInfo | None:
    """The profile a collection's description records (None when it records none)."""
    try:
        meta = json.loads(text or "")
        return ProfileIndexInfo(str(meta["profileId"]), str(meta["embedderName"]), int(meta["dimension"]))
    except (ValueError, KeyError, TypeError):
        return None


def _properties() -> list[Property]:
    field = Tokenization.FIELD
    return [
        Property(name="tenantId", data_type=DataType.TEXT, tokenization=field, index_searchable=False),
        Property(name="nodeId", data_type=DataType.TEXT, tokenization=field, index_searchable=False),
        Property(name="projectKey", data_type=DataType.TEXT, tokenization=field, index_searchable=False),
        Property(name="secured", data_type=DataType.BOOL),
        Property(name="acl", data_type=DataType.TEXT_ARRAY, tokenization=field, index_searchable=False),
        *(_added_later(name) for name in ADDED_LATER),
    ]


def _added_later(name: str) -> Property:
    """One of the properties of :data:`ADDED_LATER`."""
    field = Tokenization.FIELD
    if name == LEXICAL:
        return Property(
            name=LEXICAL,
            data_type=DataType.TEXT,
            tokenization=Tokenization.WHITESPACE,
            index_filterable=True,
            index_searchable=True,
        )
    if name in (CONTENT_HASH, UPDATED_AT_EXACT):  # read, never filtered on
        return Property(name=name, data_type=DataType.TEXT, index_filterable=False, index_searchable=False)
    if name in (NODE_TYPE, NAMESPACE):
        return Property(name=name, data_type=DataType.TEXT, tokenization=field, index_searchable=False)
    if name == TAGS:
        return Property(name=TAGS, data_type=DataType.TEXT_ARRAY, tokenization=field, index_searchable=False)
    if name == TIMED:
        return Property(name=TIMED, data_type=DataType.BOOL)
    if name in (LEXICAL_LENGTH, UPDATED_AT):
        return Property(name=name, data_type=DataType.INT, index_filterable=True, index_searchable=False)
    raise ValueError(f"{name} is not a property added later")


def _inverted_index() -> Any:
    return Configure.inverted_index(bm25_k1=bm25.K1, bm25_b=bm25.B, stopwords_preset=StopwordsPreset.NONE)


def _vector_config(kind: VectorIndexKind) -> Any:
    if kind == "hnsw":
        index: Any = Configure.VectorIndex.hnsw(distance_metric=VectorDistances.COSINE)
    else:
        index = Configure.VectorIndex.flat(distance_metric=VectorDistances.COSINE)
    return Configure.Vectors.self_provided(vector_index_config=index)


@dataclass
class ProfileCache:
    """The recorded profiles and the brain-graph collections, as read at ``loaded_at``; ``lacking``,
    the properties of :data:`ADDED_LATER` each collection created before them lacks."""

    profiles: dict[str, ProfileIndexInfo]
    collections: set[str]
    loaded_at: float
    lacking: dict[str, set[str]] = field(default_factory=dict)

    def lexical(self, profile_id: str) -> bool:
        """Whether the profile's collection exists and holds lexical documents."""
        name = collection_name(profile_id)
        return name in self.collections and not {LEXICAL, LEXICAL_LENGTH} & self.lacking.get(name, set())

    def facets(self, profile_id: str) -> bool:
        """Whether the profile's collection exists and has the seed filters' properties (:data:`FACETS`)."""
        name = collection_name(profile_id)
        return name in self.collections and not set(FACETS) & self.lacking.get(name, set())


class WeaviateSchema:
    """The collections of the profiles, their recorded identity and its cache."""

    def __init__(
        self,
        connection: WeaviateConnection,
        *,
        vector_index: VectorIndexKind = "flat",
        cache_ttl_s: float = 60.0,
        replication: Replication | None = None,
    ) -> None:
        self._connection = connection
        self.replication = replication or Replication()
        self.vector_index_kind: VectorIndexKind = vector_index
        self.cache_ttl_s = cache_ttl_s
        self._cache: ProfileCache | None = None

    def invalidate(self) -> None:
        """Forget the cache (after writes and on a rejected dimension)."""
        self._cache = None

    async def read(self, client: Client) -> ProfileCache:
        """Read every collection's recorded profile (one REST call) and cache it."""
        self._connection.tick()
        configs = await client.collections.list_all(simple=False)
        profiles: dict[str, ProfileIndexInfo] = {}
        collections: set[str] = set()
        lacking: dict[str, set[str]] = {}
        for name, config in configs.items():
            if not name.startswith(COLLECTION_PREFIX):
                continue
            collections.add(name)
            info = parse_description(getattr(config, "description", None))
            if info is not None and collection_name(info.profile_id) == name:
                profiles[info.profile_id] = info
            missing = set(ADDED_LATER) - {prop.name for prop in getattr(config, "properties", None) or ()}
            if missing:
                lacking[name] = missing
        self._cache = ProfileCache(profiles, collections, time.monotonic(), lacking)
        return self._cache

    def fresh(
        self, profile_ids: Iterable[str], *, lexical: Iterable[str] = (), facets: Iterable[str] = ()
    ) -> ProfileCache | None:
        """The cache if it may serve a query of ``profile_ids`` (a lexical query of ``lexical``, a seed
        filter on the facets of ``facets``) without a read: not stale, and not missing one of them (nor,
        for ``lexical``, the lexical properties of its collection, for ``facets`` the facet properties)
        unless read within the last second (None: :meth:`for_query` must read)."""
        cache = self._cache
        now = time.monotonic()
        if cache is None or now - cache.loaded_at > self.cache_ttl_s:
            return None
        unknown = [p for p in profile_ids if p not in cache.profiles]
        unknown += [p for p in lexical if p not in cache.profiles or not cache.lexical(p)]
        unknown += [p for p in facets if p not in cache.profiles or not cache.facets(p)]
        if unknown and now - cache.loaded_at > min(1.0, self.cache_ttl_s):
            return None
        return cache

    async def for_query(
        self, client: Client, profile_ids: Iterable[str], *, lexical: Iterable[str] = (), facets: Iterable[str] = ()
    ) -> ProfileCache:
        """The cache, refreshed when stale or when it misses one of ``profile_ids``, ``lexical`` or
        ``facets`` (at most once a second, :meth:`fresh`)."""
        cache = self.fresh(list(profile_ids), lexical=list(lexical), facets=list(facets))
        return cache if cache is not None else await self.read(client)

    async def tenant_names(self, client: Client, collection: str) -> list[str]:
        """Every Weaviate tenant of a collection (one REST call)."""
        self._connection.tick()
        return sorted(await client.collections.use(collection).tenants.get())

    async def _create(self, client: Client, info: ProfileIndexInfo, cache: ProfileCache) -> None:
        name = collection_name(info.profile_id)
        self._connection.tick()
        await client.collections.create(
            name,
            description=description(info),
            properties=_properties(),
            inverted_index_config=_inverted_index(),
            vector_config=_vector_config(self.vector_index_kind),
            multi_tenancy_config=Configure.multi_tenancy(
                enabled=True, auto_tenant_creation=True, auto_tenant_activation=True
            ),
            replication_config=self.replication.config(),
        )
        cache.collections.add(name)
        cache.lacking.pop(name, None)

    async def _check_holders(
        self, client: Client, recorded: ProfileIndexInfo, loading: ProfileIndexInfo, replace_tenants: Sequence[str]
    ) -> None:
        """Refuse a new embedder identity while a tenant not replaced by this load holds vectors of the
        recorded one (any generation counts: staged and not yet removed ones too)."""
        replaced = {tenant_name(t) for t in replace_tenants} | {legacy_tenant_name(t) for t in replace_tenants}
        names = await self.tenant_names(client, collection_name(recorded.profile_id))
        holders = sorted({tenant_id_of(base) for base, _ in map(split_tenant_name, names) if base not in replaced})
        if holders:
            raise profile_conflict(recorded, loading, holders)

    async def ensure(
        self,
        client: Client,
        profiles: Sequence[ProfileIndexInfo],
        cache: ProfileCache,
        replace_tenants: Sequence[str],
        *,
        dry_run: bool = False,
    ) -> list[str]:
        """Create missing collections and apply the embedder-identity rule, with ``replace_tenants`` the
        tenants the load replaces; the profiles whose recorded identity changes. ``dry_run`` only checks."""
        changed: list[str] = []
        for info in profiles:
            name = collection_name(info.profile_id)
            existing = cache.profiles.get(info.profile_id)
            if name not in cache.collections:
                if not dry_run:
                    await self._create(client, info, cache)
            elif existing is None:
                raise ConfigurationError(
                    f"Weaviate collection {name} exists but does not record profile {info.profile_id}; "
                    "delete it or choose another profile id"
                )
            elif existing != info:
                await self._check_holders(client, existing, info, replace_tenants)
                changed.append(info.profile_id)
                if dry_run:
                    continue
                self._connection.tick()
                if existing.dimension != info.dimension:
                    await client.collections.delete(name)
                    cache.collections.discard(name)
                    await self._create(client, info, cache)
                else:
                    await client.collections.use(name).config.update(description=description(info))
            if not dry_run:
                cache.profiles[info.profile_id] = info
                await self._add_missing(client, name, cache)
        return changed

    async def _add_missing(self, client: Client, name: str, cache: ProfileCache) -> None:
        """Give a collection created before some of :data:`ADDED_LATER` the properties it lacks (one it
        lacks ``lexical``: first BM25's settings and no stop words). A property another process added
        meanwhile is left as it is. Two requests per property (the client reads the collection's
        config first), two for the settings."""
        missing = cache.lacking.get(name)
        if not missing:
            return
        collection = client.collections.use(name)
        if LEXICAL in missing:
            self._connection.tick(2)
            await collection.config.update(
                inverted_index_config=Reconfigure.inverted_index(
                    bm25_k1=bm25.K1, bm25_b=bm25.B, stopwords_preset=StopwordsPreset.NONE
                )
            )
        for property_name in [p for p in ADDED_LATER if p in missing]:
            self._connection.tick(2)
            try:
                await collection.config.add_property(_added_later(property_name))
            except WeaviateBaseError as error:
                if "already exists" not in str(error):
                    raise
            missing.discard(property_name)
        cache.lacking.pop(name, None)

    @staticmethod
    def check_unchanged(cache: ProfileCache, profiles: Sequence[ProfileIndexInfo]) -> None:
        """Refuse profiles whose identity differs from the recorded one (incremental writes never
        replace an identity); profiles without one are recorded by :meth:`ensure`."""
        for info in profiles:
            recorded = cache.profiles.get(info.profile_id)
            if recorded is not None and recorded != info:
                raise identity_change_refused(recorded, info)
