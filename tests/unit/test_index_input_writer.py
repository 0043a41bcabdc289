"""GraphWriter refuses malformed arguments with a typed one-line error, before anything is written."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from brain_graph.core.errors import DatasetError
from brain_graph.indexing.hooks import GraphWriter
from brain_graph.pipeline.services import SearchServices
from brain_graph.stores import write_checks
from brain_graph.stores.embedded.store import EmbeddedStore

IDS = ["a", "ab", "b"]


def _node(node_id: str) -> dict[str, Any]:
    return {"tenantId": "t", "id": node_id, "nodeType": "cdm.work_item", "title": node_id, "text": {"summary": node_id}}


@pytest.fixture
def writer(tmp_path: Path) -> GraphWriter:
    writer = GraphWriter(SearchServices(backend=EmbeddedStore(tmp_path / "store.sqlite3")))
    writer.upsert_nodes([_node(node_id) for node_id in IDS])
    return writer


def _stored(writer: GraphWriter) -> list[str]:
    return sorted(r.node_id for r in writer.services.backend.index_store.get_records("t", [*IDS, "new"]))


def test_a_string_of_node_ids_is_refused_not_read_one_id_per_character(writer: GraphWriter) -> None:
    with pytest.raises(DatasetError, match=r"^node_ids: must be a list of node ids, not a single str$"):
        writer.delete_nodes("t", "ab")  # type: ignore[arg-type]
    assert _stored(writer) == IDS


@pytest.mark.parametrize(
    ("tenant", "ids", "message"),
    [
        (None, ["a"], r"^tenant_id: must be a string \(got NoneType\)$"),
        (5, ["a"], r"^tenant_id: must be a string \(got int\)$"),
        ("t", None, r"^node_ids: must be a list of node ids, not a single NoneType$"),
        ("t", ["a", 5], r"^node_ids\[1\]: must be a string \(got int\)$"),
        ("t", {"a": 1}, r"^node_ids: must be a list of node ids, not a single dict$"),
        ("t\ud800", ["a"], r"tenant 't\\ud800'.*U\+D800"),
        ("t", ["a", "b\ud800"], r"node 'b\\ud800'.*U\+D800"),
    ],
)
def test_bad_delete_arguments_are_typed_errors_and_delete_nothing(
    writer: GraphWriter, tenant: Any, ids: Any, message: str
) -> None:
    with pytest.raises(DatasetError, match=message) as raised:
        writer.delete_nodes(tenant, ids)
    assert "\n" not in str(raised.value)
    assert _stored(writer) == IDS


def test_a_list_of_ids_still_deletes_each_once(writer: GraphWriter) -> None:
    report = writer.delete_nodes("t", ("ab", "ab"))
    assert report.nodes == 1
    assert _stored(writer) == ["a", "b"]


@pytest.mark.parametrize(
    ("nodes", "message"),
    [
        ("abc", r"^nodes: must be a list of nodes \(NodeRecord or dataset-format objects\), not a single str$"),
        (_node("new"), r"^nodes: must be a list of nodes .*, not a single dict$"),
        (None, r"^nodes: must be a list of nodes .*, not a single NoneType$"),
        (["x"], r"^nodes\[0\]: must be a NodeRecord or an object \(got str\)$"),
        ([_node("new"), 5], r"^nodes\[1\]: must be a NodeRecord or an object \(got int\)$"),
    ],
)
def test_bad_nodes_are_typed_errors_and_write_nothing(writer: GraphWriter, nodes: Any, message: str) -> None:
    with pytest.raises(DatasetError, match=message):
        writer.upsert_nodes(nodes)
    assert _stored(writer) == IDS


@pytest.mark.parametrize(
    ("edges", "message"),
    [
        ("REFERENCES", r"^edges: must be a list of edges \(EdgeRecord or dataset-format objects\), not a single str$"),
        (["e"], r"^edges\[0\]: must be an EdgeRecord or an object \(got str\)$"),
    ],
)
def test_bad_edges_are_typed_errors_and_write_nothing(writer: GraphWriter, edges: Any, message: str) -> None:
    with pytest.raises(DatasetError, match=message):
        writer.upsert_nodes([_node("new")], edges=edges)
    with pytest.raises(DatasetError, match=message):
        writer.upsert_edges(edges)
    with pytest.raises(DatasetError, match=message):
        writer.delete_edges(edges)
    assert _stored(writer) == IDS


def test_a_node_given_twice_is_named_and_nothing_is_written(writer: GraphWriter) -> None:
    """The first key given again is named, found in one pass over the keys."""
    nodes = [_node(f"n{index:05d}") for index in range(2_000)] + [_node("n01999"), _node("n00000")]
    with pytest.raises(DatasetError, match=r"^node 'n01999' of tenant 't' is given twice$"):
        writer.upsert_nodes(nodes)
    assert _stored(writer) == IDS


def test_a_hook_write_checks_each_record_once(writer: GraphWriter, monkeypatch: pytest.MonkeyPatch) -> None:
    checked: list[str] = []
    real = write_checks._node_problem

    def counted(node: Any) -> Any:
        checked.append(node.node_id)
        return real(node)

    monkeypatch.setattr(write_checks, "_node_problem", counted)
    writer.upsert_nodes(
        [_node("c"), _node("d")], [{"tenantId": "t", "edgeType": "REFERENCES", "fromNodeId": "c", "toNodeId": "d"}]
    )
    assert checked == ["c", "d"]
    assert "c" in _stored_ids(writer, ["c", "d"])


def _stored_ids(writer: GraphWriter, ids: list[str]) -> list[str]:
    return sorted(r.node_id for r in writer.services.backend.index_store.get_records("t", ids))
