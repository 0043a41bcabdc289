"""Writes on Weaviate: vectors upserted in batches into a tenant's generation, objects deleted by id,
tenants and collections removed."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import weaviate
from weaviate.classes.data import DataObject
from weaviate.classes.query import Filter

from brain_graph.errors import BackendUnavailableError
from brain_graph.stores.base import VectorRecord
from brain_graph.stores.weaviate.client import WeaviateConnection
from brain_graph.stores.weaviate.errors import BACKEND
from brain_graph.stores.weaviate.naming import collection_name, object_uuid, tenant_name
from brain_graph.stores.weaviate.schema import WeaviateSchema

INSERT_BATCH = 1000
DELETE_BATCH = 10_000  # ids per delete request (Weaviate's default QUERY_MAXIMUM_RESULTS)


def data_object(record: VectorRecord) -> DataObject[Any, Any]:
    """The object of a vector: the properties filters read, the vector, a deterministic id."""
    return DataObject(
        properties={
            "tenantId": record.tenant_id,
            "nodeId": record.node_id,
            "projectKey": record.project_key,
            "secured": record.secured,
            "acl": list(record.acl),
            "contentHash": record.content_hash,
        },
        vector=np.asarray(record.vector, dtype=np.float32).tolist(),  # what Weaviate stores, exactly
        uuid=object_uuid(record.tenant_id, record.profile_id, record.node_id),
    )


class WeaviateWrites:
    """Inserts and removals, counted on the connection."""

    def __init__(self, connection: WeaviateConnection, schema: WeaviateSchema) -> None:
        self._connection = connection
        self._schema = schema

    async def insert_batch(self, collection: Any, profile_id: str, batch: list[DataObject[Any, Any]]) -> None:
        """Upsert one batch of objects into one Weaviate tenant."""
        self._connection.tick()
        result = await collection.data.insert_many(batch)
        if result.has_errors:
            first = next(iter(result.errors.values()))
            raise BackendUnavailableError(
                BACKEND, f"{len(result.errors)} object(s) rejected in {profile_id}: {first.message}"
            )

    async def insert(
        self, client: weaviate.WeaviateAsyncClient, vectors: Sequence[VectorRecord], generations: Mapping[str, int]
    ) -> None:
        """Upsert ``vectors`` in batches of :data:`INSERT_BATCH`, per (profile, tenant), into the Weaviate
        tenant of each tenant's generation in ``generations``."""
        groups: dict[tuple[str, str], list[VectorRecord]] = {}
        for record in vectors:
            groups.setdefault((record.profile_id, record.tenant_id), []).append(record)
        for (profile_id, tenant_id), records in sorted(groups.items()):
            tenant = tenant_name(tenant_id, generations[tenant_id])
            collection = client.collections.use(collection_name(profile_id)).with_tenant(tenant)
            for start in range(0, len(records), INSERT_BATCH):
                batch = [data_object(r) for r in records[start : start + INSERT_BATCH]]
                await self.insert_batch(collection, profile_id, batch)

    async def delete_ids(self, collection: Any, label: str, uuids: Sequence[str]) -> None:
        """Delete objects of one Weaviate tenant by id, :data:`DELETE_BATCH` ids per request."""
        ids = sorted(uuids)
        for start in range(0, len(ids), DELETE_BATCH):
            self._connection.tick()
            where = Filter.by_id().contains_any(ids[start : start + DELETE_BATCH])
            result = await collection.data.delete_many(where=where)
            if result.failed:
                raise BackendUnavailableError(BACKEND, f"{result.failed} object(s) of {label} could not be deleted")

    async def remove_tenants(
        self, client: weaviate.WeaviateAsyncClient, pick: Callable[[str], bool], collections: Iterable[str]
    ) -> None:
        """Remove the Weaviate tenants ``pick`` selects from each collection (listed, then removed)."""
        for collection in sorted(collections):
            chosen = [name for name in await self._schema.tenant_names(client, collection) if pick(name)]
            if chosen:
                self._connection.tick()
                await client.collections.use(collection).tenants.remove(chosen)

    async def drop_collections(self, client: weaviate.WeaviateAsyncClient, profile_ids: Sequence[str]) -> None:
        """Delete the collections of these profiles (all tenants)."""
        self._connection.tick()
        await client.collections.delete([collection_name(p) for p in profile_ids])
