"""Dataset loading: validation, idempotency and atomicity of the embedded store."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from brain_graph.core.contracts import BrainSearchResult
from brain_graph.core.errors import DatasetError
from brain_graph.embedding.profiles import ProfileRegistry
from brain_graph.graphs.search import build_graph
from brain_graph.indexing.dataset import Dataset, embed_nodes, index_info, load_dataset, read_dataset
from brain_graph.indexing.indexer import Indexer
from brain_graph.pipeline.services import SearchServices
from brain_graph.stores.base import VectorRecord
from brain_graph.stores.embedded import EmbeddedStore
from tests.helpers import SMALL_GRAPH, edge, make_store, request

ROOT = Path(__file__).resolve().parents[1]


def search_wire(services: SearchServices) -> dict[str, object]:
    output = build_graph(services).invoke(request("token refresh", expandDepth=2))
    return BrainSearchResult.model_validate(output).to_wire()


def test_loading_twice_gives_the_same_result(tmp_path: Path) -> None:
    services = make_store(tmp_path, SMALL_GRAPH)
    first = search_wire(services)
    load_dataset(Dataset.model_validate(SMALL_GRAPH), services.backend, services.profiles)
    assert search_wire(services) == first


CRASH_DURING_LOAD = """
import os, sys
from brain_graph.indexing.dataset import Dataset, embed_nodes, index_info
from brain_graph.embedding.profiles import default_profiles
from brain_graph.stores.base import VectorRecord
from brain_graph.stores.embedded import EmbeddedStore
from tests.helpers import SMALL_GRAPH

class CrashingVector:
    # passes the checks before the write (first iteration), kills the process while it is written

    def __init__(self, values):
        self.values, self.reads = list(values), 0

    def __len__(self):
        return len(self.values)

    def __iter__(self):
        self.reads += 1
        if self.reads > 1:
            os._exit(3)  # the process dies mid-transaction: no rollback, no cleanup
        return iter(self.values)


data = Dataset.model_validate(SMALL_GRAPH | {"nodes": [dict(n, title="Renamed") for n in SMALL_GRAPH["nodes"]]})
registry = default_profiles()
nodes = data.node_records()
vectors = embed_nodes(nodes, registry)
vectors[-1] = VectorRecord(**{**vectors[-1].__dict__, "vector": CrashingVector(vectors[-1].vector)})
EmbeddedStore(sys.argv[1]).load(nodes, data.edge_records(), vectors, index_info(registry), replace=True)
"""


def test_a_load_killed_mid_write_keeps_the_previous_contents(tmp_path: Path) -> None:
    services = make_store(tmp_path, SMALL_GRAPH)
    before = search_wire(services)
    store_path = str(tmp_path / "store.sqlite3")
    crashed = subprocess.run([sys.executable, "-c", CRASH_DURING_LOAD, store_path], check=False, cwd=ROOT)
    assert crashed.returncode == 3
    assert search_wire(services) == before
    assert "Renamed" not in json.dumps(before)


class FailsWhenWritten:
    """A vector that passes the checks before the write, then fails while it is written."""

    def __init__(self, values: Sequence[float]) -> None:
        self.values, self.reads = list(values), 0

    def __len__(self) -> int:
        return len(self.values)

    def __iter__(self) -> Iterator[float]:
        self.reads += 1
        if self.reads > 1:
            raise OSError("disk gone")
        return iter(self.values)


def test_a_failing_write_rolls_back(tmp_path: Path) -> None:
    services = make_store(tmp_path, SMALL_GRAPH)
    before = search_wire(services)
    store = services.backend
    data = Dataset.model_validate(SMALL_GRAPH | {"nodes": [dict(n, title="Renamed") for n in SMALL_GRAPH["nodes"]]})
    nodes = data.node_records()
    vectors = embed_nodes(nodes, services.profiles)
    vectors[-1] = VectorRecord(**{**vectors[-1].__dict__, "vector": FailsWhenWritten(vectors[-1].vector)})  # type: ignore[arg-type]
    with pytest.raises(OSError, match="disk gone"):
        store.load(nodes, data.edge_records(), vectors, index_info(services.profiles), replace=True)
    assert search_wire(services) == before


def test_a_vector_of_the_wrong_dimension_is_refused_before_writing(tmp_path: Path) -> None:
    services = make_store(tmp_path, SMALL_GRAPH)
    before = search_wire(services)
    data = Dataset.model_validate(SMALL_GRAPH | {"nodes": [dict(n, title="Renamed") for n in SMALL_GRAPH["nodes"]]})
    bad_vector = VectorRecord("t1", "w1", "cdm.work.summary", "P", False, (), [0.5])
    with pytest.raises(DatasetError, match="dimension 1"):
        services.backend.load(
            data.node_records(), data.edge_records(), [bad_vector], index_info(services.profiles), replace=True
        )
    assert search_wire(services) == before


def _failing_on(services: SearchServices, word: str | None) -> ProfileRegistry:
    """The services' profiles with an embedder that fails on texts holding ``word`` (on all when None)."""

    class Broken(type(services.profiles.embedders["default"])):  # type: ignore[misc]
        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            if word is None or any(word in text for text in texts):
                raise RuntimeError("provider down")
            return super().embed_documents(texts)

        embed_documents_array = None  # the loader must fall back to embed_documents

    return services.profiles.__class__(services.profiles.profiles, {"default": Broken()})


def test_a_failing_embedder_still_writes_the_nodes_and_reports_them_pending(tmp_path: Path) -> None:
    services = make_store(tmp_path, SMALL_GRAPH)
    healthy = search_wire(services)
    assert healthy["hits"]
    dataset = Dataset.model_validate(SMALL_GRAPH)
    report = load_dataset(dataset, services.backend, _failing_on(services, "refresh"))
    assert report.pending > 0
    assert report.embedded > 0
    assert report.nodes == len(dataset.nodes)
    degraded = search_wire(services)
    assert degraded != healthy  # the nodes about "refresh" are no vector hits until indexed
    recovered = Indexer(services.backend, services.profiles).run()
    assert (recovered.embedded, recovered.pending) == (report.pending, 0)
    assert search_wire(services) == healthy


def test_an_embedder_that_fails_on_every_text_writes_nothing(tmp_path: Path) -> None:
    services = make_store(tmp_path, SMALL_GRAPH)
    before = search_wire(services)
    with pytest.raises(DatasetError, match="the embedder failed on every text"):
        load_dataset(Dataset.model_validate(SMALL_GRAPH), services.backend, _failing_on(services, None))
    assert search_wire(services) == before


def test_a_merge_load_is_incremental_and_leaves_no_stale_vector(tmp_path: Path) -> None:
    services = make_store(tmp_path, SMALL_GRAPH)
    first = SMALL_GRAPH["nodes"][0]
    changed = {**first, "nodeType": "cdm.doc", "secured": True, "acl": ["user:alice"], "title": "", "text": {}}
    merged = load_dataset(
        Dataset.model_validate({"nodes": [changed], "edges": []}), services.backend, services.profiles, replace=False
    )
    assert merged.deleted == 1  # its vector as a work item
    states = services.backend.index_store.vector_states(first["tenantId"], "cdm.work.summary")
    assert first["id"] not in {s.node_id for s in states}
    again = load_dataset(Dataset.model_validate(SMALL_GRAPH), services.backend, services.profiles, replace=False)
    assert again.unchanged > 0
    assert again.embedded == 1  # only the node changed back


def test_an_empty_store_gives_an_empty_result(tmp_path: Path) -> None:
    services = SearchServices(backend=EmbeddedStore(tmp_path / "never-written.sqlite3"))
    result = BrainSearchResult.model_validate(build_graph(services).invoke(request("anything")))
    assert result.hits == []
    assert result.prompt_pack.citations == []
    assert result.candidates == []
    assert "_No sources._" in result.prompt_pack.context_markdown


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda d: d["edges"].append(edge("t1", "REFERENCES", "w1", "missing")), "no node 'missing'"),
        (lambda d: d["edges"].append(edge("t2", "REFERENCES", "w1", "d1")), "edges never cross tenants"),
        (lambda d: d["nodes"].append(dict(d["nodes"][0])), "duplicate node 'w1' in tenant 't1'"),
        (lambda d: d["edges"].append(edge("t1", "bad type", "w1", "d1")), "UPPER_SNAKE_CASE"),
        (lambda d: d["nodes"][0].update(colour="red"), "Extra inputs are not permitted"),
    ],
)
def test_bad_datasets_are_rejected_with_the_reason(tmp_path: Path, mutate: object, message: str) -> None:
    data = json.loads(json.dumps(SMALL_GRAPH))
    mutate(data)  # type: ignore[operator]
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(DatasetError, match=message.replace("(", r"\(").replace(")", r"\)")):
        read_dataset(path)


def test_unreadable_files_are_dataset_errors(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match="no such file"):
        read_dataset(tmp_path / "missing.json")
    (tmp_path / "broken.json").write_text("{", encoding="utf-8")
    with pytest.raises(DatasetError, match="not valid JSON"):
        read_dataset(tmp_path / "broken.json")


def _small_graph_text() -> str:
    return json.dumps(SMALL_GRAPH, ensure_ascii=False).replace("Billing export", "Billing export ñ")


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        (lambda: _small_graph_text().encode("latin-1"), "not UTF-8 (byte 0xf1 at offset"),
        (lambda: _small_graph_text().encode("utf-16"), "not UTF-8 (byte 0xff at offset 0)"),
        (lambda: ("[" * 200_000 + "]" * 200_000).encode(), "nested too deeply"),
        (lambda: b'{"nodes": [], "edges": [], "x": NaN}', "NaN is not a JSON number"),
        (lambda: b"[]", "a dataset is a JSON object"),
    ],
)
def test_malformed_files_are_one_line_dataset_errors(tmp_path: Path, payload: object, message: str) -> None:
    path = tmp_path / "bad.json"
    path.write_bytes(payload())  # type: ignore[operator]
    with pytest.raises(DatasetError) as caught:
        read_dataset(path)
    assert message in str(caught.value)
    assert str(caught.value).startswith(str(path))
    assert "\n" not in str(caught.value)


def _with_node(**changes: object) -> dict[str, object]:
    data = json.loads(json.dumps(SMALL_GRAPH))
    data["nodes"][2].update(changes)  # w3: no edge refers to it
    return data


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (SMALL_GRAPH | {"formatVersion": 2}, "formatVersion: Input should be 1"),
        (_with_node(tenantId=" "), "tenantId must not be blank"),
        (_with_node(tenantId="t" * 200), "tenantId must be at most 128 characters"),
        (_with_node(tenantId="t1\n## x"), "tenantId must not contain control"),
        (_with_node(id="w1\u2028x"), "id must not contain control"),
        (_with_node(title="lone \ud800 surrogate"), "title is not valid Unicode"),
        (_with_node(text={"summary": "bad \udfff"}), "text is not valid Unicode"),
        (
            _with_node(properties={"deep": [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}),
            "nested deeper",
        ),
        (_with_node(secured="true", acl=["user:alice"]), "secured: Input should be a valid boolean"),
        (_with_node(secured=True, acl=["alice"]), "neither 'user:<id>' nor 'group:<name>'"),
        (_with_node(secured=True, acl=["user:group:security"]), "must not start with 'user:' or 'group:'"),
    ],
)
def test_the_loader_validates_like_the_search(tmp_path: Path, data: dict[str, object], message: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(DatasetError) as caught:
        read_dataset(path)
    assert message in str(caught.value)
    if "Input should be" in message:
        return  # not a Dataset at all: nothing to hand to load_dataset
    store = EmbeddedStore(tmp_path / "s.sqlite3")
    with pytest.raises(DatasetError, match=message.split(" ")[0]):
        load_dataset(Dataset.model_validate(data), store, SearchServices(backend=store).profiles)
    assert not (tmp_path / "s.sqlite3").exists()
