"""Writes on Weaviate: vectors upserted in batches into a tenant's generation, objects deleted by id,
tenants and collections removed.

An insert batch is the gRPC ``BatchObjectsRequest`` the client's ``insert_many`` sends for the same
objects (the same message, compared in ``tests/unit/test_weaviate_batch_request.py``), built in place
by :func:`batch_request` and sent on the channel searches use
(:meth:`~brain_graph.stores.neo4j_weaviate.weaviate.grpc_search.GrpcSearch.batch_objects`), skipping the
client's per-property conversion and validation (about five times the CPU per object; the numbers:
docs/internals/weaviate.md).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import weaviate
from weaviate.classes.data import DataObject
from weaviate.classes.query import Filter
from weaviate.proto.v1 import batch_pb2

from brain_graph.core.errors import BackendUnavailableError
from brain_graph.stores.base import VectorRecord, VectorValues
from brain_graph.stores.neo4j_weaviate.weaviate.client import WeaviateConnection
from brain_graph.stores.neo4j_weaviate.weaviate.errors import BACKEND
from brain_graph.stores.neo4j_weaviate.weaviate.facets import facet_properties
from brain_graph.stores.neo4j_weaviate.weaviate.grpc_search import GrpcSearch
from brain_graph.stores.neo4j_weaviate.weaviate.naming import collection_name, object_uuid, tenant_name
from brain_graph.stores.neo4j_weaviate.weaviate.schema import CONTENT_HASH, LEXICAL, LEXICAL_LENGTH, WeaviateSchema

INSERT_BATCH = 1000
INSERT_REQUESTS = 3  # insert requests of a write in flight at once
DELETE_BATCH = 10_000  # ids per delete request (Weaviate's default QUERY_MAXIMUM_RESULTS)
FLOAT32 = np.dtype("<f4")


@dataclass(frozen=True, order=True)
class Target:
    """A collection and one of its Weaviate tenants."""

    collection: str
    tenant: str


def data_object(record: VectorRecord) -> DataObject[Any, Any]:
    """The object of a vector: the properties filters read, its facets (:mod:`.facets`), the content
    hash, the lexical document and its number of terms (only for a non-empty document: see
    :mod:`.schema`), the vector, a deterministic id."""
    properties: dict[str, Any] = {
        "tenantId": record.tenant_id,
        "nodeId": record.node_id,
        "projectKey": record.project_key,
        "secured": record.secured,
        "acl": list(record.acl),
        **facet_properties(record.facets),
        CONTENT_HASH: record.content_hash,
        LEXICAL: record.lexical,
    }
    length = len(record.lexical.split())
    if length:
        properties[LEXICAL_LENGTH] = length
    return DataObject(
        properties=properties,
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


def batch_request(target: Target, objects: Sequence[DataObject[Any, Any]]) -> Any:
    """The ``BatchObjectsRequest`` upserting ``objects`` into one Weaviate tenant, as the client's
    ``insert_many`` builds it: each object's id, its vector as float32 bytes (none for an object
    without a vector) and its properties (text, boolean, number or null in the ``Struct``; a list of
    texts as a text array, an empty list by name)."""
    request = batch_pb2.BatchObjectsRequest()
    add = request.objects.add
    for obj in objects:
        message = add(collection=target.collection, tenant=target.tenant, uuid=str(obj.uuid))
        if obj.vector is not None:
            message.vector_bytes = np.asarray(obj.vector, dtype=FLOAT32).tobytes()
        if obj.properties is not None:
            _set_properties(message.properties, obj.properties)
    return request


def _set_properties(properties: Any, values: Mapping[str, Any]) -> None:
    """Write an object's property values into its ``BatchObject.Properties``."""
    fields = properties.non_ref_properties.fields
    for name, value in values.items():
        if isinstance(value, list | tuple):
            if not value:
                properties.empty_list_props.append(name)
            elif all(isinstance(item, str) for item in value):
                properties.text_array_properties.add(prop_name=name, values=value)
            else:
                raise TypeError(f"property {name}: only lists of texts are written")
        elif value is None:
            fields[name].null_value = 0
        elif isinstance(value, bool):
            fields[name].bool_value = value
        elif isinstance(value, str):
            fields[name].string_value = value
        elif isinstance(value, int | float):
            fields[name].number_value = value
        else:
            raise TypeError(f"property {name}: {type(value).__name__} is not written")


def _batches(
    vectors: Sequence[VectorRecord], generations: Mapping[str, int]
) -> Iterator[tuple[Target, str, Sequence[VectorRecord]]]:
    """(target, profile id, records) of each batch, by (profile, tenant). A node given more than once
    keeps the record given last (batches are in flight together, so duplicates in two batches would
    otherwise race), as the other stores keep it."""
    groups: dict[tuple[str, str], dict[str, VectorRecord]] = {}
    for record in vectors:
        groups.setdefault((record.profile_id, record.tenant_id), {})[record.node_id] = record
    for (profile_id, tenant_id), by_node in sorted(groups.items()):
        target = Target(collection_name(profile_id), tenant_name(tenant_id, generations[tenant_id]))
        records = list(by_node.values())
        for start in range(0, len(records), INSERT_BATCH):
            yield target, profile_id, records[start : start + INSERT_BATCH]


class WeaviateWrites:
    """Inserts and removals, counted on the connection."""

    def __init__(self, connection: WeaviateConnection, schema: WeaviateSchema, grpc: GrpcSearch) -> None:
        self._connection = connection
        self._schema = schema
        self._grpc = grpc

    async def insert_batch(self, target: Target, profile_id: str, batch: list[DataObject[Any, Any]]) -> None:
        """Upsert one batch of objects into one Weaviate tenant (built here, sent from a worker thread)."""
        self._connection.tick()
        reply = await asyncio.to_thread(self._grpc.batch_objects, batch_request(target, batch))
        if reply.errors:
            first = min(reply.errors, key=lambda error: error.index)
            raise BackendUnavailableError(
                BACKEND, f"{len(reply.errors)} object(s) rejected in {profile_id}: {first.error}"
            )

    async def insert(self, vectors: Sequence[VectorRecord], generations: Mapping[str, int]) -> None:
        """Upsert ``vectors`` in batches of :data:`INSERT_BATCH`, per (profile, tenant), into the Weaviate
        tenant of each tenant's generation in ``generations``; :data:`INSERT_REQUESTS` batches in flight
        (one is built while others are written). The first failure cancels the others and is raised."""
        batches = _batches(vectors, generations)

        async def sender() -> None:
            for target, profile_id, records in batches:  # shared: each batch is sent once
                await self.insert_batch(target, profile_id, [data_object(r) for r in records])

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
