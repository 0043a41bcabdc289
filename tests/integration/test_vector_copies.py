"""The vector copies on the Neo4j nodes (:mod:`brain_graph.stores.neo4j_weaviate.neo4j.vector_copies`): the first hop
of a search is scored from them exactly as Weaviate scores it, and only while they cannot differ from
Weaviate; otherwise the search asks Weaviate.

Each test uses a profile of its own (dropping it touches no other test) and tenants of its own."""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Sequence
from dataclasses import replace

import pytest

from brain_graph.core.errors import BackendUnavailableError
from brain_graph.core.filters import SeedFilter
from brain_graph.core.security import AccessScope
from brain_graph.stores import EdgeRecord, NodeRecord, ProfileIndexInfo, VectorHit, VectorQuery, VectorRecord
from brain_graph.stores.base import ChangeSet, Seeds, VectorKey
from brain_graph.stores.neo4j_weaviate.backend import Neo4jWeaviateBackend
from tests.integration.servers import connect, unique_prefix

pytestmark = pytest.mark.integration

LINK = "RELATES_TO"
EMBEDDER = "copies-test"
VECTORS = {
    "hit": [1.0, 0.0, 0.0, 0.0],
    "near": [0.9, 0.1, 0.0, 0.0],
    "far": [0.0, 1.0, 0.5, 0.25],
    "other": [0.3, 0.3, 0.3, 0.3],
}


@pytest.fixture
def backend() -> Iterator[Neo4jWeaviateBackend]:
    server = connect()
    try:
        yield server
    finally:
        server.close()


def records(
    tenant: str, profile: str, vectors: dict[str, list[float]]
) -> tuple[list[NodeRecord], list[EdgeRecord], list[VectorRecord]]:
    """A hit linked to every other node; a vector for each node of ``vectors``."""
    nodes = [NodeRecord(tenant, node_id, "cdm.work_item", "P", node_id, None) for node_id in sorted(VECTORS)]
    edges = [EdgeRecord(tenant, LINK, "hit", node_id) for node_id in sorted(VECTORS) if node_id != "hit"]
    stored = [VectorRecord(tenant, n, profile, "P", False, (), v) for n, v in sorted(vectors.items())]
    return nodes, edges, stored


def seeds(backend: Neo4jWeaviateBackend, tenant: str, profile: str, scope: AccessScope | None = None) -> Seeds:
    query = VectorQuery(profile, VECTORS["hit"], EMBEDDER)
    return backend.search_reads.seeds(
        [query], scope=scope or AccessScope(tenant), seed_filter=SeedFilter(), top_k=1, link_types=[LINK], max_degree=50
    )


def weaviate_scores(
    backend: Neo4jWeaviateBackend,
    tenant: str,
    profile: str,
    *,
    also: Sequence[str] = (),
    scope: AccessScope | None = None,
) -> list[VectorHit]:
    """What Weaviate answers for the hit's neighbours (the round the copies replace)."""
    query = VectorQuery(profile, VECTORS["hit"], EMBEDDER)
    neighbours = sorted({*VECTORS, *also} - {"hit"})
    return backend.search_reads.similarity([query], neighbours, scope=scope or AccessScope(tenant))


def copied_scores(found: Seeds) -> list[VectorHit] | None:
    return None if found.scored is None else found.scored.hits


@pytest.fixture
def profile(backend: Neo4jWeaviateBackend) -> Iterator[ProfileIndexInfo]:
    info = ProfileIndexInfo(f"copies{uuid.uuid4().hex[:6]}.work", EMBEDDER, 4)
    yield info
    backend.admin.drop_profiles([info.profile_id])


def test_a_load_scores_the_first_hop_from_the_copies(backend: Neo4jWeaviateBackend, profile: ProfileIndexInfo) -> None:
    tenant = unique_prefix("copies") + "t"
    try:
        backend.load(*records(tenant, profile.profile_id, VECTORS), [profile], replace=True)
        found = seeds(backend, tenant, profile.profile_id)
        assert [hit.node_id for hit in found.hits] == ["hit"]
        assert found.scored is not None
        assert found.scored.profile_ids == (profile.profile_id,)
        assert copied_scores(found) == weaviate_scores(backend, tenant, profile.profile_id)
        assert [hit.node_id for hit in found.scored.hits] == ["near", "other", "far"]
        # a later hop reads the copies with its links the same way (the frontier's own not again)
        query = VectorQuery(profile.profile_id, VECTORS["hit"], EMBEDDER)
        hop = backend.search_reads.hop([query], ["near"], scope=AccessScope(tenant), edge_types=[LINK], max_degree=50)
        assert [(link.frontier_id, link.neighbor_id) for link in hop.links] == [("near", "hit")]
        assert hop.scored is not None
        assert hop.scored.hits == backend.search_reads.similarity([query], ["hit"], scope=AccessScope(tenant))
        # a generation written before copies existed records no clock: Weaviate scores it
        backend.neo4j.write(
            lambda s: backend.neo4j.commit(
                s, "MATCH (t:BrainTenant {tenantId: $t}) SET t.vectorCopiesClock = null", {"t": tenant}
            )
        )
        assert seeds(backend, tenant, profile.profile_id).scored is None
        hop = backend.search_reads.hop([query], ["near"], scope=AccessScope(tenant), edge_types=[LINK], max_degree=50)
        assert hop.scored is None
    finally:
        backend.admin.drop_tenants([tenant])


def test_copies_of_a_dropped_profile_never_count_again(
    backend: Neo4jWeaviateBackend, profile: ProfileIndexInfo
) -> None:
    tenant = unique_prefix("copies") + "t"
    try:
        backend.load(*records(tenant, profile.profile_id, VECTORS), [profile], replace=True)
        backend.admin.drop_profiles([profile.profile_id])
        # the profile again, with a vector for the hit and one neighbour only: the other neighbours'
        # copies from before the drop are stale (Weaviate has no vector for them now)
        again = {"hit": VECTORS["hit"], "far": VECTORS["far"]}
        _, _, vectors = records(tenant, profile.profile_id, again)
        backend.apply(ChangeSet(upsert_vectors=vectors, profiles=[profile]))
        found = seeds(backend, tenant, profile.profile_id)
        assert found.scored is None  # the generation was made before the drop
        assert [hit.node_id for hit in weaviate_scores(backend, tenant, profile.profile_id)] == ["far"]
        # a replace-load makes a generation whose copies count again
        backend.load(*records(tenant, profile.profile_id, again), [profile], replace=True)
        found = seeds(backend, tenant, profile.profile_id)
        assert copied_scores(found) == weaviate_scores(backend, tenant, profile.profile_id)
        assert [hit.node_id for hit in copied_scores(found) or []] == ["far"]
    finally:
        backend.admin.drop_tenants([tenant])


def test_changes_keep_the_copies_in_step(backend: Neo4jWeaviateBackend, profile: ProfileIndexInfo) -> None:
    tenant = unique_prefix("copies") + "t"
    pid = profile.profile_id
    try:
        nodes, edges, vectors = records(tenant, pid, VECTORS)
        backend.apply(ChangeSet(upsert_nodes=nodes, upsert_edges=edges, upsert_vectors=vectors, profiles=[profile]))
        found = seeds(backend, tenant, pid)  # a generation made by a change records the clock too
        assert copied_scores(found) == weaviate_scores(backend, tenant, pid)
        assert len(copied_scores(found) or []) == 3

        backend.apply(ChangeSet(delete_vectors=[VectorKey(tenant, pid, "near")]))
        moved = VectorRecord(tenant, "far", pid, "P", False, (), [1.0, 0.05, 0.0, 0.0])
        backend.apply(ChangeSet(upsert_vectors=[moved], profiles=[profile]))
        # a node rewritten without vectors keeps its copy, as Weaviate keeps its vector
        backend.apply(ChangeSet(upsert_nodes=[NodeRecord(tenant, "other", "cdm.work_item", "P", "renamed", None)]))
        found = seeds(backend, tenant, pid)
        assert copied_scores(found) == weaviate_scores(backend, tenant, pid)
        assert [hit.node_id for hit in copied_scores(found) or []] == ["far", "other"]

    finally:
        backend.admin.drop_tenants([tenant])


def test_a_failed_change_leaves_the_copies_as_they_were(
    backend: Neo4jWeaviateBackend, profile: ProfileIndexInfo, monkeypatch: pytest.MonkeyPatch
) -> None:
    tenant = unique_prefix("copies") + "t"
    pid = profile.profile_id
    try:
        backend.load(*records(tenant, pid, VECTORS), [profile], replace=True)
        before = copied_scores(seeds(backend, tenant, pid))
        assert before is not None
        moved = ChangeSet(
            upsert_vectors=[VectorRecord(tenant, "far", pid, "P", False, (), [1.0, 0.0, 0.0, 0.1])], profiles=[profile]
        )

        def refused(*_args: object) -> None:
            raise BackendUnavailableError("weaviate", "refused by the test")

        # the Weaviate write fails after the copies were written in the transaction: rolled back
        monkeypatch.setattr(backend.weaviate, "write_changes", refused)
        with pytest.raises(BackendUnavailableError):
            backend.apply(moved)
        assert copied_scores(seeds(backend, tenant, pid)) == before
        assert copied_scores(seeds(backend, tenant, pid)) == weaviate_scores(backend, tenant, pid)

        # ... and when Weaviate cannot be put back either, the stores may differ: copies stop counting
        monkeypatch.setattr(backend.weaviate, "restore", refused)
        with pytest.raises(BackendUnavailableError):
            backend.apply(moved)
        assert seeds(backend, tenant, pid).scored is None
    finally:
        monkeypatch.undo()
        backend.admin.drop_tenants([tenant])


def test_a_merge_load_of_vectors_stops_trusting_the_copies(
    backend: Neo4jWeaviateBackend, profile: ProfileIndexInfo
) -> None:
    tenant = unique_prefix("copies") + "t"
    pid = profile.profile_id
    try:
        nodes, edges, vectors = records(tenant, pid, VECTORS)
        backend.load(nodes, edges, vectors, [profile], replace=True)
        backend.load(nodes[:1], [], [], [profile], replace=False)  # nodes only: the vectors are untouched
        assert seeds(backend, tenant, pid).scored is not None
        backend.load([], [], vectors[:1], [profile], replace=False)  # not atomic across the two stores
        assert seeds(backend, tenant, pid).scored is None
        backend.load(nodes, edges, vectors, [profile], replace=True)
        assert seeds(backend, tenant, pid).scored is not None
    finally:
        backend.admin.drop_tenants([tenant])


def test_a_vector_without_its_node_leaves_the_generation_to_weaviate(
    backend: Neo4jWeaviateBackend, profile: ProfileIndexInfo
) -> None:
    tenant = unique_prefix("copies") + "t"
    pid = profile.profile_id
    try:
        nodes, edges, vectors = records(tenant, pid, VECTORS)
        ghost = VectorRecord(tenant, "later", pid, "P", False, (), [1.0, 0.0, 0.0, 0.0])
        backend.load([n for n in nodes if n.node_id != "other"], edges[:-1], [*vectors, ghost], [profile], replace=True)
        # Weaviate holds the vector of "later", which has no node for its copy: when the node comes
        # (without a vector), Weaviate scores it and a copy could not
        backend.apply(
            ChangeSet(
                upsert_nodes=[NodeRecord(tenant, "later", "cdm.work_item", "P", "later", None)],
                upsert_edges=[EdgeRecord(tenant, LINK, "hit", "later")],
            )
        )
        assert seeds(backend, tenant, pid).scored is None
        assert "later" in [hit.node_id for hit in weaviate_scores(backend, tenant, pid, also=["later"])]
    finally:
        backend.admin.drop_tenants([tenant])


def test_copies_are_filtered_by_the_vectors_own_access(
    backend: Neo4jWeaviateBackend, profile: ProfileIndexInfo
) -> None:
    """Weaviate filters a vector by the access metadata its object carries, which the node's own may
    differ from until the vector is written again: the copies carry and apply the same."""
    tenant = unique_prefix("copies") + "t"
    pid = profile.profile_id
    try:
        nodes, edges, vectors = records(tenant, pid, VECTORS)
        secured = [replace(v, secured=True, acl=("group:g",)) if v.node_id == "near" else v for v in vectors]
        nodes = [replace(n, secured=True, acl=("group:g",)) if n.node_id == "near" else n for n in nodes]
        backend.load(nodes, edges, secured, [profile], replace=True)
        opened = next(replace(n, secured=False, acl=()) for n in nodes if n.node_id == "near")
        backend.apply(ChangeSet(upsert_nodes=[opened]))  # the node opens, its vector stays secured
        for scope in (AccessScope(tenant), AccessScope(tenant, frozenset({"group:g"}))):
            found = seeds(backend, tenant, pid, scope)
            assert found.scored is not None
            assert found.scored.hits == weaviate_scores(backend, tenant, pid, scope=scope)
            assert ("near" in [hit.node_id for hit in found.scored.hits]) == bool(scope.identities)
    finally:
        backend.admin.drop_tenants([tenant])
