"""The embedded store's facets: stored with nodes and vectors (schema version 5); a store written
before them reads without them and its next index run brings every vector in step, once; a failed
write to such a store keeps its data; a node's facet change makes the indexer rewrite that vector
alone."""

from __future__ import annotations

import copy
import sqlite3
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from brain_graph.core import bm25
from brain_graph.core.errors import DatasetError
from brain_graph.core.filters import NodeFacets, SeedFilter, parse_timestamp
from brain_graph.core.security import AccessScope
from brain_graph.indexing.indexer import Indexer
from brain_graph.pipeline.services import SearchServices
from brain_graph.stores.base import ChangeSet, EdgeRecord, LexicalQuery, NodeRecord, VectorQuery, node_facets
from brain_graph.stores.embedded import EmbeddedStore
from brain_graph.stores.embedded.schema import table_columns
from brain_graph.stores.embedded.vectors import VectorCache
from tests.helpers import SMALL_GRAPH, make_store

WORK = "cdm.work.summary"
FACET_COLUMNS = {
    "nodes": ("namespace", "tags", "updated_at"),
    "vectors": ("node_type", "namespace", "tags", "updated_at"),
}
SERVICE = AccessScope("t1", all_secured=True)
FACETS: dict[str, dict[str, Any]] = {
    "w1": {"tags": ["Auth", "sev1"], "updatedAt": "2026-01-05"},
    "w2": {"tags": ["auth"], "namespace": "Metrics", "updatedAt": "2026-02-01T10:00:00Z"},
    "d1": {"tags": ["design"]},
}


def faceted_graph() -> dict[str, Any]:
    """:data:`SMALL_GRAPH` with tags, namespaces and update times on some nodes."""
    graph = copy.deepcopy(SMALL_GRAPH)
    for item in graph["nodes"]:
        if item["tenantId"] == "t1":
            item.update(FACETS.get(item["id"], {}))
    return graph


def as_older_store(path: Path) -> None:
    """Make the store at ``path`` one written before facets existed (schema version 4)."""
    with sqlite3.connect(path) as db:
        for table, columns in FACET_COLUMNS.items():
            for column in columns:
                db.execute(f"ALTER TABLE {table} DROP COLUMN {column}")
        db.execute("UPDATE meta SET value = '4' WHERE key = 'schema_version'")


def facet_columns(path: Path) -> dict[str, set[str]]:
    with sqlite3.connect(path) as db:
        return {table: table_columns(db, table) & set(columns) for table, columns in FACET_COLUMNS.items()}


def opened(path: Path) -> EmbeddedStore:
    store = EmbeddedStore(path)
    store.vector_cache = VectorCache(2**26)
    return store


def states(store: EmbeddedStore, services: SearchServices) -> dict[str, dict[str, Any]]:
    """Every t1 vector state by profile, then node id."""
    return {
        profile.profile_id: {
            state.node_id: state for state in store.index_store.vector_states("t1", profile.profile_id)
        }
        for profile in services.profiles.profiles
    }


def work_query(services: SearchServices) -> VectorQuery:
    identity = services.profiles.identity(services.profiles.get(WORK))
    return VectorQuery(WORK, [1.0] * identity.dimension, identity.embedder_name)


def test_nodes_and_vectors_store_their_facets(tmp_path: Path) -> None:
    services = make_store(tmp_path, faceted_graph())
    store = opened(tmp_path / "store.sqlite3")
    ids = [item["id"] for item in SMALL_GRAPH["nodes"] if item["tenantId"] == "t1"]
    records = {node.node_id: node for node in store.index_store.get_records("t1", ids)}
    assert (records["w1"].tags, records["w1"].updated_at) == (("Auth", "sev1"), parse_timestamp("2026-01-05"))
    assert (records["w2"].namespace, records["w2"].tags) == ("Metrics", ("auth",))
    assert (records["c1"].namespace, records["c1"].tags, records["c1"].updated_at) == (None, (), None)
    assert {node.node_id: node for node in store.get_nodes(ids, scope=SERVICE)} == {
        node_id: replace(node, text={}) for node_id, node in records.items()
    }
    stored = {
        node_id: state.facets for by_node in states(store, services).values() for node_id, state in by_node.items()
    }
    assert stored == {node_id: node_facets(records[node_id]) for node_id in ("w1", "w2", "w3", "d1", "d2", "c1")}
    assert stored["w2"] == NodeFacets("cdm.work_item", "metrics", ("auth",), records["w2"].updated_at)
    assert stored["c1"] == NodeFacets("code.file", "auth", (), None)  # code.file: its title is its path


def test_an_older_store_reads_without_facets_until_its_next_index_run(tmp_path: Path) -> None:
    services = make_store(tmp_path, SMALL_GRAPH)
    path = tmp_path / "store.sqlite3"
    as_older_store(path)
    store = opened(path)
    records = store.index_store.get_records("t1", ["w1", "d1", "c1"])
    assert [(node.namespace, node.tags, node.updated_at) for node in records] == [(None, (), None)] * 3
    assert [node.node_id for node in store.get_nodes(["w1", "d1"], scope=SERVICE)] == ["d1", "w1"]
    memberships = store.cluster_memberships(["w1"], scope=SERVICE)
    assert {membership.cluster_id for membership in memberships} == {"k1", "k2"}
    before = states(store, services)
    assert sum(len(by_node) for by_node in before.values()) == 6  # t1's nodes with text in a profile
    assert {state.facets for by_node in before.values() for state in by_node.values()} == {NodeFacets()}
    query = work_query(services)
    assert {hit.node_id for hit in store.query([query], scope=SERVICE, seed_filter=SeedFilter(), top_k=10)} == {
        "w1",
        "w2",
        "w3",
    }
    typed = SeedFilter(node_types=("cdm.work_item",))  # an older vector has no node type until indexed again
    assert store.query([query], scope=SERVICE, seed_filter=typed, top_k=10) == []
    lexical = [LexicalQuery(WORK, bm25.query_terms("token refresh"))]
    assert store.lexical(lexical, scope=SERVICE, seed_filter=SeedFilter(), top_k=10)
    assert store.lexical(lexical, scope=SERVICE, seed_filter=typed, top_k=10) == []
    assert store.untimed([WORK], scope=SERVICE, seed_filter=SeedFilter(updated_after=0))  # the cached matrix
    assert opened(path).untimed([WORK], scope=SERVICE, seed_filter=SeedFilter(updated_after=0))  # a facet table
    assert facet_columns(path) == {"nodes": set(), "vectors": set()}  # reads never write

    first = Indexer(store, services.profiles).run(["t1"])
    assert (first.embedded, first.unchanged) == (6, 0)
    assert facet_columns(path) == {table: set(columns) for table, columns in FACET_COLUMNS.items()}
    after = states(store, services)
    for profile_id, by_node in after.items():
        assert by_node.keys() == before[profile_id].keys()
        for node_id, state in by_node.items():
            [node] = store.index_store.get_records("t1", [node_id])
            assert state.facets == node_facets(node)
            assert state.content_hash == before[profile_id][node_id].content_hash
    assert {hit.node_id for hit in store.query([query], scope=SERVICE, seed_filter=typed, top_k=10)} == {
        "w1",
        "w2",
        "w3",
    }
    second = Indexer(store, services.profiles).run(["t1"])
    assert (second.embedded, second.unchanged) == (0, 6)


def test_a_failed_write_to_an_older_store_keeps_its_data(tmp_path: Path) -> None:
    services = make_store(tmp_path, SMALL_GRAPH)
    path = tmp_path / "store.sqlite3"
    as_older_store(path)
    store = opened(path)
    ids = [item["id"] for item in SMALL_GRAPH["nodes"] if item["tenantId"] == "t1"]

    def everything() -> tuple[object, ...]:
        return (store.index_store.get_records("t1", [*ids, "new"]), states(store, services), store.count("t1"))

    before = everything()
    new = NodeRecord("t1", "new", "cdm.work_item", "P", "New", None, tags=("x",), updated_at=1)
    dangling = EdgeRecord("t1", "REFERENCES", "new", "missing", {})
    with pytest.raises(DatasetError):
        store.apply(ChangeSet(upsert_nodes=[new], upsert_edges=[dangling]))
    assert everything() == before


def test_a_changed_facet_makes_the_indexer_rewrite_that_vector_alone(tmp_path: Path) -> None:
    services = make_store(tmp_path, faceted_graph())
    store = opened(tmp_path / "store.sqlite3")
    indexer = Indexer(store, services.profiles)
    assert indexer.run(["t1"]).embedded == 0  # the load wrote every vector with its node's facets
    before = states(store, services)
    [w2] = store.index_store.get_records("t1", ["w2"])
    changed = replace(w2, tags=("Billing", "auth"))
    store.apply(ChangeSet(upsert_nodes=[changed]))
    assert before[WORK]["w2"].facets != node_facets(changed)  # the vector has its old facets until indexed

    report = indexer.run(["t1"])
    assert (report.embedded, report.unchanged, report.deleted) == (1, 5, 0)
    after = states(store, services)
    assert after[WORK]["w2"] == replace(before[WORK]["w2"], facets=node_facets(changed))
    after[WORK]["w2"] = before[WORK]["w2"]
    assert after == before  # nothing else changed
    billing = SeedFilter(tags=("billing",))
    hits = store.query([work_query(services)], scope=SERVICE, seed_filter=billing, top_k=5)
    assert [hit.node_id for hit in hits] == ["w2"]
