"""Insert batches built in place (:func:`brain_graph.stores.neo4j_weaviate.weaviate.writes.batch_request`) are the
message the Weaviate client's ``insert_many`` sends for the same objects, and objects the server refuses
fail their batch with a typed error, without a server."""

from __future__ import annotations

import asyncio
from typing import Any

import numpy as np
import pytest
from weaviate.classes.data import DataObject
from weaviate.collections.batch.grpc_batch_objects import _BatchGRPC
from weaviate.collections.classes.batch import _BatchObject
from weaviate.proto.v1 import batch_pb2
from weaviate.util import _ServerVersion

from brain_graph.core.errors import BackendUnavailableError
from brain_graph.core.filters import NodeFacets
from brain_graph.stores.base import VectorRecord
from brain_graph.stores.neo4j_weaviate.weaviate.changes import StoredObject
from brain_graph.stores.neo4j_weaviate.weaviate.writes import Target, WeaviateWrites, batch_request, data_object

TARGET = Target("BrainGraph_p_default_0a1b2c3d", "t_5f1_g3")
FACETS = (
    NodeFacets(),
    NodeFacets("cdm.doc", "billing", ("ops", "\u00e9t\u00e9"), 1_767_225_600_000_000),
    NodeFacets("code.file", None, (), -62_135_596_800_000_000),
    NodeFacets("cdm.work_item", "api", ("p",), None),
)


def client_request(target: Target, objects: list[DataObject[Any, Any]]) -> Any:
    """The request the client's ``insert_many`` sends (its own conversion, called as it calls it)."""
    converter = _BatchGRPC(_ServerVersion(1, 38, 14), None)
    batch = [
        _BatchObject(
            collection=target.collection,
            vector=obj.vector,
            uuid=str(obj.uuid),
            properties=obj.properties,
            tenant=target.tenant,
            references=None,
            index=index,
            retry_count=0,
        )
        for index, obj in enumerate(objects)
    ]
    return batch_pb2.BatchObjectsRequest(objects=converter._BatchGRPC__grpc_objects(batch))  # type: ignore[attr-defined]


def records() -> list[VectorRecord]:
    rng = np.random.default_rng(7)
    return [
        VectorRecord(
            tenant_id="t\u00e9nant 1",
            node_id=f"node-{index}\u2603",
            profile_id="p.default",
            vector=rng.standard_normal(dimension),  # float64: both round to float32
            project_key=None if index % 3 == 0 else f"PRJ-{index}",
            secured=index % 2 == 1,
            acl=("group:a", "user:\u00fc") if index % 2 else (),
            content_hash=f"hash-{index}" if index % 4 else "",
            facets=FACETS[index % len(FACETS)],
        )
        for index, dimension in enumerate([512, 512, 3, 1, 8, 512])
    ]


def test_a_batch_of_vector_records_is_the_message_the_client_sends() -> None:
    objects = [data_object(record) for record in records()]
    ours = batch_request(TARGET, objects)
    assert ours == client_request(TARGET, objects)
    assert ours.SerializeToString(deterministic=True) == client_request(TARGET, objects).SerializeToString(
        deterministic=True
    )
    assert [obj.tenant for obj in ours.objects] == [TARGET.tenant] * len(objects)
    assert np.frombuffer(ours.objects[3].vector_bytes, dtype="<f4").shape == (1,)


def test_objects_put_back_by_a_restore_are_the_message_the_client_sends() -> None:
    stored = [
        StoredObject(
            TARGET,
            str(obj.uuid),
            record.node_id,
            {**obj.properties, "acl": list(record.acl)},
            np.asarray(record.vector, dtype="<f4").tolist(),
        )
        for record, obj in ((record, data_object(record)) for record in records())
    ]
    objects = [obj.data_object() for obj in stored]
    assert batch_request(TARGET, objects) == client_request(TARGET, objects)


@pytest.mark.parametrize("value", [{"nested": "map"}, [1, 2], b"bytes"])
def test_a_property_of_a_type_brain_graph_never_writes_is_refused(value: object) -> None:
    obj = DataObject(properties={"nodeId": "n", "odd": value}, vector=[0.5, 0.25], uuid=data_object(records()[0]).uuid)
    with pytest.raises(TypeError, match="property odd"):
        batch_request(TARGET, [obj])


class _Counter:
    round_trips = 0

    def tick(self, requests: int = 1) -> None:
        self.round_trips += requests


class _Refusing:
    """A channel whose server refuses objects 2 and 0 of every batch."""

    def __init__(self) -> None:
        self.sent: list[Any] = []

    def batch_objects(self, request: Any) -> Any:
        self.sent.append(request)
        errors = [batch_pb2.BatchObjectsReply.BatchError(index=i, error=f"bad object {i}") for i in (2, 0)]
        return batch_pb2.BatchObjectsReply(errors=errors)


def test_objects_the_server_refuses_fail_the_batch_with_a_typed_error_naming_the_first() -> None:
    counter, channel = _Counter(), _Refusing()
    writes = WeaviateWrites(counter, None, channel)  # type: ignore[arg-type]
    objects = [data_object(record) for record in records()]
    with pytest.raises(BackendUnavailableError, match=r"2 object\(s\) rejected in p\.default: bad object 0$") as info:
        asyncio.run(writes.insert_batch(TARGET, "p.default", objects))
    assert info.value.backend == "weaviate"
    assert counter.round_trips == 1
    assert channel.sent == [batch_request(TARGET, objects)]
