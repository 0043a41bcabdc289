"""Changing a profile's embedder on Neo4j + Weaviate follows the identity rule (see
``tests/conformance/test_profiles.py``): refused while another tenant holds vectors of the recorded
embedder; when every holder is replaced, a new name is recorded and a new dimension recreates the
collection."""

from __future__ import annotations

import uuid

import pytest

from brain_graph.core.errors import ConfigurationError
from brain_graph.core.filters import SeedFilter
from brain_graph.core.security import AccessScope
from brain_graph.stores import EmbeddingMismatchError, NodeRecord, ProfileIndexInfo, VectorQuery, VectorRecord
from tests.integration.servers import connect, unique_prefix

pytestmark = pytest.mark.integration


def test_embedder_change_on_the_server() -> None:
    backend = connect()
    profile = f"reindex{uuid.uuid4().hex[:6]}.work"
    prefix = unique_prefix("rx")
    a, b = prefix + "a", prefix + "b"

    def load(tenants: list[str], dimension: int, embedder: str, title: str = "title") -> None:
        nodes = [NodeRecord(t, "n1", "cdm.work_item", "P", title, None) for t in tenants]
        vectors = [VectorRecord(t, "n1", profile, "P", False, (), [1.0] * dimension) for t in tenants]
        backend.load(nodes, [], vectors, [ProfileIndexInfo(profile, embedder, dimension)], replace=True)

    def query(tenant: str, dimension: int, embedder: str) -> list[str]:
        hits = backend.vector_index.query(
            [VectorQuery(profile, [1.0] * dimension, embedder)],
            scope=AccessScope(tenant),
            seed_filter=SeedFilter(),
            top_k=3,
        )
        return [hit.node_id for hit in hits]

    try:
        load([a], 4, "emb-1")
        load([b], 4, "emb-1")
        with pytest.raises(ConfigurationError, match=f"'emb-1'.*'emb-2'.*'{b}'"):
            load([a], 4, "emb-2")  # same dimension, new name: b still holds emb-1 vectors
        with pytest.raises(ConfigurationError, match=f"'{b}' still hold vectors"):
            load([a], 6, "emb-3", title="new title")
        # rejected before anything was written: the graph still has the old node
        assert [n.title for n in backend.graph_store.get_nodes(["n1"], scope=AccessScope(a))] == ["title"]
        assert query(a, 4, "emb-1") == query(b, 4, "emb-1") == ["n1"]
        load([a, b], 4, "emb-2")  # every holder replaced: the new name is recorded
        assert query(b, 4, "emb-2") == ["n1"]
        with pytest.raises(EmbeddingMismatchError):
            query(b, 4, "emb-1")
        backend.admin.drop_tenants([b])
        load([a], 6, "emb-3")  # a is the only tenant left, and it is replaced: the collection is recreated
        assert query(a, 6, "emb-3") == ["n1"]
        assert query(b, 6, "emb-3") == []
    finally:
        try:
            backend.admin.drop_tenants([a, b])
            backend.admin.drop_profiles([profile])
        finally:
            backend.close()
