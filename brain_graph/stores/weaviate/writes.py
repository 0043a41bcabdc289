"""Writes on Weaviate: vectors upserted in batches into a tenant's generation, objects deleted by id,
tenants and collections removed."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np
import weaviate
from weaviate.classes.data import DataObject
from weaviate.classes.query import Filter

from brain_graph.errors import BackendUnavailableError
from brain_graph.stores.base import VectorRecord, VectorValues
from brain_graph.stores.weaviate.client import WeaviateConnection
from brain_graph.stores.weaviate.errors import BACKEND
from brain_graph.stores.weaviate.naming import collection_name, object_uuid, tenant_name
from brain_graph.stores.weaviate.schema import WeaviateSchema

INSERT_BATCH = 1000
INSERT_REQUESTS = 3  # insert requests of a write in flight at once
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
        vector=client_vector(record.vector),
        uuid=object_uuid(record.tenant_id, record.profile_id, record.node_id),
    )


def client_vector(values: VectorValues) -> Any:
    """A vector as the client takes it, as the float32 values Weaviate stores: a float32 numpy row
    (the client packs it without a list of Python floats held per object: 2 KB, not 16 KB, a vector
    while its batch is in flight); a one-value vector as a list (the client squeezes an array to a
    scalar)."""
    row = np.asarray(values, dtype=np.float32)
    return row if row.size > 1 else row.tolist()


def _batches(
    client: weaviate.WeaviateAsyncClient, vectors: Sequence[VectorRecord], generations: Mapping[str, int]
) -> Iterator[tuple[Any, str, Sequence[VectorRecord]]]:
    """(collection with its Weaviate tenant, profile id, records) of each batch, by (profile, tenant).
    A node given more than once keeps the record given last (batches are in flight together, so
    duplicates in two batches would otherwise race), as the other stores keep it."""
    groups: dict[tuple[str, str], dict[str, VectorRecord]] = {}
    for record in vectors:
        groups.setdefault((record.profile_id, record.tenant_id), {})[record.node_id] = record
    for (profile_id, tenant_id), by_node in sorted(groups.items()):
        tenant = tenant_name(tenant_id, generations[tenant_id])
        collection = client.collections.use(collection_name(profile_id)).with_tenant(tenant)
        records = list(by_node.values())
        for start in range(0, len(records), INSERT_BATCH):
            yield collection, profile_id, records[start : start + INSERT_BATCH]


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
        tenant of each tenant's generation in ``generations``; :data:`INSERT_REQUESTS` batches in flight
        (one is built while others are written). The first failure cancels the others and is raised."""
        batches = _batches(client, vectors, generations)

        async def sender() -> None:
            for collection, profile_id, records in batches:  # shared: each batch is sent once
                await self.insert_batch(collection, profile_id, [data_object(r) for r in records])

        senders = [asyncio.ensure_future(sender()) for _ in range(INSERT_REQUESTS)]
        try:
            await asyncio.gather(*senders)
        finally:
            for task in senders:
                task.cancel()
            await asyncio.gather(*senders, return_exceptions=True)

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
