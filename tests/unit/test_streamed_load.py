"""A dataset file read piece by piece, its records on disk, its vectors made while they are written:
the same records, the same errors and the same store as the whole read and the in-memory load."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from benchmarks.synthetic import synthetic_graph
from brain_graph.core.errors import DatasetError
from brain_graph.embedding.profiles import ProfileRegistry, default_profiles
from brain_graph.indexing import dataset, json_stream
from brain_graph.indexing.dataset import example_dataset_path, load_dataset, read_graph
from brain_graph.indexing.spool import RecordSpool
from brain_graph.stores.embedded import EmbeddedStore
from tests.helpers import SMALL_GRAPH, edge

SYNTHETIC = synthetic_graph(300, seed=3)


@pytest.fixture(params=["whole", "streamed"])
def spooled(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> bool:
    """Both ways of reading a file (streamed: as if it were large, in chunks that split every token)."""
    monkeypatch.setattr(json_stream, "CHUNK_BYTES", 7)
    if request.param == "streamed":
        monkeypatch.setattr(dataset, "SPOOL_BYTES", 0)
    return bool(request.param == "streamed")


def _write(tmp_path: Path, text: str | bytes, name: str = "graph.json") -> Path:
    path = tmp_path / name
    path.write_bytes(text.encode("utf-8") if isinstance(text, str) else text)
    return path


def _outcome(read: Any, path: Path) -> tuple[Any, ...]:
    try:
        graph = read(path)
    except DatasetError as error:
        return ("error", str(error))
    return (list(graph.nodes), list(graph.edges), graph.checked, graph.outside_problem)


def _with(**top: Any) -> dict[str, Any]:
    return {**json.loads(json.dumps(SMALL_GRAPH, ensure_ascii=False)), **top}


def _moved_edges_first() -> str:
    data = _with()
    return json.dumps({"edges": data["edges"], "nodes": data["nodes"]})


GOOD = {
    "small": lambda: json.dumps(SMALL_GRAPH),
    "synthetic": lambda: json.dumps(SYNTHETIC, separators=(",", ":")),
    "pretty, not ASCII": lambda: json.dumps(SMALL_GRAPH, indent=3, ensure_ascii=False).replace("Token", "Tökén 🔑"),
    "byte order mark": lambda: "\ufeff" + json.dumps(SMALL_GRAPH),
    "format version last": lambda: json.dumps({**_with(), "formatVersion": 1}),
    "edges first": _moved_edges_first,
    "empty arrays": lambda: '{"nodes" : [ ] , "edges":[]}',
    "key twice": lambda: json.dumps(SMALL_GRAPH)[:-1] + ', "nodes": []}',  # JSON keeps the last
    "outside edge": lambda: json.dumps(_with(edges=[edge("t1", "REFERENCES", "w1", "elsewhere")])),
}
WHOLE = {"edges first", "key twice"}  # files read the whole way (edges before nodes, a key twice)
BAD = {
    "truncated": lambda: json.dumps(SMALL_GRAPH)[:-40],
    "trailing text": lambda: json.dumps(SMALL_GRAPH) + " x",
    "format version 10": lambda: json.dumps(_with(formatVersion=10)),
    "nodes not a list": lambda: json.dumps(_with(nodes={"a": 1})),
    "no edges": lambda: json.dumps({"nodes": []}),
    "unknown key": lambda: json.dumps(_with(colour="red")),
    "duplicate node": lambda: json.dumps(_with(nodes=[*SMALL_GRAPH["nodes"], SMALL_GRAPH["nodes"][0]])),
    "bad edge type": lambda: json.dumps(_with(edges=[edge("t1", "bad type", "w1", "w2")])),
    "bad node": lambda: json.dumps(_with(nodes=[{**SMALL_GRAPH["nodes"][0], "secured": "yes"}])),
    "bad tenant": lambda: json.dumps(_with(nodes=[{**SMALL_GRAPH["nodes"][0], "tenantId": " t"}], edges=[])),
    "NaN": lambda: json.dumps(SMALL_GRAPH)[:-1] + ', "x": NaN}',
    "long integer": lambda: json.dumps(_with(nodes=[{**SMALL_GRAPH["nodes"][0], "properties": {"n": 10**30}}])),
    "not an object": lambda: "[]",
    "not UTF-8": lambda: json.dumps(SMALL_GRAPH, ensure_ascii=False).replace("Token", "Tökén").encode("latin-1"),
}


@pytest.mark.parametrize("case", sorted(GOOD))
def test_a_streamed_read_gives_the_records_of_the_whole_read(tmp_path: Path, spooled: bool, case: str) -> None:
    path = _write(tmp_path, GOOD[case]())
    streamed = _outcome(read_graph, path)
    assert streamed == _outcome(dataset._whole_graph, path)
    assert streamed[0] != "error"
    if spooled and case not in WHOLE:
        assert isinstance(read_graph(path).nodes, RecordSpool)


@pytest.mark.parametrize("case", sorted(BAD))
def test_a_bad_file_gives_the_error_of_the_whole_read(tmp_path: Path, spooled: bool, case: str) -> None:
    payload = BAD[case]()
    path = _write(tmp_path, payload)
    streamed = _outcome(read_graph, path)
    assert streamed == _outcome(dataset._whole_graph, path)
    assert streamed[0] == "error"


def test_the_example_dataset_reads_the_same_both_ways() -> None:
    path = example_dataset_path()
    assert _outcome(read_graph, path) == _outcome(dataset._whole_graph, path)


def test_a_spool_reads_back_in_key_order_ties_in_arrival_order() -> None:
    spool: RecordSpool[str] = RecordSpool(2)
    for key, record in [(("b", "1"), "b1"), (("a", "2"), "a2-first"), (("a", "10"), "a10"), (("a", "2"), "a2-then")]:
        spool.add(key, record, kind=record[0])
    spool.seal()
    assert list(spool) == ["a10", "a2-first", "a2-then", "b1"]
    assert len(spool) == 4
    assert (spool[0], spool[-1], spool[1:3]) == ("a10", "b1", ["a2-first", "a2-then"])
    assert list(spool.of_kinds(["b"])) == ["b1"]
    assert list(spool.in_arrival_order()) == ["b1", "a2-first", "a10", "a2-then"]
    assert spool.tenants == {"a", "b"}
    with pytest.raises(IndexError):
        spool[4]
    spool.close()


def _rows(path: Path) -> dict[str, list[tuple[Any, ...]]]:
    """Every table's rows in rowid order (the metadata's random version tokens left out)."""
    with sqlite3.connect(path) as db:
        names = [row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name != 'meta'")]
        return {name: db.execute(f"SELECT rowid, * FROM {name} ORDER BY rowid").fetchall() for name in names}


def test_a_spooled_streamed_load_writes_the_store_of_the_in_memory_load(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _write(tmp_path, GOOD["synthetic"]())
    profiles = default_profiles()
    in_memory = EmbeddedStore(tmp_path / "memory.sqlite3")
    whole = dataset._whole_graph(path)
    vectors = dataset.embed_nodes(whole.nodes, profiles)
    in_memory.load(whole.nodes, whole.edges, vectors, dataset.index_info(profiles), replace=True)
    monkeypatch.setattr(dataset, "SPOOL_BYTES", 0)
    streamed = EmbeddedStore(tmp_path / "streamed.sqlite3")
    report = load_dataset(read_graph(path), streamed, profiles)
    assert report.embedded == len(vectors)
    assert _rows(tmp_path / "streamed.sqlite3") == _rows(tmp_path / "memory.sqlite3")


def _failing(profiles: ProfileRegistry) -> ProfileRegistry:
    class Down(type(profiles.embedders["default"])):  # type: ignore[misc]
        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            raise RuntimeError("provider down")

        embed_documents_array = None

    return ProfileRegistry(profiles.profiles, {"default": Down()})


def test_a_streamed_load_that_fails_while_writing_leaves_the_store_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(dataset, "SPOOL_BYTES", 0)
    store_path = tmp_path / "store.sqlite3"
    profiles = default_profiles()
    load_dataset(read_graph(_write(tmp_path, GOOD["small"](), "old.json")), EmbeddedStore(store_path), profiles)
    before = _rows(store_path)
    changed = json.dumps(_with(nodes=[{**n, "title": "Renamed"} for n in SMALL_GRAPH["nodes"]]))
    with pytest.raises(DatasetError, match="the embedder failed on every text"):
        load_dataset(read_graph(_write(tmp_path, changed, "new.json")), EmbeddedStore(store_path), _failing(profiles))
    assert _rows(store_path) == before
