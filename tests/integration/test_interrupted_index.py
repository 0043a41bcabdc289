"""An index run killed while it writes converges on the next run, on Neo4j + Weaviate: every node is
found by a vector search with its own text, the counts say complete and a further run embeds nothing.

Weaviate stores the objects of an insert batch (properties and content hash included) before it adds
their vectors to its vector index; a batch whose client dies in between leaves objects that a property
filter finds and no vector search reaches, and an upsert of the same vector does not index them
either. The runs here are real ``brain-graph index`` processes, SIGKILLed once a given number of the
tenant's objects is stored (polled, so the kill lands while a page is being written). The repair
path (a plain run, ``--full``, a hook batch, a merge-load) also mends objects written by someone else
that a vector search cannot reach (written without a vector).

Such a run also commits nothing to Neo4j after writing Weaviate, so the copies of the vectors on the
nodes (which expansion scores) can be missing or stale while searches trust them; the next run writes
those vectors anew too.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from typing import Any

import pytest
from weaviate.classes.data import DataObject
from weaviate.classes.query import Filter

from brain_graph.core.filters import SeedFilter
from brain_graph.core.security import AccessScope
from brain_graph.embedding.profiles import default_profiles
from brain_graph.indexing.dataset import GraphRecords, load_dataset
from brain_graph.indexing.hooks import GraphWriter
from brain_graph.indexing.indexer import PAGE_SIZE, Indexer
from brain_graph.pipeline.services import SearchServices
from brain_graph.stores.base import ChangeSet, NodeRecord, VectorQuery
from brain_graph.stores.neo4j_weaviate.backend import Neo4jWeaviateBackend
from brain_graph.stores.neo4j_weaviate.neo4j.vector_copies import copy_bytes, copy_properties, copy_property
from brain_graph.stores.neo4j_weaviate.weaviate.naming import collection_name, tenant_name
from tests.integration.servers import REPO, connect, server_settings, unique_prefix

pytestmark = pytest.mark.integration
PROFILE = "cdm.doc.body"
NODES = 2 * PAGE_SIZE + PAGE_SIZE // 2  # three pages of the indexer
KILL_AT = (1, PAGE_SIZE + 400, 2 * PAGE_SIZE + 200)  # objects stored when a run is killed: one per page
STORED_WITHIN_S = 300  # how long a run may take to store that many (a bound, not a timing)
STATEMENT_TIMEOUT_S = 120  # a statement timeout a busy machine cannot reach, in the test and the indexer
POLL_S = 0.05  # the pause between two counts while a run writes


def word(index: int) -> str:
    """A token only node ``index`` has."""
    return f"zq{index}x{index * 7919 % 100_003}"


def node(tenant: str, index: int) -> NodeRecord:
    return NodeRecord(
        tenant, f"n{index:05d}", "cdm.doc", "P", f"doc {word(index)}", None, text={"body": f"unique {word(index)} body"}
    )


@pytest.fixture
def backend() -> Iterator[Neo4jWeaviateBackend]:
    server = connect(timeout_s=STATEMENT_TIMEOUT_S)
    try:
        yield server
    finally:
        server.close()


def tenant_with_nodes(backend: Neo4jWeaviateBackend, count: int) -> str:
    """A new tenant holding ``count`` documents and no vectors."""
    tenant = unique_prefix("kill") + "t"
    backend.load([node(tenant, index) for index in range(count)], [], [], [], replace=True)
    return tenant


@pytest.fixture
def tenant(backend: Neo4jWeaviateBackend) -> Iterator[str]:
    name = tenant_with_nodes(backend, NODES)
    try:
        yield name
    finally:
        backend.drop_tenants([name])


def index_command(tenant: str, *flags: str) -> list[str]:
    server_settings()  # fails clearly when the servers are not configured
    return [
        sys.executable,
        "-m",
        "brain_graph.cli.main",
        "index",
        "--tenant",
        tenant,
        "--profile",
        PROFILE,
        "--json",
        *flags,
    ]


def child_env() -> dict[str, str]:
    """The indexer's environment: the servers' backend, with a statement timeout a busy machine cannot
    reach (the test is about convergence after a kill, not about a slow server)."""
    return {
        **os.environ,
        "BRAIN_GRAPH_BACKEND": "neo4j-weaviate",
        "BRAIN_GRAPH_BACKEND_TIMEOUT": str(STATEMENT_TIMEOUT_S),
    }


def stored(backend: Neo4jWeaviateBackend, tenant: str) -> int:
    """The tenant's objects in the profile in its current generation (Weaviate's count, reachable or not)."""
    return backend.weaviate.count(tenant, backend.generations.current_generation(tenant)).get(PROFILE, 0)


def kill_when_stored(backend: Neo4jWeaviateBackend, tenant: str, objects: int) -> None:
    """Start ``brain-graph index`` and SIGKILL it as soon as the tenant holds ``objects`` objects."""
    child = subprocess.Popen(
        index_command(tenant), cwd=REPO, env=child_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    try:
        started = time.monotonic()
        while (held := stored(backend, tenant)) < objects:
            if child.poll() is not None:
                pytest.fail(f"the index run ended ({child.returncode}) before {objects} objects were stored")
            if time.monotonic() - started > STORED_WITHIN_S:
                pytest.fail(f"the index run did not store {objects} objects within {STORED_WITHIN_S} s (held {held})")
            time.sleep(POLL_S)
        os.kill(child.pid, signal.SIGKILL)
    finally:
        child.kill()
        child.communicate()


def run_index(tenant: str, *flags: str) -> dict[str, Any]:
    """A whole ``brain-graph index`` run; its JSON report."""
    done = subprocess.run(
        index_command(tenant, *flags), cwd=REPO, env=child_env(), capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr
    report: dict[str, Any] = json.loads(done.stdout)
    return report


def unfound(backend: Neo4jWeaviateBackend, tenant: str, indexes: Sequence[int]) -> list[str]:
    """The nodes among ``indexes`` that a vector search with their own word does not find in its top 3."""
    registry = default_profiles()
    profile = registry.get(PROFILE)
    embedder_name = registry.identity(profile).embedder_name
    vectors = registry.embedders[profile.embedder_id].embed_documents([word(index) for index in indexes])
    scope = AccessScope(tenant, all_secured=True)
    missing = []
    for index, vector in zip(indexes, vectors, strict=True):
        query = VectorQuery(PROFILE, vector, embedder_name)
        hits = backend.vector_index.query([query], scope=scope, seed_filter=SeedFilter(), top_k=3)
        if node(tenant, index).node_id not in {hit.node_id for hit in hits}:
            missing.append(node(tenant, index).node_id)
    return missing


def object_vectors(backend: Neo4jWeaviateBackend, tenant: str) -> dict[str, bytes]:
    """The float32 bytes of the vector of each object of the tenant's current generation, by node id."""
    generation = backend.generations.current_generation(tenant)

    async def op(client: Any) -> dict[str, bytes]:
        collection = client.collections.use(collection_name(PROFILE)).with_tenant(tenant_name(tenant, generation))
        found = await collection.query.fetch_objects(limit=10_000, include_vector=True)
        assert len(found.objects) < 10_000
        return {str(obj.properties["nodeId"]): copy_bytes(obj.vector["default"]) for obj in found.objects}

    return backend.weaviate.connection.call(op, None)


def copies_apart(backend: Neo4jWeaviateBackend, tenant: str) -> list[str]:
    """The nodes whose copy of their vector (on the Neo4j node, which expansion scores) is not the
    vector of their Weaviate object (one missing counts), in a generation whose copies searches trust."""
    rows = backend.neo4j.read(
        "MATCH (t:BrainTenant {tenantId: $tenantId}) MATCH (n:BrainNode) "
        "WHERE n.tenantId = $tenantId AND n.generation = t.generation "
        "RETURN t.vectorCopiesGeneration = t.generation AS trusted, n.nodeId AS nodeId, n[$copy] AS copy",
        {"tenantId": tenant, "copy": copy_property(PROFILE)},
    )
    assert rows
    assert all(row["trusted"] for row in rows)
    copies = {row["nodeId"]: row["copy"] for row in rows}
    objects = object_vectors(backend, tenant)
    return sorted(node_id for node_id in copies.keys() | objects.keys() if copies.get(node_id) != objects.get(node_id))


def assert_complete(backend: Neo4jWeaviateBackend, tenant: str, count: int) -> None:
    """Every node is found by its own word, expansion scores the vector its object holds, and a further
    run embeds nothing."""
    assert unfound(backend, tenant, range(count)) == []
    assert copies_apart(backend, tenant) == []
    again = run_index(tenant)
    assert (again["embedded"], again["unchanged"], again["deleted"]) == (0, count, 0)
    assert stored(backend, tenant) == count


def test_an_index_killed_while_it_writes_converges_on_the_next_run(backend: Neo4jWeaviateBackend, tenant: str) -> None:
    for objects in KILL_AT:
        kill_when_stored(backend, tenant, objects)
    report = run_index(tenant)
    assert report["pending"] == 0
    assert_complete(backend, tenant, NODES)


def test_index_full_mends_what_a_killed_index_left(backend: Neo4jWeaviateBackend, tenant: str) -> None:
    kill_when_stored(backend, tenant, 1)
    report = run_index(tenant, "--full")
    assert (report["embedded"], report["pending"]) == (NODES, 0)
    assert_complete(backend, tenant, NODES)


# -- objects someone else left unreachable -------------------------------------------------------


def strip_vectors(backend: Neo4jWeaviateBackend, tenant: str, indexes: Sequence[int]) -> None:
    """Write the objects of these nodes again with the official client, properties (content hash
    included) as they are and no vector: stored, current by their hash, out of the vector index."""
    generation = backend.generations.current_generation(tenant)
    assert generation is not None
    node_ids = [node(tenant, index).node_id for index in indexes]

    async def op(client: Any) -> None:
        collection = client.collections.use(collection_name(PROFILE)).with_tenant(tenant_name(tenant, generation))
        found = await collection.query.fetch_objects(
            limit=len(node_ids), filters=Filter.by_property("nodeId").contains_any(node_ids)
        )
        assert len(found.objects) == len(node_ids)
        objects = [DataObject(properties=dict(obj.properties), uuid=obj.uuid) for obj in found.objects]
        result = await collection.data.insert_many(objects)
        assert not result.errors

    backend.weaviate.connection.call(op, None)


@pytest.fixture
def small_tenant(backend: Neo4jWeaviateBackend) -> Iterator[str]:
    name = tenant_with_nodes(backend, 8)
    try:
        Indexer(backend, default_profiles()).run([name], [PROFILE])
        assert unfound(backend, name, range(8)) == []
        yield name
    finally:
        backend.drop_tenants([name])


def test_the_repair_path_mends_objects_a_vector_search_cannot_reach(
    backend: Neo4jWeaviateBackend, small_tenant: str
) -> None:
    tenant, registry = small_tenant, default_profiles()
    indexer = Indexer(backend, registry)
    strip_vectors(backend, tenant, [0, 1])
    assert unfound(backend, tenant, range(8)) == [node(tenant, 0).node_id, node(tenant, 1).node_id]
    report = indexer.run([tenant], [PROFILE])
    assert (report.embedded, report.unchanged) == (2, 6)
    assert unfound(backend, tenant, range(8)) == []

    strip_vectors(backend, tenant, [2])
    report = indexer.run([tenant], [PROFILE], full=True)
    assert report.embedded == 8
    assert unfound(backend, tenant, range(8)) == []
    assert indexer.run([tenant], [PROFILE]).embedded == 0


def test_a_hook_batch_and_a_merge_load_mend_the_objects_they_write_again(
    backend: Neo4jWeaviateBackend, small_tenant: str
) -> None:
    tenant, registry = small_tenant, default_profiles()
    strip_vectors(backend, tenant, [3, 4])
    hooked = GraphWriter(SearchServices(backend=backend, profiles=registry)).upsert_nodes([node(tenant, 3)])
    assert hooked.embedded == 1
    merged = load_dataset(GraphRecords([node(tenant, 4)], []), backend, registry, replace=False)
    assert merged.embedded == 1
    assert unfound(backend, tenant, range(8)) == []
    assert Indexer(backend, registry).run([tenant], [PROFILE]).embedded == 0


def test_the_repair_path_mends_copies_apart_from_their_objects(
    backend: Neo4jWeaviateBackend, small_tenant: str
) -> None:
    """What a writer killed between its Weaviate writes and its Neo4j commit leaves, written here with
    plain Cypher: a node without its copy, a copy of another text, a copy on a node without text."""
    tenant = small_tenant
    backend.apply(ChangeSet(upsert_nodes=[NodeRecord(tenant, "bare", "cdm.doc", "P", None, None)]))
    data, secured, acl, content_hash = copy_properties(PROFILE)
    rows = [
        [node(tenant, 5).node_id, dict.fromkeys((data, secured, acl, content_hash))],
        [node(tenant, 6).node_id, {data: copy_bytes([0.5] * 512), content_hash: "stale"}],
        ["bare", {data: copy_bytes([0.5] * 512), secured: False, acl: [], content_hash: "made-elsewhere"}],
    ]
    backend.neo4j.write(
        lambda session: backend.neo4j.commit(
            session,
            "MATCH (t:BrainTenant {tenantId: $tenantId}) UNWIND $rows AS row MATCH (n:BrainNode) "
            "WHERE n.tenantId = $tenantId AND n.generation = t.generation AND n.nodeId = row[0] SET n += row[1]",
            {"tenantId": tenant, "rows": rows},
        )
    )
    assert copies_apart(backend, tenant) == sorted(["bare", node(tenant, 5).node_id, node(tenant, 6).node_id])
    indexer = Indexer(backend, default_profiles())
    report = indexer.run([tenant], [PROFILE])
    assert (report.embedded, report.deleted, report.unchanged) == (2, 1, 6)
    assert copies_apart(backend, tenant) == []
    assert indexer.run([tenant], [PROFILE]).embedded == 0
