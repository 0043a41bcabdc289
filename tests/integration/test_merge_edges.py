"""``brain-graph load --merge`` on both backends: an edge may point at a node already stored in its
tenant (searchable and expanded identically); an edge to a node neither in the file nor stored is
refused with the same one line, and neither store changes."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import pytest

from brain_graph.core.contracts import BrainSearchResult
from brain_graph.core.errors import DatasetError
from brain_graph.embedding.profiles import default_profiles
from brain_graph.graphs.search import build_graph
from brain_graph.indexing.dataset import load_dataset, read_graph
from brain_graph.pipeline.services import SearchServices
from brain_graph.pipeline.state import BrainSearchInput
from brain_graph.stores.base import EdgeRecord, NodeRecord, StorageBackend
from brain_graph.stores.embedded import EmbeddedStore
from tests.helpers import SMALL_GRAPH, edge, node
from tests.integration.servers import connect, run_cli_load, unique_prefix

pytestmark = pytest.mark.integration


def prefixed(prefix: str, nodes: list[dict[str, Any]], edges: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "nodes": [{**n, "tenantId": prefix + n["tenantId"]} for n in nodes],
        "edges": [{**e, "tenantId": prefix + e["tenantId"]} for e in edges],
    }


class Side:
    """One backend with the tenants' data."""

    def __init__(self, backend: StorageBackend, store: Path | None) -> None:
        self.backend, self.store = backend, store

    def load(self, path: Path, *extra: str) -> subprocess.CompletedProcess[str]:
        return run_cli_load(path, "--quiet", *extra, store=self.store)

    def search(self, tenant: str, query: str) -> dict[str, Any]:
        request = {"queryText": query, "filter": {"tenantId": tenant, "secured": False}, "options": {"expandDepth": 1}}
        output = build_graph(SearchServices(backend=self.backend)).invoke(cast(BrainSearchInput, request))
        return BrainSearchResult.model_validate(output).to_wire()

    def state(self, tenants: list[str], query: str) -> list[Any]:
        return [(self.backend.admin.count(t), self.search(t, query)) for t in tenants]


@pytest.fixture
def sides(tmp_path: Path) -> Iterator[tuple[str, list[Side]]]:
    """The small graph loaded into an embedded store and into the servers under fresh tenants."""
    prefix = unique_prefix("fixb-merge")
    base = tmp_path / "base.json"
    base.write_text(json.dumps(prefixed(prefix, SMALL_GRAPH["nodes"], SMALL_GRAPH["edges"])), encoding="utf-8")
    store = tmp_path / "store.sqlite3"
    server = connect()
    try:
        both = [Side(EmbeddedStore(store), store), Side(server, None)]
        for side in both:
            load_dataset(read_graph(base), side.backend, default_profiles())
        yield prefix, both
    finally:
        try:
            server.admin.drop_tenants([prefix + "t1", prefix + "t2"])
        finally:
            server.close()


def test_a_merged_edge_to_a_stored_node_is_searched_and_expanded_alike(
    tmp_path: Path, sides: tuple[str, list[Side]]
) -> None:
    prefix, both = sides
    new = node("t1", "n9", "cdm.work_item", "Quarterly ledger reconciliation", text={"summary": "Ledger work."})
    merge = tmp_path / "merge.json"
    merge.write_text(json.dumps(prefixed(prefix, [new], [edge("t1", "REFERENCES", "n9", "d1")])), encoding="utf-8")
    results = []
    for side in both:
        done = side.load(merge, "--merge")
        assert done.returncode == 0, done.stderr
        results.append(side.search(prefix + "t1", "quarterly ledger reconciliation"))
    assert results[0] == results[1]
    assert results[0]["hits"][0]["nodeId"] == "n9"
    assert {"edgeType": "REFERENCES", "fromNodeId": "n9", "toNodeId": "d1", "properties": {}} in results[0][
        "graphEdges"
    ]


@pytest.mark.parametrize(
    ("nodes", "edges", "line"),
    [
        (
            [node("t1", "n9", "cdm.work_item", "New", text={"summary": "New."})],
            [edge("t1", "REFERENCES", "n9", "d1"), edge("t1", "REFERENCES", "n9", "zz")],
            "error: edge REFERENCES n9 -> zz: no node 'zz' in tenant '{prefix}t1', neither loaded nor stored",
        ),
        (  # a changed node (its stored vector now stale) and an edge to d1, which only t1 holds
            [{**SMALL_GRAPH["nodes"][0], "tenantId": "t2", "id": "w1", "text": {"summary": "Changed."}}],
            [edge("t2", "REFERENCES", "w1", "d1")],
            "error: edge REFERENCES w1 -> d1: no node 'd1' in tenant '{prefix}t2', neither loaded nor stored",
        ),
    ],
    ids=["missing-end", "other-tenant"],
)
def test_an_edge_to_a_node_neither_loaded_nor_stored_changes_nothing(
    tmp_path: Path, sides: tuple[str, list[Side]], nodes: list[dict[str, Any]], edges: list[dict[str, Any]], line: str
) -> None:
    prefix, both = sides
    tenants = [prefix + "t1", prefix + "t2"]
    merge = tmp_path / "merge.json"
    merge.write_text(json.dumps(prefixed(prefix, nodes, edges)), encoding="utf-8")
    for side in both:
        before = side.state(tenants, "token refresh")
        done = side.load(merge, "--merge")
        assert done.returncode == 2
        assert done.stderr.strip().splitlines() == [line.format(prefix=prefix) + " (edges never cross tenants)"]
        assert side.state(tenants, "token refresh") == before


def test_each_backend_checks_the_ends_in_its_merge_write(sides: tuple[str, list[Side]]) -> None:
    """A backend's own merge write (not only the dataset loader) refuses an edge to a missing node, and
    writes an edge to a stored one."""
    prefix, both = sides
    tenant = prefix + "t1"
    new = NodeRecord(tenant, "n9", "cdm.work_item", None, None, None)
    profiles = [default_profiles().identity(p) for p in default_profiles().profiles]
    for side in both:
        before = side.backend.admin.count(tenant)
        with pytest.raises(DatasetError, match=f"no node 'zz' in tenant '{tenant}', neither loaded nor stored"):
            side.backend.load([new], [EdgeRecord(tenant, "REFERENCES", "n9", "zz")], [], profiles, replace=False)
        assert side.backend.admin.count(tenant) == before
        side.backend.load([new], [EdgeRecord(tenant, "REFERENCES", "n9", "d1")], [], profiles, replace=False)
        after = side.backend.admin.count(tenant)
        assert (after.nodes, after.edges) == (before.nodes + 1, before.edges + 1)
