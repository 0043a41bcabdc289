"""A hub's edges are never all read: each direction of a frontier node is read no further than
counting past ``max_degree`` needs, so the work of ``links`` on a hub does not grow with its size
(measured in SQLite virtual machine steps, not time). The same holds for the edges among admitted
nodes when a hub is one of them (the figures: docs/internals/embedded-store.md)."""

from __future__ import annotations

import json
from pathlib import Path

from brain_graph.core.security import AccessScope
from brain_graph.stores.access import sql_params
from brain_graph.stores.base import EdgeRecord, NodeRecord
from brain_graph.stores.embedded import EmbeddedStore
from brain_graph.stores.embedded.store import EDGES_AMONG, LINKS
from tests.helpers import sqlite_steps

TYPES = ["REFERENCES", "DEPENDS_ON"]


def _hub_store(path: Path, size: int) -> EmbeddedStore:
    """Tenant t: node ``hub`` with ``size`` neighbours (out-edges of both types, and as many in-edges)."""
    store = EmbeddedStore(path)
    nodes = [NodeRecord("t", "hub", "cdm.doc", None, "hub", None)]
    nodes += [NodeRecord("t", f"n{index:05d}", "cdm.doc", None, "n", None) for index in range(size)]
    edges = [EdgeRecord("t", edge_type, "hub", f"n{index:05d}") for index in range(size) for edge_type in TYPES]
    edges += [EdgeRecord("t", "REFERENCES", f"n{index:05d}", "hub") for index in range(size)]
    store.load(nodes, edges, [], [], replace=True)
    return store


def _steps(path: Path, max_degree: int) -> tuple[int, int]:
    """SQLite virtual machine steps (in hundreds) of :data:`LINKS` for the frontier [hub], and how many
    edges of the hub it returned."""
    params = {
        **sql_params(AccessScope("t")),
        "frontier": '["hub"]',
        "edge_types": f'["{TYPES[0]}", "{TYPES[1]}"]',
        "row_cap": (max_degree + 1) * len(TYPES),
    }
    steps, [(_, outgoing, incoming)] = sqlite_steps(path, LINKS, params)
    return steps, len(json.loads(outgoing)) + len(json.loads(incoming))


def test_reading_a_hub_costs_as_much_whatever_its_size(tmp_path: Path) -> None:
    small = _hub_store(tmp_path / "small.sqlite3", 200)
    large = _hub_store(tmp_path / "large.sqlite3", 4_000)
    small_steps, small_edges = _steps(small.path, max_degree=50)
    large_steps, large_edges = _steps(large.path, max_degree=50)
    assert small_edges == large_edges == 2 * 51 * len(TYPES)  # each direction cut at its cap
    assert large_steps < 2 * small_steps  # not 20 times the work for 20 times the edges
    every_steps, every_edges = _steps(large.path, max_degree=10_000)  # what reading every edge costs
    assert every_edges == 3 * 4_000
    assert 10 * large_steps < every_steps


def test_links_of_a_hub_and_of_small_nodes(tmp_path: Path) -> None:
    store = _hub_store(tmp_path / "store.sqlite3", 300)
    scope = AccessScope("t")
    around = store.links(["hub", "n00007"], scope=scope, edge_types=TYPES, max_degree=50)
    assert dict(around.degrees) == {"hub": 51, "n00007": 1}
    assert {link.frontier_id for link in around.links} == {"n00007"}  # the hub is counted, not listed
    assert len(around.links) == 3  # n00007's edges with the hub: 2 in, 1 out
    opened = store.links(["hub"], scope=scope, edge_types=TYPES, max_degree=300)
    assert dict(opened.degrees) == {"hub": 300}
    assert len(opened.links) == 900


def _among_steps(path: Path, ids: list[str]) -> tuple[int, list[tuple[str, str, str]]]:
    """SQLite virtual machine steps (in hundreds) of :data:`EDGES_AMONG` for ``ids``, and the edges."""
    params = {
        **sql_params(AccessScope("t")),
        "edge_types": json.dumps(TYPES),
        "ids": json.dumps(ids),
        "cap": len(ids) * len(TYPES),
    }
    steps, rows = sqlite_steps(path, EDGES_AMONG, params)
    return steps, sorted((edge_type, source, target) for edge_type, source, target, _ in rows)


ADMITTED = ["hub", "n00003", "n00010", "n00150", "missing"]


def test_edges_among_an_admitted_hub_cost_as_much_whatever_its_size(tmp_path: Path) -> None:
    small = _hub_store(tmp_path / "small.sqlite3", 200)
    large = _hub_store(tmp_path / "large.sqlite3", 4_000)
    small_steps, small_edges = _among_steps(small.path, ADMITTED)
    large_steps, large_edges = _among_steps(large.path, ADMITTED)
    expected = sorted(
        [(edge_type, "hub", node) for node in ("n00003", "n00010", "n00150") for edge_type in TYPES]
        + [("REFERENCES", node, "hub") for node in ("n00003", "n00010", "n00150")]
    )
    assert small_edges == large_edges == expected
    assert large_steps < 2 * small_steps  # not 20 times the work for 20 times the edges


def test_edges_among_small_nodes_and_a_hub_through_the_store(tmp_path: Path) -> None:
    store = _hub_store(tmp_path / "store.sqlite3", 300)
    edges = store.edges_among(["n00007", "hub", "n00007", "n00299"], scope=AccessScope("t"), edge_types=TYPES)
    assert [(e.edge_type, e.from_node_id, e.to_node_id) for e in edges] == sorted(
        [(edge_type, "hub", node) for node in ("n00007", "n00299") for edge_type in TYPES]
        + [("REFERENCES", node, "hub") for node in ("n00007", "n00299")],
        key=lambda edge: (edge[0], edge[1], edge[2]),  # edge_sort_key
    )
    assert store.edges_among(["hub", "n00007"], scope=AccessScope("other"), edge_types=TYPES) == []
