"""Changing a profile's embedder on Neo4j + Weaviate: a new name is recorded; a new dimension
recreates the collection only when every tenant in it is being replaced."""

from __future__ import annotations

import uuid

import pytest

from brain_graph.errors import ConfigurationError
from brain_graph.security import AccessScope
from brain_graph.stores.base import EmbeddingMismatchError, NodeRecord, ProfileIndexInfo, VectorQuery, VectorRecord
from tests.integration.servers import connect, unique_prefix

pytestmark = pytest.mark.integration


def test_embedder_change_on_the_server() -> None:
    backend = connect()
    profile = f"reindex{uuid.uuid4().hex[:6]}.work"
    prefix = unique_prefix("rx")
    a, b = prefix + "a", prefix + "b"

    def load(tenant: str, dimension: int, embedder: str, title: str = "title") -> None:
        node = NodeRecord(tenant, "n1", "cdm.work_item", "P", title, None)
        vector = VectorRecord(tenant, "n1", profile, "P", False, (), [1.0] * dimension)
        backend.load([node], [], [vector], [ProfileIndexInfo(profile, embedder, dimension)], replace=True)

    def query(tenant: str, dimension: int, embedder: str) -> list[str]:
        hits = backend.vector_index.query(
            [VectorQuery(profile, [1.0] * dimension, embedder)], scope=AccessScope(tenant), project_key=None, top_k=3
        )
        return [hit.node_id for hit in hits]

    try:
        load(a, 4, "emb-1")
        load(b, 4, "emb-1")
        load(a, 4, "emb-2")  # same dimension, new name: recorded
        assert query(a, 4, "emb-2") == ["n1"]
        with pytest.raises(EmbeddingMismatchError):
            query(b, 4, "emb-1")
        with pytest.raises(ConfigurationError, match="still hold old vectors"):
            load(a, 6, "emb-3", title="new title")  # tenant b still has 4-dimensional vectors
        # rejected before anything was written: the graph still has the old node
        assert [n.title for n in backend.graph_store.get_nodes(["n1"], scope=AccessScope(a))] == ["title"]
        assert query(b, 4, "emb-2") == ["n1"]
        backend.drop_tenants([b])
        load(a, 6, "emb-3")  # a is the only tenant left, and it is replaced: the collection is recreated
        assert query(a, 6, "emb-3") == ["n1"]
        assert query(b, 6, "emb-3") == []
    finally:
        try:
            backend.drop_tenants([a, b])
            backend.vector_index.drop_profiles([profile])
        finally:
            backend.close()
