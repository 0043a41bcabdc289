"""The vectors of a :class:`~brain_graph.stores.base.ChangeSet` on Weaviate, undoably.

A change is planned per target, a (collection, Weaviate tenant of the tenant's generation) pair
(:func:`plan_vectors`): the node ids whose objects it deletes (a deleted node's in every collection, a
deleted vector's in its profile's) and the records it upserts. Before writing, the objects of every
node the change touches are read with their vectors and properties (:meth:`WeaviateChanges.read`);
then objects are deleted by id and upserted in batches (:meth:`~WeaviateChanges.write`, idempotent;
an object both deleted and upserted is deleted first, so Weaviate indexes its vector again);
:meth:`~WeaviateChanges.restore` undoes it whatever point the writes reached: it deletes the objects
the change created and re-inserts every object read before.

Round trips: reads one ``fetch_objects`` per target and 10,000 node ids (concurrent); writes one
delete per target and 10,000 ids, then one insert per target and
:data:`~brain_graph.stores.neo4j_weaviate.weaviate.writes.INSERT_BATCH` objects; a restore as many.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import weaviate
from weaviate.classes.data import DataObject
from weaviate.classes.query import Filter
from weaviate.exceptions import WeaviateQueryError

from brain_graph.stores.base import ChangeSet, VectorRecord
from brain_graph.stores.neo4j_weaviate.weaviate import writes as weaviate_writes
from brain_graph.stores.neo4j_weaviate.weaviate.client import WeaviateConnection
from brain_graph.stores.neo4j_weaviate.weaviate.errors import is_missing
from brain_graph.stores.neo4j_weaviate.weaviate.naming import collection_name, object_uuid, tenant_name
from brain_graph.stores.neo4j_weaviate.weaviate.replication import Replication
from brain_graph.stores.neo4j_weaviate.weaviate.search import QUERY_MAX_RESULTS
from brain_graph.stores.neo4j_weaviate.weaviate.writes import Target, WeaviateWrites, data_object

Client = weaviate.WeaviateAsyncClient


@dataclass(frozen=True)
class StoredObject:
    """An object as it was before a change: enough to put it back."""

    target: Target
    uuid: str
    node_id: str
    properties: Mapping[str, Any]
    vector: list[float]

    def data_object(self) -> DataObject[Any, Any]:
        return DataObject(properties=dict(self.properties), vector=self.vector or None, uuid=self.uuid)


@dataclass
class VectorPlan:
    """The vector writes of a change, per target: node ids whose objects are deleted, records upserted."""

    deletes: dict[Target, set[str]] = field(default_factory=dict)
    upserts: dict[Target, list[VectorRecord]] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.deletes or self.upserts)

    def reads(self) -> dict[Target, list[str]]:
        """The node ids whose objects are read before writing, per target, sorted."""
        ids: dict[Target, set[str]] = {target: set(nodes) for target, nodes in self.deletes.items()}
        for target, records in self.upserts.items():
            ids.setdefault(target, set()).update(r.node_id for r in records)
        return {target: sorted(nodes) for target, nodes in sorted(ids.items())}

    def upserted_ids(self, target: Target) -> set[str]:
        return {object_uuid(r.tenant_id, r.profile_id, r.node_id) for r in self.upserts.get(target, ())}


def plan_vectors(changes: ChangeSet, generations: Mapping[str, int], collections: set[str]) -> VectorPlan:
    """The vector writes of ``changes`` into each tenant's generation (tenants without one have no
    vectors to delete); ``collections`` are the existing collections (a deleted node's vectors are
    deleted from all of them)."""
    plan = VectorPlan()

    def target(tenant_id: str, collection: str) -> Target:
        return Target(collection, tenant_name(tenant_id, generations[tenant_id]))

    for node in changes.delete_nodes:
        if node.tenant_id in generations:
            for collection in collections:
                plan.deletes.setdefault(target(node.tenant_id, collection), set()).add(node.node_id)
    for key in changes.delete_vectors:
        collection = collection_name(key.profile_id)
        if key.tenant_id in generations and collection in collections:
            plan.deletes.setdefault(target(key.tenant_id, collection), set()).add(key.node_id)
    for record in changes.upsert_vectors:
        plan.upserts.setdefault(target(record.tenant_id, collection_name(record.profile_id)), []).append(record)
    return plan


def by_target(objects: Sequence[StoredObject]) -> dict[Target, list[StoredObject]]:
    grouped: dict[Target, list[StoredObject]] = {}
    for obj in objects:
        grouped.setdefault(obj.target, []).append(obj)
    return grouped


def _vector(obj: Any) -> list[float]:
    """A returned object's vector ([] for an object stored without one)."""
    vector = obj.vector
    if isinstance(vector, dict):
        return list(next(iter(vector.values()), []))
    return list(vector or [])


class WeaviateChanges:
    """Read, write and restore the objects of a :class:`VectorPlan`."""

    def __init__(
        self, connection: WeaviateConnection, writes: WeaviateWrites, replication: Replication | None = None
    ) -> None:
        self._connection = connection
        self._writes = writes
        self._replication = replication or Replication()

    async def read(self, client: Client, plan: VectorPlan) -> list[StoredObject]:
        """The objects the plan touches, as they are now (with vectors and properties)."""
        reads = plan.reads()
        parts = await asyncio.gather(*(self._read_target(client, target, ids) for target, ids in reads.items()))
        return [obj for part in parts for obj in part]

    async def _read_target(self, client: Client, target: Target, node_ids: Sequence[str]) -> list[StoredObject]:
        collection = self._replication.reading(client.collections.use(target.collection).with_tenant(target.tenant))
        found: list[StoredObject] = []
        for start in range(0, len(node_ids), QUERY_MAX_RESULTS):
            ids = list(node_ids[start : start + QUERY_MAX_RESULTS])
            self._connection.tick()
            try:
                response = await collection.query.fetch_objects(
                    limit=len(ids), filters=Filter.by_property("nodeId").contains_any(ids), include_vector=True
                )
            except WeaviateQueryError as error:
                if is_missing(error):
                    return []
                raise
            found += (
                StoredObject(target, str(obj.uuid), str(obj.properties["nodeId"]), dict(obj.properties), _vector(obj))
                for obj in response.objects
            )
        return found

    async def write(self, client: Client, plan: VectorPlan, previous: Sequence[StoredObject]) -> None:
        """Delete, then upsert (idempotent: a retry redoes the same writes). An object both deleted and
        upserted is deleted first, so it is written anew: Weaviate keeps an upserted object whose vector
        equals the stored one where it is in the vector index, or out of it when an interrupted write
        left it out."""
        stored = by_target(previous)
        for target, node_ids in sorted(plan.deletes.items()):
            doomed = [o.uuid for o in stored.get(target, ()) if o.node_id in node_ids]
            if doomed:
                await self._writes.delete_ids(self._collection(client, target), target.collection, doomed)
        for target, records in sorted(plan.upserts.items()):
            await self._insert(target, [data_object(r) for r in records])

    async def restore(self, client: Client, plan: VectorPlan, previous: Sequence[StoredObject]) -> None:
        """Put the targets back as ``previous`` holds them: the objects the change created are deleted,
        the previous ones re-inserted (idempotent)."""
        before = {o.uuid for o in previous}
        for target in sorted(plan.upserts):
            created = plan.upserted_ids(target) - before
            if created:
                await self._writes.delete_ids(self._collection(client, target), target.collection, sorted(created))
        for target, objects in sorted(by_target(previous).items()):
            await self._insert(target, [obj.data_object() for obj in objects])

    def _collection(self, client: Client, target: Target) -> Any:
        """The target's collection handle, writing at the write level."""
        return self._replication.writing(client.collections.use(target.collection).with_tenant(target.tenant))

    async def _insert(self, target: Target, objects: Sequence[DataObject[Any, Any]]) -> None:
        size = weaviate_writes.INSERT_BATCH
        for start in range(0, len(objects), size):
            await self._writes.insert_batch(target, target.collection, list(objects[start : start + size]))
