"""Replication of the collections and the consistency levels of their reads and writes.

A collection is created with ``factor`` replicas of each of its shards (Weaviate's
``replicationConfig.factor``; one shard per Weaviate tenant). Every object write (the gRPC
``BatchObjects``, deletes) waits for ``write`` replicas to acknowledge it and every object read (the
gRPC ``Search`` requests, the client's ``fetch_objects`` and ``near_vector``) asks ``read`` replicas,
repairing the ones that differ. ``ONE`` is one replica, ``QUORUM`` a majority (``factor // 2 + 1``),
``ALL`` every one; with one replica all three are the same. A write level plus a read level that
overlap (``QUORUM`` + ``QUORUM``, ``ALL`` + ``ONE``) read every acknowledged write, whichever node
coordinates; ``QUORUM`` for both keeps reads and writes answering while a minority of the replicas
is down. Schema changes (collections, Weaviate tenants) go through Weaviate's Raft log instead and
need a majority of its voters, whatever these levels say.

A search runs on one replica of each shard (QUORUM checks the objects it returns against the
others, but cannot see objects that replica lacks): a node that missed writes while it was down
answers incompletely for the shards it serves until async replication (on for new collections with
more than one replica) has repaired it. A collection that already exists keeps its replication
settings.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from weaviate.classes.config import Configure
from weaviate.classes.config import ConsistencyLevel as ClientLevel
from weaviate.proto.v1 import base_pb2

Level = Literal["ONE", "QUORUM", "ALL"]
_GRPC = {
    "ONE": base_pb2.CONSISTENCY_LEVEL_ONE,
    "QUORUM": base_pb2.CONSISTENCY_LEVEL_QUORUM,
    "ALL": base_pb2.CONSISTENCY_LEVEL_ALL,
}


@dataclass(frozen=True)
class Replication:
    """How many replicas new collections get and how many answer reads and writes."""

    factor: int = 1
    write: Level = "QUORUM"
    read: Level = "QUORUM"

    def __post_init__(self) -> None:
        if self.factor < 1:
            raise ValueError(f"replication factor must be at least 1 (got {self.factor})")
        for level in (self.write, self.read):
            if level not in _GRPC:
                raise ValueError(f"consistency level must be ONE, QUORUM or ALL (got {level!r})")

    @property
    def grpc_write(self) -> Any:
        """The write level as the gRPC ``ConsistencyLevel`` of a ``BatchObjectsRequest``."""
        return _GRPC[self.write]

    @property
    def grpc_read(self) -> Any:
        """The read level as the gRPC ``ConsistencyLevel`` of a ``SearchRequest``."""
        return _GRPC[self.read]

    def config(self) -> Any:
        """The ``replication_config`` of a new collection: with more than one replica, async replication
        on (replicas compare and repair their objects in the background, so a node that missed writes
        while it was down catches up)."""
        return Configure.replication(factor=self.factor, async_enabled=self.factor > 1)

    def reading(self, collection: Any) -> Any:
        """``collection`` (a client collection handle) reading at the read level."""
        return collection.with_consistency_level(ClientLevel(self.read))

    def writing(self, collection: Any) -> Any:
        """``collection`` (a client collection handle) writing at the write level."""
        return collection.with_consistency_level(ClientLevel(self.write))
