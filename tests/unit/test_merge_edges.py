"""``brain-graph load --merge`` (embedded): an edge may point at a node already stored in its tenant; an
edge to a node neither in the file nor stored is refused, and the store is left as it was."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, cast

import pytest
from typer.testing import CliRunner

from brain_graph.cli.main import app
from brain_graph.core.contracts import BrainSearchResult
from brain_graph.core.errors import DatasetError
from brain_graph.embedding.profiles import default_profiles
from brain_graph.graphs.search import build_graph
from brain_graph.indexing.dataset import load_dataset, read_graph
from brain_graph.pipeline.services import SearchServices
from brain_graph.pipeline.state import BrainSearchInput
from brain_graph.stores.base import EdgeRecord, NodeRecord
from brain_graph.stores.embedded import EmbeddedStore
from tests.helpers import SMALL_GRAPH, edge, node, request

runner = CliRunner()
NEW = node("t1", "n9", "cdm.work_item", "Quarterly ledger reconciliation", text={"summary": "Ledger reconciliation."})


@pytest.fixture
def store(tmp_path: Path) -> Path:
    dataset = tmp_path / "graph.json"
    dataset.write_text(json.dumps(SMALL_GRAPH), encoding="utf-8")
    path = tmp_path / "store.sqlite3"
    result = runner.invoke(app, ["load", str(dataset), "--store", str(path)])
    assert result.exit_code == 0, result.output
    return path


def write(tmp_path: Path, nodes: list[dict[str, Any]], edges: list[dict[str, Any]]) -> Path:
    path = tmp_path / "merge.json"
    path.write_text(json.dumps({"nodes": nodes, "edges": edges}), encoding="utf-8")
    return path


def search(path: Path, query: str) -> dict[str, Any]:
    output = build_graph(SearchServices(backend=EmbeddedStore(path))).invoke(
        cast(BrainSearchInput, request(query, expandDepth=1))
    )
    return BrainSearchResult.model_validate(output).to_wire()


def test_a_merged_edge_may_point_at_a_stored_node(tmp_path: Path, store: Path) -> None:
    merge = write(tmp_path, [NEW], [edge("t1", "REFERENCES", "n9", "d1")])
    result = runner.invoke(app, ["load", str(merge), "--merge", "--store", str(store)])
    assert result.exit_code == 0, result.output
    assert "loaded 1 nodes, 1 edges" in result.output
    found = search(store, "quarterly ledger reconciliation")
    assert found["hits"][0]["nodeId"] == "n9"
    assert {"edgeType": "REFERENCES", "fromNodeId": "n9", "toNodeId": "d1", "properties": {}} in found["graphEdges"]
    assert "d1" in {n["nodeId"] for n in found["graphNodes"]}


@pytest.mark.parametrize(
    ("nodes", "edges", "missing"),
    [
        ([NEW], [edge("t1", "REFERENCES", "n9", "d1"), edge("t1", "REFERENCES", "n9", "zz")], "zz"),
        ([NEW], [edge("t1", "REFERENCES", "zz", "n9")], "zz"),
        ([NEW], [edge("t2", "REFERENCES", "w1", "d1")], "d1"),  # d1 is stored in t1 only
        # a changed node (its vector stale) with a dangling edge: not even the stale vector goes
        ([{**SMALL_GRAPH["nodes"][0], "text": {"summary": "Changed."}}], [edge("t1", "REFERENCES", "w1", "zz")], "zz"),
    ],
    ids=["one-end-missing", "start-missing", "other-tenant", "with-a-stale-vector"],
)
def test_an_edge_to_a_node_neither_loaded_nor_stored_is_refused_and_nothing_changes(
    tmp_path: Path, store: Path, nodes: list[dict[str, Any]], edges: list[dict[str, Any]], missing: str
) -> None:
    before = store.read_bytes()
    result = runner.invoke(app, ["load", str(write(tmp_path, nodes, edges)), "--merge", "--store", str(store)])
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1, result.output
    assert lines[0].startswith("error: edge REFERENCES")
    assert f"no node {missing!r}" in lines[0]
    assert "neither loaded nor stored" in lines[0]
    assert store.read_bytes() == before


def test_a_replace_load_still_needs_every_end_in_the_file(tmp_path: Path, store: Path) -> None:
    merge = write(tmp_path, [NEW], [edge("t1", "REFERENCES", "n9", "d1")])
    before = store.read_bytes()
    result = runner.invoke(app, ["load", str(merge), "--store", str(store)])
    assert result.exit_code == 2
    assert f"error: {merge}: edge REFERENCES n9 -> d1: no node 'd1' in tenant 't1' (edges never cross tenants)" in (
        result.output
    )
    assert store.read_bytes() == before
    with pytest.raises(DatasetError, match="no node 'd1'"):
        load_dataset(read_graph(merge), EmbeddedStore(store), default_profiles())


def test_the_store_checks_the_ends_inside_its_write(store: Path) -> None:
    """The backend's own merge write refuses a dangling edge (rolled back with the nodes before it)."""
    backend = EmbeddedStore(store)
    before = backend.count("t1")
    new = NodeRecord("t1", "n9", "cdm.work_item", None, None, None)
    with pytest.raises(DatasetError, match="no node 'zz' in tenant 't1', neither loaded nor stored"):
        backend.load([new], [EdgeRecord("t1", "REFERENCES", "n9", "zz")], [], [], replace=False)
    assert backend.count("t1") == before
    backend.load([new], [EdgeRecord("t1", "REFERENCES", "n9", "d1")], [], [], replace=False)
    assert backend.count("t1").edges == before.edges + 1
