"""Seed filters on the real Neo4j + Weaviate servers, beyond the conformance suite: a collection the
previous version created (without the facet properties, its objects without facets) is searched
without errors, gets the properties on its next write, and an index run converges it; values that
JSON and GraphQL escape, and update times beyond what a float64 holds, filter, report ``untimed``
and read back exactly; a node's facets, replaced by a change or a merge-load, are what every node read
returns."""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import pytest
from weaviate.classes.config import (
    Configure,
    DataType,
    Property,
    StopwordsPreset,
    Tokenization,
    VectorDistances,
)
from weaviate.classes.data import DataObject

from brain_graph.core import bm25
from brain_graph.core.filters import NodeFacets, SeedFilter, parse_timestamp
from brain_graph.core.security import AccessScope
from brain_graph.embedding.profiles import EmbeddingProfile, ProfileRegistry
from brain_graph.indexing.changes import vector_changes
from brain_graph.indexing.indexer import Indexer
from brain_graph.indexing.report import IndexReport
from brain_graph.stores.base import ChangeSet, LexicalQuery, NodeRecord, VectorQuery, VectorRecord, node_facets
from brain_graph.stores.neo4j_weaviate.backend import Neo4jWeaviateBackend
from brain_graph.stores.neo4j_weaviate.neo4j.vector_copies import copy_bytes, copy_properties
from brain_graph.stores.neo4j_weaviate.weaviate import schema as weaviate_schema
from brain_graph.stores.neo4j_weaviate.weaviate.naming import collection_name, object_uuid, tenant_name
from tests.integration.servers import connect, team_weaviate, unique_prefix

pytestmark = pytest.mark.integration

RUN = uuid.uuid4().hex[:6]
OLD, FAR_PROFILE = f"fac{RUN}.old", f"fac{RUN}.far"
ITEM = "cdm.work_item"
DIM = 4
JAN, MAR = parse_timestamp("2026-01-01"), parse_timestamp("2026-03-01")
FAR = parse_timestamp("9999-12-31T23:59:59.999999Z")  # beyond 2**53 microseconds: a float64 rounds it
Q = [1.0, 1.0, 1.0, 1.0]


class WordEmbedder:
    """A deterministic embedder: each text's vector comes from its SHA-256."""

    dimension = DIM

    def _one(self, text: str) -> list[float]:
        digest = hashlib.sha256(text.encode()).digest()
        return [1.0 + digest[i] / 255.0 for i in range(DIM)]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self._one(text) for text in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._one(text)


def registry(profile_id: str) -> ProfileRegistry:
    profile = EmbeddingProfile(profile_id, "work", "e", DIM, (ITEM,), ("title", "summary"))
    return ProfileRegistry(profiles=(profile,), embedders={"e": WordEmbedder()})


@pytest.fixture(scope="module")
def backend() -> Iterator[Neo4jWeaviateBackend]:
    server = connect()
    try:
        yield server
    finally:
        try:
            server.drop_profiles([OLD, FAR_PROFILE])
        finally:
            server.close()


@pytest.fixture
def tenant(backend: Neo4jWeaviateBackend) -> Iterator[str]:
    name = unique_prefix("fc") + "t"
    try:
        yield name
    finally:
        backend.drop_tenants([name])


def node(tenant: str, node_id: str, **fields: Any) -> NodeRecord:
    return NodeRecord(
        tenant, node_id, ITEM, "P", f"payment {node_id}", None, text={"summary": "payment gateway"}, **fields
    )


def graph(tenant: str) -> list[NodeRecord]:
    return [
        node(tenant, "jan", tags=("payments",), updated_at=JAN, namespace="Billing"),
        node(tenant, "mar", tags=("auth",), updated_at=MAR, properties={"path": "src/auth/x.py"}),
        node(tenant, "untimed", tags=("payments",)),
        node(tenant, "secret", secured=True, acl=("user:alice",), tags=("payments",)),
    ]


def vectors(nodes: Sequence[NodeRecord], profiles: ProfileRegistry) -> list[VectorRecord]:
    """The vectors an index run writes for ``nodes`` (hashes, lexical documents and facets included)."""
    (profile,) = profiles.profiles
    return vector_changes(nodes, profile, profiles, {}, full=True, report=IndexReport()).upsert_vectors


OLD_PROPERTIES = [  # the properties of a collection before facets, as the previous version created them
    Property(name="tenantId", data_type=DataType.TEXT, tokenization=Tokenization.FIELD, index_searchable=False),
    Property(name="nodeId", data_type=DataType.TEXT, tokenization=Tokenization.FIELD, index_searchable=False),
    Property(name="projectKey", data_type=DataType.TEXT, tokenization=Tokenization.FIELD, index_searchable=False),
    Property(name="secured", data_type=DataType.BOOL),
    Property(name="acl", data_type=DataType.TEXT_ARRAY, tokenization=Tokenization.FIELD, index_searchable=False),
    Property(name="contentHash", data_type=DataType.TEXT, index_filterable=False, index_searchable=False),
    Property(name="lexical", data_type=DataType.TEXT, tokenization=Tokenization.WHITESPACE),
    Property(name="lexicalLength", data_type=DataType.INT, index_searchable=False),
]


def write_as_before(backend: Neo4jWeaviateBackend, records: Sequence[VectorRecord], profiles: ProfileRegistry) -> None:
    """What the previous version left: the profile's collection and objects without facets (official
    Weaviate client), and the vector copies on the nodes (plain Cypher)."""
    (profile,) = profiles.profiles
    identity = profiles.identity(profile)
    tenant = records[0].tenant_id
    generation = backend.generations.current_generation(tenant)
    assert generation is not None
    recorded = {
        "brainGraph": 1,
        "profileId": profile.profile_id,
        "embedderName": identity.embedder_name,
        "dimension": DIM,
    }
    client = team_weaviate()
    try:
        collection = client.collections.create(
            collection_name(profile.profile_id),
            description=json.dumps(recorded, sort_keys=True),
            properties=OLD_PROPERTIES,
            inverted_index_config=Configure.inverted_index(
                bm25_k1=1.2, bm25_b=0.75, stopwords_preset=StopwordsPreset.NONE
            ),
            vector_config=Configure.Vectors.self_provided(
                vector_index_config=Configure.VectorIndex.flat(distance_metric=VectorDistances.COSINE)
            ),
            multi_tenancy_config=Configure.multi_tenancy(
                enabled=True, auto_tenant_creation=True, auto_tenant_activation=True
            ),
        )
        objects = [
            DataObject(
                properties={
                    "tenantId": r.tenant_id,
                    "nodeId": r.node_id,
                    "projectKey": r.project_key,
                    "secured": r.secured,
                    "acl": list(r.acl),
                    "contentHash": r.content_hash,
                    "lexical": r.lexical,
                    "lexicalLength": len(r.lexical.split()),
                },
                vector=np.asarray(r.vector, dtype=np.float32).tolist(),
                uuid=object_uuid(r.tenant_id, r.profile_id, r.node_id),
            )
            for r in records
        ]
        result = collection.with_tenant(tenant_name(tenant, generation)).data.insert_many(objects)
        assert not result.errors
    finally:
        client.close()
    data, secured, acl, content_hash = copy_properties(profile.profile_id)
    rows = [
        [r.node_id, {data: copy_bytes(r.vector), secured: r.secured, acl: list(r.acl), content_hash: r.content_hash}]
        for r in records
    ]
    backend.neo4j.write(
        lambda session: backend.neo4j.commit(
            session,
            "MATCH (t:BrainTenant {tenantId: $tenantId}) UNWIND $rows AS row MATCH (n:BrainNode) "
            "WHERE n.tenantId = $tenantId AND n.generation = t.generation AND n.nodeId = row[0] SET n += row[1]",
            {"tenantId": tenant, "rows": rows},
        )
    )
    backend.weaviate.schema.invalidate()  # written behind this process's back


def properties_of(backend: Neo4jWeaviateBackend, profile_id: str) -> dict[str, tuple[str, str | None, bool]]:
    """Each property of a profile's collection: (data type, tokenization, filterable)."""

    async def op(client: Any) -> dict[str, tuple[str, str | None, bool]]:
        config = await client.collections.use(collection_name(profile_id)).config.get()
        return {
            p.name: (p.data_type.value, p.tokenization.value if p.tokenization else None, p.index_filterable)
            for p in config.properties
        }

    return backend.weaviate.connection.call(op, None)


def found(backend: Neo4jWeaviateBackend, profile_id: str, scope: AccessScope, seed_filter: SeedFilter) -> list[str]:
    """The nodes a vector search and a lexical search find, sorted (both must agree here)."""
    embedder = registry(profile_id)
    query = VectorQuery(profile_id, Q, embedder.identity(embedder.profiles[0]).embedder_name)
    hits = backend.vector_index.query([query], scope=scope, seed_filter=seed_filter, top_k=10)
    lexical = backend.vector_index.lexical(
        [LexicalQuery(profile_id, bm25.query_terms("payment"))], scope=scope, seed_filter=seed_filter, top_k=10
    )
    assert sorted(hit.node_id for hit in hits) == sorted(hit.node_id for hit in lexical)
    return sorted(hit.node_id for hit in hits)


def untimed(backend: Neo4jWeaviateBackend, profile_id: str, scope: AccessScope, seed_filter: SeedFilter) -> bool:
    return backend.vector_index.untimed([profile_id], scope=scope, seed_filter=seed_filter)


def test_a_collection_from_before_facets_gets_them_and_an_index_run_converges_it(
    backend: Neo4jWeaviateBackend, tenant: str
) -> None:
    profiles = registry(OLD)
    nodes = graph(tenant)
    backend.load(nodes, [], [], [], replace=True)
    records = vectors(nodes, profiles)
    write_as_before(backend, records, profiles)
    assert not set(weaviate_schema.FACETS) & set(properties_of(backend, OLD))
    states = backend.index_store.vector_states(tenant, OLD)
    assert [(s.node_id, s.searchable, s.lexical, s.facets) for s in states] == [
        (n.node_id, True, True, NodeFacets()) for n in sorted(nodes, key=lambda n: n.node_id)
    ]
    public, alice = AccessScope(tenant), AccessScope(tenant, frozenset({"user:alice"}))
    # before the next write: objects without facets match no facet part (and nothing fails)
    assert found(backend, OLD, public, SeedFilter()) == ["jan", "mar", "untimed"]
    assert found(backend, OLD, public, SeedFilter(tags=("payments",))) == []
    assert found(backend, OLD, public, SeedFilter(updated_after=JAN)) == []
    assert untimed(backend, OLD, public, SeedFilter(updated_after=JAN))  # every object reads without a time
    assert not untimed(backend, OLD, public, SeedFilter(updated_after=JAN, tags=("payments",)))

    indexer = Indexer(backend, profiles)
    report = indexer.run([tenant], [OLD])
    assert (report.embedded, report.unchanged, report.deleted) == (len(nodes), 0, 0)  # the facets were stale
    properties = properties_of(backend, OLD)
    assert properties["nodeType"] == properties["namespace"] == ("text", "field", True)
    assert properties["tags"] == ("text[]", "field", True)
    assert (properties["updatedAt"][0], properties["timed"][0]) == ("int", "boolean")
    states = backend.index_store.vector_states(tenant, OLD)
    assert {s.node_id: s.facets for s in states} == {n.node_id: node_facets(n) for n in nodes}
    assert found(backend, OLD, public, SeedFilter(tags=("payments",))) == ["jan", "untimed"]
    assert found(backend, OLD, alice, SeedFilter(tags=("payments",))) == ["jan", "secret", "untimed"]
    assert found(backend, OLD, public, SeedFilter(namespaces=("billing", "auth"))) == ["jan", "mar"]
    assert found(backend, OLD, public, SeedFilter(updated_after=MAR)) == ["mar"]
    assert untimed(backend, OLD, public, SeedFilter(updated_after=JAN, tags=("payments",)))
    assert not untimed(backend, OLD, public, SeedFilter(updated_after=JAN, tags=("auth",)))
    again = indexer.run([tenant], [OLD])
    assert (again.embedded, again.unchanged) == (0, len(nodes))


# tags a filter names folded (as the pipeline folds them), each with characters JSON and GraphQL escape
HOSTILE = ['quote"d', "back\\slash\\", "}) { get { x } }", "\u00e9t\u00e9 \U0001f600", 'it\'s \\"x\\"']


def test_escaped_values_and_far_times_filter_and_read_back_exactly(backend: Neo4jWeaviateBackend, tenant: str) -> None:
    profiles = registry(FAR_PROFILE)
    nodes = [
        node(tenant, "far", tags=(HOSTILE[0],), updated_at=FAR, namespace='n"s'),
        node(tenant, "almost", tags=(HOSTILE[1],), updated_at=FAR - 1, namespace='n"s'),
        node(tenant, "first", tags=(HOSTILE[2], HOSTILE[3]), updated_at=parse_timestamp("0001-01-01")),
        node(tenant, "untimed", tags=(HOSTILE[4],), namespace="back\\"),
    ]
    (profile,) = profiles.profiles
    backend.load(nodes, [], vectors(nodes, profiles), [profiles.identity(profile)], replace=True)
    stored = {record.node_id: record for record in backend.index_store.get_records(tenant, [n.node_id for n in nodes])}
    assert {n.node_id: (stored[n.node_id].tags, stored[n.node_id].updated_at) for n in nodes} == {
        n.node_id: (n.tags, n.updated_at) for n in nodes
    }
    states = backend.index_store.vector_states(tenant, FAR_PROFILE)
    assert {s.node_id: s.facets for s in states} == {n.node_id: node_facets(n) for n in nodes}
    scope = AccessScope(tenant)
    assert float(FAR) == float(FAR - 1)  # Weaviate keeps both as the same int: the re-check tells them apart
    assert found(backend, FAR_PROFILE, scope, SeedFilter(updated_after=FAR)) == ["far"]
    assert found(backend, FAR_PROFILE, scope, SeedFilter(updated_after=FAR - 1)) == ["almost", "far"]
    assert found(backend, FAR_PROFILE, scope, SeedFilter(updated_after=-(2**62))) == ["almost", "far", "first"]
    for index, name in enumerate(["far", "almost", "first", "first", "untimed"]):
        assert found(backend, FAR_PROFILE, scope, SeedFilter(tags=(HOSTILE[index],))) == [name], HOSTILE[index]
    assert found(backend, FAR_PROFILE, scope, SeedFilter(namespaces=('n"s',))) == ["almost", "far"]
    recency = SeedFilter(updated_after=JAN)
    assert untimed(backend, FAR_PROFILE, scope, SeedFilter(project_key="P", tags=(HOSTILE[4],), updated_after=JAN))
    assert untimed(backend, FAR_PROFILE, scope, SeedFilter(namespaces=("back\\",), updated_after=JAN))
    assert not untimed(backend, FAR_PROFILE, scope, SeedFilter(tags=tuple(HOSTILE[:4]), updated_after=JAN))
    assert not untimed(backend, FAR_PROFILE, scope, SeedFilter(project_key='P"', updated_after=JAN))
    assert untimed(backend, FAR_PROFILE, scope, recency)
    assert not untimed(backend, FAR_PROFILE, AccessScope(tenant + "x"), recency)


def test_a_change_replaces_a_node_facets_and_every_node_read_carries_them(
    backend: Neo4jWeaviateBackend, tenant: str
) -> None:
    nodes = graph(tenant)
    backend.load(nodes, [], [], [], replace=True)
    changed = [replace(nodes[0], namespace=None, tags=("ops",), updated_at=MAR), replace(nodes[2], updated_at=JAN)]
    backend.apply(ChangeSet(upsert_nodes=changed))
    merged = replace(nodes[1], tags=(), updated_at=None)
    backend.load([merged], [], [], [], replace=False)
    expected = {n.node_id: n for n in [changed[0], merged, changed[1], nodes[3]]}
    ids = sorted(expected)
    assert backend.index_store.get_records(tenant, ids) == [expected[node_id] for node_id in ids]
    page = backend.index_store.node_page(tenant, node_types=[ITEM], after=None, limit=10)
    assert page == [expected[node_id] for node_id in ids]
    metadata = backend.graph_store.get_nodes(ids, scope=AccessScope(tenant, all_secured=True))
    assert {n.node_id: (n.namespace, n.tags, n.updated_at) for n in metadata} == {
        n.node_id: (n.namespace, n.tags, n.updated_at) for n in expected.values()
    }
