"""The embedded store reads a search's nodes, links, edges and clusters as one row per statement (a
JSON array of the rows): Python's ``sqlite3`` hands the GIL over around every row it steps, and with
concurrent searches each hand-over waits for the GIL. These tests check that the values come back
as they were written, that what an array cannot carry is read row by row, that a warm
search reads at most a few rows per statement, and that the one-row statements cost what the row
statements cost."""

from __future__ import annotations

import itertools
import json
import sqlite3
from pathlib import Path
from typing import Any, cast

import pytest

from brain_graph.core.filters import SeedFilter
from brain_graph.core.passage_heads import read_heads
from brain_graph.core.security import AccessScope
from brain_graph.core.vocabulary import CLUSTER, DOC, IN_CLUSTER
from brain_graph.graphs.search import build_graph
from brain_graph.indexing.dataset import Dataset
from brain_graph.pipeline.services import SearchServices
from brain_graph.pipeline.state import BrainSearchInput
from brain_graph.stores.access import sql_params
from brain_graph.stores.base import EdgeRecord, NodeRecord, VectorQuery
from brain_graph.stores.embedded import EmbeddedStore
from brain_graph.stores.embedded import store as embedded_store
from brain_graph.stores.identity import EmbeddingMismatchError
from tests.helpers import make_store, sqlite_steps

AWKWARD = [
    'quote " and backslash \\ and slash /',
    "new\nline, tab\t, return\r, bell \x07, unit separator \x1f, nul \x00 inside",
    "é ü ß, 中文, עברית, emoji 😀, combining e\u0301, bidi \u202e",
    '{"looks": ["like", "json"]}',
    "[]",
    "",
]
PROJECT = 'P "q" \\ é 😀'


def _awkward_store(path: Path) -> EmbeddedStore:
    """Tenant t: documents whose every text value is one of :data:`AWKWARD`, a cluster of them, and
    edges with properties."""
    store = EmbeddedStore(path)
    nodes = [
        NodeRecord(
            "t",
            f"n{index}",
            DOC,
            PROJECT if index % 2 else None,
            value,
            None if index % 2 else f"https://example.test/{index}?q=%22%5C&r=\u00e9",
            index % 3 == 0,
            (f"user:{value}",) if index % 3 == 0 else (),
            text={"body": value * 400, "summary": value},  # long bodies: read from their stored heads
            properties={"value": value, "index": index, "big": 2**62 + index, "ratio": 0.1 * index, "flag": None},
        )
        for index, value in enumerate(AWKWARD)
    ]
    nodes.append(NodeRecord("t", "cluster", CLUSTER, None, AWKWARD[2], None))
    edges = [EdgeRecord("t", IN_CLUSTER, f"n{index}", "cluster") for index in range(len(AWKWARD))]
    edges += [
        EdgeRecord("t", "REFERENCES", f"n{index}", f"n{index + 1}", {"note": value, "weight": index})
        for index, value in enumerate(AWKWARD[:-1])
    ]
    store.load(nodes, edges, [], [], replace=True)
    return store


def test_values_come_back_as_they_were_written(tmp_path: Path) -> None:
    store = _awkward_store(tmp_path / "store.sqlite3")
    scope = AccessScope("t", identities=frozenset(f"user:{value}" for value in AWKWARD))
    ids = [f"n{index}" for index in range(len(AWKWARD))]

    nodes = {node.node_id: node for node in store.get_nodes([*ids, "cluster"], scope=scope)}
    assert sorted(nodes) == sorted([*ids, "cluster"])
    for index, value in enumerate(AWKWARD):
        node = nodes[f"n{index}"]
        url = None if index % 2 else f"https://example.test/{index}?q=%22%5C&r=\u00e9"
        assert (node.title, node.project_key, node.url) == (value, PROJECT if index % 2 else None, url)
        assert node.secured is (index % 3 == 0)
        assert node.acl == ((f"user:{value}",) if index % 3 == 0 else ())
        assert node.properties == {
            "value": value,
            "index": index,
            "big": 2**62 + index,
            "ratio": 0.1 * index,
            "flag": None,
        }
        assert node.text == {}

    texts = store.get_texts(ids, scope=scope)
    assert texts == {f"n{index}": {"body": value * 400, "summary": value} for index, value in enumerate(AWKWARD)}
    for whole in (False, True):
        heads = store.get_passage_heads(ids, scope=scope, whole=whole)
        assert heads == {node_id: read_heads(DOC, None, fields, whole=whole) for node_id, fields in texts.items()}

    edges = store.edges_among(ids, scope=scope, edge_types=["REFERENCES"])
    assert [(edge.from_node_id, edge.properties) for edge in edges] == [
        (f"n{index}", {"note": value, "weight": index}) for index, value in enumerate(AWKWARD[:-1])
    ]
    around = store.links(ids, scope=scope, edge_types=["REFERENCES", IN_CLUSTER], max_degree=50)
    assert dict(around.degrees)["n1"] == 3  # n0, n2 and the cluster
    memberships = store.cluster_memberships(ids, scope=scope)
    assert [(m.member_id, m.cluster_size) for m in memberships] == [(node_id, len(AWKWARD)) for node_id in ids]
    assert {m.cluster.title for m in memberships if m.cluster is not None} == {AWKWARD[2]}


def test_a_warm_search_reads_one_row_per_statement(
    tmp_path: Path, example_dataset: Dataset, monkeypatch: pytest.MonkeyPatch
) -> None:
    services: SearchServices = make_store(tmp_path, example_dataset)
    graph = build_graph(services)
    request = cast(
        BrainSearchInput,
        {
            "queryText": "token refresh outage",
            "filter": {"tenantId": "acme", "secured": False},
            "options": {"expandDepth": 2},
        },
    )
    first = graph.invoke(request)  # reads the tenant's vectors into memory
    reads: list[tuple[str, int]] = []
    counted = embedded_store.EmbeddedStore._rows

    def counting(self: EmbeddedStore, db: Any, sql: str, params: Any) -> Any:
        rows = counted(self, db, sql, params)
        reads.append((sql, len(rows)))
        return rows

    monkeypatch.setattr(embedded_store.EmbeddedStore, "_rows", counting)
    again = graph.invoke(request)
    assert again == first
    assert len(first["promptPack"]["citations"]) > 3  # a search that reads a lot
    assert len(first["graphEdges"]) > 3
    row_reads = (embedded_store.PASSAGE_HEADS, embedded_store.PASSAGE_TEXTS, embedded_store.TEXTS)
    heads = [count for sql, count in reads if sql in row_reads]
    one_row = [count for sql, count in reads if sql not in row_reads]
    assert heads == [len(first["passages"])]  # the passages' heads, row by row
    assert len(one_row) >= 8
    assert set(one_row) == {1}


HUB_SIZE = 3_000


def _hub_store(path: Path) -> EmbeddedStore:
    """Tenant t: a hub with :data:`HUB_SIZE` neighbours, every one a member of cluster ``c``."""
    store = EmbeddedStore(path)
    nodes = [NodeRecord("t", "hub", DOC, None, "hub", None, text={"body": "hub " * 500})]
    nodes += [NodeRecord("t", f"n{index:05d}", DOC, None, "n", None) for index in range(HUB_SIZE)]
    nodes.append(NodeRecord("t", "c", CLUSTER, None, "c", None))
    edges = [EdgeRecord("t", "REFERENCES", "hub", f"n{index:05d}") for index in range(HUB_SIZE)]
    edges += [EdgeRecord("t", IN_CLUSTER, f"n{index:05d}", "c") for index in range(HUB_SIZE)]
    store.load(nodes, edges, [], [], replace=True)
    return store


def test_aggregated_statements_cost_what_their_rows_cost(tmp_path: Path) -> None:
    store = _hub_store(tmp_path / "store.sqlite3")
    ids = json.dumps(["hub", "n00001", "n00002", "n02999", "c"])
    params = {**sql_params(AccessScope("t")), "ids": ids}
    links = {**params, "frontier": ids, "edge_types": '["REFERENCES", "IN_CLUSTER"]', "row_cap": 102}
    among = {**params, "edge_types": '["REFERENCES", "IN_CLUSTER"]', "cap": 10}
    cases = [
        (embedded_store._NODES, params),
        (embedded_store._LINKS, links),
        (embedded_store._EDGES_AMONG, among),
        (embedded_store._CLUSTER_MEMBERSHIPS, {**params, "membership": IN_CLUSTER, "cluster_type": CLUSTER}),
    ]
    for read, statement_params in cases:
        row_steps, rows = sqlite_steps(store.path, read.rows_sql, statement_params)
        one_steps, [(aggregated,)] = sqlite_steps(store.path, read.one_row_sql, statement_params)
        assert rows
        assert len(json.loads(aggregated)) == len(rows)
        assert one_steps <= row_steps + 1, read.rows_sql  # the same plan: steps in hundreds


def _padded_store(path: Path) -> tuple[EmbeddedStore, list[str]]:
    """Tenant t: six documents of long ids, properties and texts, linked in a chain and members of one
    cluster: each row of a read about 1 KB, the read's rows together several."""
    store = EmbeddedStore(path)
    ids = [f"n{index}-" + "x" * 200 for index in range(6)]
    pad = {"pad": "p" * 600}
    nodes = [
        NodeRecord("t", node_id, DOC, None, "d", None, text={"body": "b" * 600}, properties=pad) for node_id in ids
    ]
    nodes.append(NodeRecord("t", "cluster-" + "c" * 200, CLUSTER, None, "c", None, properties=pad))
    edges = [EdgeRecord("t", IN_CLUSTER, node_id, nodes[-1].node_id) for node_id in ids]
    edges += [EdgeRecord("t", "REFERENCES", source, target, pad) for source, target in itertools.pairwise(ids)]
    store.load(nodes, edges, [], [], replace=True)
    return store, ids


def _aggregated_reads(store: EmbeddedStore, ids: list[str], scope: AccessScope) -> list[Any]:
    """The four reads of a search that return one row."""
    return [
        store.get_nodes(ids, scope=scope),
        store.links(ids, scope=scope, edge_types=["REFERENCES", IN_CLUSTER], max_degree=50),
        store.edges_among(ids, scope=scope, edge_types=["REFERENCES"]),
        store.cluster_memberships(ids, scope=scope),
    ]


def test_rows_too_long_for_one_string_are_read_one_by_one(tmp_path: Path) -> None:
    store, ids = _padded_store(tmp_path / "store.sqlite3")
    scope = AccessScope("t")
    whole = _aggregated_reads(store, ids, scope)
    assert all(whole)
    connection = store._connections.acquire()  # the idle connection the next reads reuse
    connection.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, 2_000)  # each read's array is longer, each row shorter
    store._connections.release(connection)
    counted = store.round_trips()["sqlite"]
    assert _aggregated_reads(store, ids, scope) == whole
    assert store.round_trips()["sqlite"] == counted + 2 * len(whole)  # each read fell back to its rows


def test_values_json_cannot_carry_are_read_row_by_row_as_before(tmp_path: Path) -> None:
    """A store another tool wrote: JSON columns as BLOBs (the row reads decode their bytes), a
    dimension no JSON number spells. Each read gives what its row statement gives."""
    store, ids = _padded_store(tmp_path / "store.sqlite3")
    scope = AccessScope("t")
    whole = _aggregated_reads(store, ids, scope)
    with sqlite3.connect(store.path) as db:
        db.execute("UPDATE nodes SET properties = CAST(properties AS BLOB), acl = CAST(acl AS BLOB)")
        db.execute("UPDATE edges SET properties = CAST(properties AS BLOB)")
        db.execute("INSERT INTO profiles (profile_id, embedder_name, dimension) VALUES ('p', 'e', 1e999)")
        db.execute("UPDATE meta SET value = 'changed' WHERE key = 'data_version'")
    counted = store.round_trips()["sqlite"]
    assert _aggregated_reads(store, ids, scope) == whole
    assert store.round_trips()["sqlite"] == counted + 2 * 3 + 1  # nodes, edges, clusters fell back; links not
    with pytest.raises(EmbeddingMismatchError, match="dimension"):
        store.query([VectorQuery("p", [1.0], "e")], scope=scope, seed_filter=SeedFilter(), top_k=5)
