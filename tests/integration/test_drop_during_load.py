"""A drop that lands while a replace-load of the same tenant is writing (another client, between the
load taking its generation and its flip) acts as if it came after the load: nothing of the load stays
visible or stored, and the next load works the first time (the drop keeps the tenant's pointer as a
tombstone: docs/internals/neo4j-weaviate-backend.md).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import pytest

from brain_graph.core.errors import BackendUnavailableError
from brain_graph.embedding.profiles import default_profiles
from brain_graph.indexing.dataset import Dataset, load_dataset
from brain_graph.stores.base import EdgeRecord, NodeRecord, VectorRecord
from brain_graph.stores.neo4j_weaviate.backend import Neo4jWeaviateBackend
from brain_graph.stores.neo4j_weaviate.weaviate.naming import tenant_name
from tests.integration.servers import connect, unique_prefix

pytestmark = pytest.mark.integration


def node_rows(tenant: str, tag: str, count: int) -> list[dict[str, Any]]:
    return [
        {
            "tenantId": tenant,
            "id": f"doc-{index}",
            "nodeType": "cdm.doc",
            "projectKey": "P1",
            "title": f"{tag} doc {index} mobile refresh",
            "text": {"body": f"{tag} mobile refresh offline"},
        }
        for index in range(count)
    ]


def dataset(tenant: str, tag: str, count: int) -> Dataset:
    return Dataset.model_validate({"formatVersion": 1, "nodes": node_rows(tenant, tag, count), "edges": []})


def stored(backend: Neo4jWeaviateBackend, tenant: str) -> dict[str, Any]:
    """Everything the servers hold of ``tenant``: Neo4j nodes by generation, Weaviate tenant names."""
    rows = backend.neo4j.read(
        "MATCH (n:BrainNode) WHERE n.tenantId = $tenantId RETURN n.generation AS generation, count(*) AS nodes",
        {"tenantId": tenant},
    )
    base = tenant_name(tenant)

    async def weaviate_tenants(client: Any) -> list[str]:
        names: list[str] = []
        for collection in await client.collections.list_all(simple=True):
            found = await client.collections.use(collection).tenants.get()
            names += [name for name in found if name == base or name.startswith(base + "_g")]
        return sorted(names)

    return {
        "neo4j": {row["generation"]: row["nodes"] for row in rows},
        "weaviate": backend.weaviate.connection.call(weaviate_tenants, None),
    }


@pytest.fixture
def backends() -> Iterator[tuple[Neo4jWeaviateBackend, Neo4jWeaviateBackend, str]]:
    loading, dropping = connect(), connect()
    tenant = unique_prefix("droprace") + "t"
    try:
        yield loading, dropping, tenant
    finally:
        try:
            dropping.admin.drop_tenants([tenant])
        finally:
            loading.close()
            dropping.close()


def test_a_drop_during_a_load_wins_and_the_next_load_works(
    backends: tuple[Neo4jWeaviateBackend, Neo4jWeaviateBackend, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    loading, dropping, tenant = backends
    profiles = default_profiles()
    load_dataset(dataset(tenant, "old", 5), loading, profiles)
    write = loading.generations.write

    def dropped_first(
        nodes: Sequence[NodeRecord],
        edges: Sequence[EdgeRecord],
        generations: Mapping[str, int],
        vectors: Sequence[VectorRecord] = (),
    ) -> None:
        dropping.admin.drop_tenants([tenant])  # another client, after the load took its generation
        write(nodes, edges, generations, vectors)

    monkeypatch.setattr(loading.generations, "write", dropped_first)
    load_dataset(dataset(tenant, "alpha", 30), loading, profiles)
    monkeypatch.undo()

    assert loading.admin.count(tenant).nodes == 0
    assert stored(loading, tenant) == {"neo4j": {}, "weaviate": []}

    load_dataset(dataset(tenant, "beta", 4), loading, profiles)
    counts = loading.admin.count(tenant)
    assert counts.nodes == 4
    assert sum(counts.vectors.values()) > 0
    held = stored(loading, tenant)
    assert list(held["neo4j"].values()) == [4]  # one generation, nothing older
    [generation] = held["neo4j"]
    assert held["weaviate"]
    assert all(name == tenant_name(tenant, generation) for name in held["weaviate"])


def test_a_load_after_a_drop_is_kept(backends: tuple[Neo4jWeaviateBackend, Neo4jWeaviateBackend, str]) -> None:
    loading, dropping, tenant = backends
    profiles = default_profiles()
    load_dataset(dataset(tenant, "old", 5), loading, profiles)
    dropping.admin.drop_tenants([tenant])
    assert loading.admin.count(tenant).nodes == 0
    load_dataset(dataset(tenant, "new", 3), loading, profiles)
    assert loading.admin.count(tenant).nodes == 3
    dropping.admin.drop_tenants([tenant])
    assert stored(loading, tenant) == {"neo4j": {}, "weaviate": []}


def test_a_drop_that_deletes_the_weaviate_tenant_a_load_is_writing_wins_and_the_other_tenants_load(
    backends: tuple[Neo4jWeaviateBackend, Neo4jWeaviateBackend, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Weaviate refuses a batch whose tenant a drop deletes while it is written ("tenant not found"; a
    race CI hit). The refusal is injected at the moment of the drop, as the server gives it."""
    loading, dropping, tenant = backends
    other = tenant + "-other"
    insert = loading.weaviate.writes.insert
    drops: list[str] = []

    async def dropped_meanwhile(vectors: Sequence[VectorRecord], generations: Mapping[str, int]) -> None:
        if drops:
            await insert(vectors, generations)
            return
        drops.append(tenant)
        dropping.admin.drop_tenants([tenant])
        name = tenant_name(tenant, generations[tenant])
        raise BackendUnavailableError("weaviate", f'Every object failed during insertion: tenant not found: "{name}"')

    monkeypatch.setattr(loading.weaviate.writes, "insert", dropped_meanwhile)
    nodes = node_rows(tenant, "alpha", 30) + node_rows(other, "beta", 12)
    try:
        both = Dataset.model_validate({"formatVersion": 1, "nodes": nodes, "edges": []})
        load_dataset(both, loading, default_profiles())
        monkeypatch.undo()
        assert drops == [tenant]
        assert stored(loading, tenant) == {"neo4j": {}, "weaviate": []}
        counts = loading.admin.count(other)
        assert counts.nodes == 12
        assert counts.vectors
        assert all(count == 12 for count in counts.vectors.values())
    finally:
        dropping.admin.drop_tenants([other])


def test_a_failed_vector_write_without_a_drop_fails_the_load(
    backends: tuple[Neo4jWeaviateBackend, Neo4jWeaviateBackend, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    loading, _, tenant = backends
    load_dataset(dataset(tenant, "old", 5), loading, default_profiles())

    async def refused(vectors: Sequence[VectorRecord], generations: Mapping[str, int]) -> None:
        raise BackendUnavailableError("weaviate", "insertion refused")

    monkeypatch.setattr(loading.weaviate.writes, "insert", refused)
    with pytest.raises(BackendUnavailableError, match="insertion refused"):
        load_dataset(dataset(tenant, "alpha", 30), loading, default_profiles())
    monkeypatch.undo()
    assert loading.admin.count(tenant).nodes == 5
