"""``apply`` on Neo4j + Weaviate is all or nothing: a failure at any point (a Weaviate write midway, the
Neo4j commit after Weaviate was written, a change larger than Neo4j allows one transaction) leaves both
stores exactly as they were, vectors included; concurrent changes of a new tenant both land."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator
from itertools import pairwise
from typing import Any

import neo4j
import pytest
from neo4j.exceptions import ServiceUnavailable

from brain_graph.core.errors import BackendUnavailableError, CapacityError
from brain_graph.stores.base import (
    ChangeSet,
    EdgeRecord,
    NodeKey,
    NodeRecord,
    ProfileIndexInfo,
    VectorKey,
    VectorRecord,
)
from brain_graph.stores.neo4j_weaviate.backend import Neo4jWeaviateBackend
from brain_graph.stores.neo4j_weaviate.weaviate import schema as weaviate_schema
from brain_graph.stores.neo4j_weaviate.weaviate import writes as weaviate_writes
from brain_graph.stores.neo4j_weaviate.weaviate.changes import WeaviateChanges
from brain_graph.stores.neo4j_weaviate.weaviate.naming import collection_name, tenant_name
from brain_graph.stores.neo4j_weaviate.weaviate.writes import WeaviateWrites
from tests.integration.servers import connect, unique_prefix

pytestmark = pytest.mark.integration
RUN = uuid.uuid4().hex[:6]
WORK, DOC = f"faults{RUN}.work", f"faults{RUN}.doc"
PROFILES = (ProfileIndexInfo(WORK, "fault-embedder", 3), ProfileIndexInfo(DOC, "fault-embedder", 3))
IDS = [f"n{i}" for i in range(8)]


class InjectedError(Exception):
    """The failure a test injects."""


@pytest.fixture(scope="module")
def backend() -> Iterator[Neo4jWeaviateBackend]:
    server = connect()
    try:
        yield server
    finally:
        server.drop_profiles([WORK, DOC])
        server.close()


@pytest.fixture
def tenant(backend: Neo4jWeaviateBackend) -> Iterator[str]:
    """A tenant with nodes n0..n7 (a chain of edges) and vectors in both profiles."""
    name = unique_prefix("af") + "t"
    nodes = [node(name, node_id, f"text {node_id}") for node_id in IDS]
    edges = [EdgeRecord(name, "REFERENCES", a, b, {}) for a, b in pairwise(IDS)]
    vectors = [vector(name, n, p, float(i)) for i, n in enumerate(IDS) for p in (WORK, DOC)]
    backend.load(nodes, edges, vectors, PROFILES, replace=True)
    try:
        yield name
    finally:
        backend.drop_tenants([name])


def node(tenant: str, node_id: str, body: str) -> NodeRecord:
    return NodeRecord(tenant, node_id, "cdm.work_item", "P", f"title {node_id}", None, text={"body": body})


def vector(tenant: str, node_id: str, profile: str, x: float, content_hash: str = "old") -> VectorRecord:
    return VectorRecord(tenant, node_id, profile, "P", False, (), [1.0, x, 0.5], f"{content_hash}-{node_id}")


def weaviate_objects(backend: Neo4jWeaviateBackend, tenant: str) -> dict[tuple[str, str], Any]:
    """Every object of the tenant's current generation in both profiles: (profile, uuid) -> (properties,
    vector)."""
    generation = backend.generations.current_generation(tenant)
    if generation is None:
        return {}

    async def op(client: Any) -> dict[tuple[str, str], Any]:
        found: dict[tuple[str, str], Any] = {}
        for profile in (WORK, DOC):
            collection = client.collections.use(collection_name(profile)).with_tenant(tenant_name(tenant, generation))
            try:
                response = await collection.query.fetch_objects(limit=1000, include_vector=True)
            except Exception as error:
                if "tenant not found" in str(error).lower():
                    continue
                raise
            for obj in response.objects:
                found[(profile, str(obj.uuid))] = (dict(obj.properties), dict(obj.vector))
        return found

    return backend.weaviate.connection.call(op, None)


def everything(backend: Neo4jWeaviateBackend, tenant: str) -> tuple[object, ...]:
    """Both stores' view of the tenant: records, edges, counts, and every Weaviate object with its vector."""
    store = backend.index_store
    records = store.get_records(tenant, [*IDS, "new"])
    return (
        backend.generations.current_generation(tenant),
        records,
        backend.count(tenant),
        store.vector_states(tenant, WORK),
        store.vector_states(tenant, DOC),
        weaviate_objects(backend, tenant),
    )


def big_change(tenant: str) -> ChangeSet:
    """Updates, creations and deletions of nodes, edges and vectors, several Weaviate batches of each."""
    changed = [node(tenant, node_id, f"changed {node_id}") for node_id in IDS[:4]]
    return ChangeSet(
        upsert_nodes=[*changed, node(tenant, "new", "brand new")],
        upsert_edges=[EdgeRecord(tenant, "REFERENCES", "new", "n0", {})],
        delete_edges=[EdgeRecord(tenant, "REFERENCES", "n0", "n1", {})],
        delete_nodes=[NodeKey(tenant, "n6"), NodeKey(tenant, "n7")],
        upsert_vectors=[vector(tenant, n, WORK, 9.0, "new") for n in [*IDS[:4], "new"]],
        delete_vectors=[VectorKey(tenant, DOC, "n4"), VectorKey(tenant, DOC, "n5")],
        profiles=PROFILES,
    )


def fail_call(monkeypatch: pytest.MonkeyPatch, cls: type, name: str, k: int, error: Exception) -> None:
    """The k-th call of ``cls.name`` (an async method) raises ``error``; the others run."""
    original = getattr(cls, name)
    calls = 0

    async def failing(self: Any, *args: Any) -> Any:
        nonlocal calls
        calls += 1
        if calls == k:
            raise error
        return await original(self, *args)

    monkeypatch.setattr(cls, name, failing)


def raise_injected(*_: object) -> None:
    raise InjectedError("injected")


def test_a_weaviate_insert_failing_midway_leaves_both_stores_as_they_were(
    backend: Neo4jWeaviateBackend, tenant: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = everything(backend, tenant)
    monkeypatch.setattr(weaviate_writes, "INSERT_BATCH", 2)  # 3 insert batches
    fail_call(monkeypatch, WeaviateWrites, "insert_batch", 2, InjectedError("insert batch 2"))
    with pytest.raises(InjectedError):
        backend.apply(big_change(tenant))
    monkeypatch.undo()
    assert everything(backend, tenant) == before
    backend.apply(big_change(tenant))  # the same change then succeeds
    after = everything(backend, tenant)
    assert [r.node_id for r in after[1]] == [*IDS[:6], "new"]  # type: ignore[attr-defined]


def test_a_weaviate_delete_failing_leaves_both_stores_as_they_were(
    backend: Neo4jWeaviateBackend, tenant: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = everything(backend, tenant)
    fail_call(monkeypatch, WeaviateWrites, "delete_ids", 2, BackendUnavailableError("weaviate", "injected"))
    with pytest.raises(BackendUnavailableError, match=r"weaviate unavailable: injected$"):
        backend.apply(big_change(tenant))
    monkeypatch.undo()
    assert everything(backend, tenant) == before


def test_a_failed_neo4j_commit_restores_weaviate(
    backend: Neo4jWeaviateBackend, tenant: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = everything(backend, tenant)
    written: list[object] = []

    def commit(self: neo4j.Transaction) -> None:
        written.append(weaviate_objects(backend, tenant))  # what Weaviate holds when Neo4j commits
        raise ServiceUnavailable("injected commit failure")

    monkeypatch.setattr(neo4j.Transaction, "commit", commit)
    with pytest.raises(BackendUnavailableError, match=r"neo4j unavailable.*injected commit failure"):
        backend.apply(big_change(tenant))
    monkeypatch.undo()
    assert written
    assert written[0] != before[-1]  # the vectors had been written
    assert everything(backend, tenant) == before


def test_a_failed_restore_is_named_in_the_original_error(
    backend: Neo4jWeaviateBackend, tenant: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = everything(backend, tenant)
    fail_call(monkeypatch, WeaviateWrites, "insert_batch", 1, BackendUnavailableError("weaviate", "injected"))
    fail_call(monkeypatch, WeaviateChanges, "restore", 1, RuntimeError("restore broke"))
    with pytest.raises(BackendUnavailableError, match=r"injected; restoring Weaviate failed too.*restore broke"):
        backend.apply(big_change(tenant))
    monkeypatch.undo()
    after = everything(backend, tenant)
    assert after[:2] == before[:2]  # Neo4j rolled back (Weaviate may hold part of the change)
    assert (after[2].nodes, after[2].edges) == (before[2].nodes, before[2].edges)  # type: ignore[attr-defined]


def test_a_change_larger_than_a_neo4j_transaction_may_hold_is_a_capacity_error(
    backend: Neo4jWeaviateBackend, tenant: str
) -> None:
    """6,000 nodes with 1,000-entry ACLs (about 200 MB of strings) exceed the test server's transaction
    memory (70% of its 1 GB heap): the caller is told to send less at once, not that Neo4j is down,
    and nothing of the change is written."""
    before = everything(backend, tenant)
    acl = tuple(f"group:member-of-a-long-acl-{index:05d}" for index in range(1_000))
    change = ChangeSet(
        upsert_nodes=[
            NodeRecord(tenant, f"big{index}", "cdm.work_item", "P", f"big {index}", None, True, acl)
            for index in range(6_000)
        ]
    )
    refused = r"^neo4j: .*\(dbms\.memory\.transaction\.[a-z_.]+ reached\); the transaction was rolled back: send less"
    with pytest.raises(CapacityError, match=refused):
        backend.apply(change)
    assert everything(backend, tenant) == before
    backend.apply(big_change(tenant))  # the server is fine: the next change lands


def test_a_failed_change_does_not_create_its_tenant(
    backend: Neo4jWeaviateBackend, monkeypatch: pytest.MonkeyPatch
) -> None:
    tenant = unique_prefix("af") + "new"
    change = ChangeSet(
        upsert_nodes=[node(tenant, "x", "x")], upsert_vectors=[vector(tenant, "x", WORK, 1.0)], profiles=PROFILES
    )
    try:
        monkeypatch.setattr(neo4j.Transaction, "commit", raise_injected)
        with pytest.raises(InjectedError):
            backend.apply(change)
        monkeypatch.undo()
        assert backend.generations.current_generation(tenant) is None
        assert tenant not in backend.index_store.tenants()
        assert backend.weaviate.count(tenant, None) == {}
        backend.apply(change)
        assert backend.index_store.vector_states(tenant, WORK)[0].node_id == "x"
    finally:
        backend.drop_tenants([tenant])


def test_concurrent_changes_of_a_new_tenant_both_land() -> None:
    tenant = unique_prefix("af") + "race"
    backends = [connect(), connect()]
    errors: list[BaseException] = []
    start = threading.Barrier(2)

    def write(index: int) -> None:
        ids = [f"w{index}-{i}" for i in range(20)]
        change = ChangeSet(
            upsert_nodes=[node(tenant, node_id, node_id) for node_id in ids],
            upsert_vectors=[vector(tenant, node_id, WORK, 1.0) for node_id in ids],
            profiles=PROFILES,
        )
        start.wait()
        try:
            backends[index].apply(change)
        except BaseException as error:
            errors.append(error)

    threads = [threading.Thread(target=write, args=(i,)) for i in range(2)]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(120)
        assert errors == []
        store = backends[0].index_store
        assert store.count_nodes(tenant, ["cdm.work_item"]) == 40
        assert len(store.vector_states(tenant, WORK)) == 40
    finally:
        backends[0].drop_tenants([tenant])
        for server in backends:
            server.close()


def test_a_collection_from_before_content_hashes_keeps_working_and_gets_the_property(
    backend: Neo4jWeaviateBackend, monkeypatch: pytest.MonkeyPatch
) -> None:
    tenant = unique_prefix("af") + "old"
    profile = ProfileIndexInfo(f"faults{RUN}.legacy", "fault-embedder", 3)
    original = weaviate_writes.data_object

    def without_hash(record: VectorRecord) -> Any:
        obj = original(record)
        obj.properties.pop("contentHash")
        return obj

    try:
        with monkeypatch.context() as old_version:
            kept = [p for p in weaviate_schema._properties() if p.name != "contentHash"]
            old_version.setattr(weaviate_schema, "_properties", lambda: kept)
            old_version.setattr(weaviate_writes, "data_object", without_hash)
            backend.load(
                [node(tenant, "a", "a")], [], [vector(tenant, "a", profile.profile_id, 1.0)], [profile], replace=True
            )
        assert "contentHash" not in property_names(backend, profile.profile_id)
        assert backend.index_store.vector_states(tenant, profile.profile_id)[0].content_hash == ""
        change = ChangeSet(
            upsert_nodes=[node(tenant, "b", "b")],
            upsert_vectors=[vector(tenant, "b", profile.profile_id, 2.0, "new")],
            profiles=[profile],
        )
        backend.apply(change)
        properties = property_names(backend, profile.profile_id)
        assert properties["contentHash"] == (False, False)  # neither filterable nor searchable
        hashes = [(s.node_id, s.content_hash) for s in backend.index_store.vector_states(tenant, profile.profile_id)]
        assert hashes == [("a", ""), ("b", "new-b")]
    finally:
        backend.drop_tenants([tenant])
        backend.drop_profiles([profile.profile_id])


def property_names(backend: Neo4jWeaviateBackend, profile_id: str) -> dict[str, tuple[bool, bool]]:
    """The properties of a profile's collection: name -> (filterable, searchable)."""

    async def op(client: Any) -> dict[str, tuple[bool, bool]]:
        config = await client.collections.use(collection_name(profile_id)).config.get()
        return {p.name: (p.index_filterable, p.index_searchable) for p in config.properties}

    return backend.weaviate.connection.call(op, None)


@pytest.mark.parametrize("size", [5, 600])
def test_round_trips_of_a_change_do_not_grow_with_its_records(backend: Neo4jWeaviateBackend, size: int) -> None:
    tenant = unique_prefix("af") + "trips"
    ids = [f"r{i:04d}" for i in range(size)]
    seed = ChangeSet(upsert_nodes=[node(tenant, "seed", "seed")], profiles=PROFILES)
    change = ChangeSet(
        upsert_nodes=[node(tenant, node_id, node_id) for node_id in ids],
        upsert_edges=[EdgeRecord(tenant, "REFERENCES", node_id, "seed", {}) for node_id in ids],
        delete_nodes=[NodeKey(tenant, "seed-gone")],
        upsert_vectors=[vector(tenant, node_id, WORK, 1.0) for node_id in ids],
        profiles=PROFILES,
    )
    try:
        backend.apply(seed)  # creates the tenant (and its clean-up)
        before = backend.round_trips()
        backend.apply(change)
        after = backend.round_trips()
        # Neo4j: pointers, delete nodes, merge nodes, merge edges, the vectors' node filters (read back
        # from the graph), the vectors' copies on their nodes; Weaviate: metadata, then per target
        # (collections of every profile for the deleted node) a read, and one insert of the vectors.
        assert after["neo4j"] - before["neo4j"] == 6
        collections = len(backend.weaviate.prepare_changes(()))
        assert after["weaviate"] - before["weaviate"] == 1 + collections + 1
        pages = backend.round_trips()
        listed = backend.index_store.node_page(tenant, node_types=["cdm.work_item"], after=None, limit=10_000)
        states = backend.index_store.vector_states(tenant, WORK)
        assert (len(listed), len(states)) == (size + 1, size)
        done = backend.round_trips()
        # Weaviate: the cursor read (a short page ends it), then the probe of which objects a vector
        # search reaches
        assert (done["neo4j"] - pages["neo4j"], done["weaviate"] - pages["weaviate"]) == (2, 2)
    finally:
        backend.drop_tenants([tenant])
