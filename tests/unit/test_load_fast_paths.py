"""The fast paths of loading decide exactly as the full rules they skip: the write checks'
``str.isprintable`` and URL shortcuts, the dataset items read without pydantic, the batch check of
embedded rows, the numpy vectors given to the Weaviate client, and the collector paused during a load
(why they exist: docs/internals/loading.md)."""

from __future__ import annotations

import gc
import json
import math
import sys
import unicodedata
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import numpy as np
import pytest
from langchain_core.embeddings import Embeddings
from weaviate.collections.grpc.shared import _Pack

from benchmarks.synthetic import synthetic_dataset
from brain_graph.core.contracts import identifier_problem
from brain_graph.core.errors import DatasetError
from brain_graph.core.security import text_problem
from brain_graph.embedding.profiles import default_profiles
from brain_graph.indexing import dataset
from brain_graph.indexing.batches import embed_texts
from brain_graph.indexing.dataset import (
    DatasetEdge,
    DatasetNode,
    GraphRecords,
    edge_record,
    example_dataset_path,
    load_dataset,
    node_record,
    read_graph,
)
from brain_graph.stores.base import NodeRecord
from brain_graph.stores.embedded import EmbeddedStore
from brain_graph.stores.neo4j_weaviate.weaviate.writes import client_vector
from brain_graph.stores.write_checks import (
    MAX_URL_CHARS,
    URL_SCHEMES,
    _identifier,
    _node_id,
    _plain,
    _url_problem,
)

STRINGS = [
    "",
    " ",
    "a",
    " a",
    "a ",
    "a b",
    "a  b",
    "a\tb",
    "a\u00a0b",
    "\u3000a",
    "a\u2028b",
    "a\u2029",
    "\u200bzero width",
    "soft\u00adhyphen",
    "bidi\u202e",
    "bom\ufeff",
    "lone \ud800 surrogate",
    "del\x7f",
    "nul\x00",
    "nel\x85",
    "é",
    "ü ",
    "日本語",
    "emoji 😀",
    "private \ue000 use",
    "unassigned \u0378",
    "x" * 128,
    "x" * 129,
    "x" * 600,
]
URLS = [
    "https://example.test/tenant0/1",
    "HTTP://EXAMPLE.test",
    "http://a.b?x=1#y",
    "https://example.test#frag",
    "http://./",
    "http://-/",
    "http:///x",
    "http://host:80/",
    "http://host:/",
    "http://host:99999/",
    "http://host:x/",
    "http://user@host/",
    "http://user:pw@host:8080/",
    "https://[::1]/",
    "https://[::1/",
    "http://ex\u00e4mple.test/",
    "http://example.test/\u00e9",
    "https://evil.example/a><b>c</b>",
    'https://evil.example/"onclick="alert(1)',
    "javascript:alert(1)",
    "ftp://host/",
    "http:/x",
    "//host/x",
    "http://exa mple.test/",
    "http://example.test/\x00",
    "http://example.test/" + "a" * MAX_URL_CHARS,
    "",
]


def full_string_problem(value: str) -> str | None:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as error:
        return f"is not valid Unicode (lone surrogate U+{ord(value[error.start]):04X} at {error.start})"
    return None


def full_identifier(value: str, max_chars: int) -> str | None:
    return full_string_problem(value) or identifier_problem(value, max_chars)


def full_node_id(value: str) -> str | None:
    problem = full_identifier(value, 512)
    if problem is not None:
        return problem
    other = next((char for char in value if char.isspace() and char != " "), None)
    if other is not None:
        return f"must not contain white space other than single spaces (found U+{ord(other):04X})"
    return "must not contain runs of spaces" if "  " in value else None


def full_url_problem(url: str) -> str | None:
    problem = full_string_problem(url)
    if problem is not None:
        return problem
    if len(url) > MAX_URL_CHARS:
        return f"must be at most {MAX_URL_CHARS} characters (got {len(url)})"
    blank = next((char for char in url if char.isspace()), None)
    if blank is not None:
        return f"must not contain white space (found U+{ord(blank):04X})"
    problem = text_problem(url)
    if problem is not None:
        return problem
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018
    except ValueError as error:
        return f"is not a valid URL ({error})"
    if parts.scheme.lower() not in URL_SCHEMES or not parts.hostname:
        return "must be an absolute http(s) URL (http://host/... or https://host/...)"
    return None


def test_a_printable_string_holds_no_forbidden_character_and_no_white_space_but_spaces() -> None:
    forbidden = {"Cc", "Cf", "Cs", "Zl", "Zp"}
    for code in range(sys.maxunicode + 1):
        char = chr(code)
        if _plain(char):
            assert unicodedata.category(char) not in forbidden, hex(code)
            assert not char.isspace() or char == " ", hex(code)


def test_the_name_rule_decides_every_character_as_its_categories() -> None:
    """text_problem's ``str.isprintable`` shortcut (one pass in C instead of a category lookup per
    character) refuses exactly the forbidden categories, every code point tried."""
    forbidden = {"Cc", "Cf", "Cs", "Zl", "Zp"}
    for code in range(sys.maxunicode + 1):
        char = chr(code)
        assert (text_problem(f"a{char}b") is not None) == (unicodedata.category(char) in forbidden), hex(code)


@pytest.mark.parametrize("value", STRINGS)
def test_identifier_checks_agree_with_the_full_rules(value: str) -> None:
    assert _identifier(value, 128) == full_identifier(value, 128)
    assert _node_id(value) == full_node_id(value)


@pytest.mark.parametrize("url", URLS + STRINGS)
def test_url_checks_agree_with_the_full_rules(url: str) -> None:
    assert _url_problem(url) == full_url_problem(url)


def items() -> list[tuple[str, dict[str, Any]]]:
    """Node and edge items of the example graph and a synthetic one."""
    example = json.loads(example_dataset_path().read_text(encoding="utf-8"))
    synthetic = synthetic_dataset(300, seed=3).model_dump(by_alias=True)
    return [(kind, item) for data in (example, synthetic) for kind in ("nodes", "edges") for item in data[kind]]


def direct_and_model(kind: str, item: Any) -> tuple[Any, Any]:
    """The direct record (or None) and pydantic's record (or the error class)."""
    direct, model = (node_record, DatasetNode) if kind == "nodes" else (edge_record, DatasetEdge)
    try:
        expected: Any = model.model_validate(item).to_record()
    except ValueError as error:
        expected = type(error)
    return direct(item), expected


def test_well_formed_items_are_read_directly_as_pydantic_reads_them() -> None:
    for kind, item in items():
        direct, expected = direct_and_model(kind, item)
        assert direct is not None
        assert direct == expected


NODE = {"tenantId": "t", "id": "n", "nodeType": "cdm.doc", "acl": ["user:a"], "text": {"b": "x", "a": "y"}}
EDGE = {"tenantId": "t", "edgeType": "REFERENCES", "fromNodeId": "a", "toNodeId": "b"}


@pytest.mark.parametrize(
    ("kind", "item"),
    [
        ("nodes", NODE),
        ("nodes", NODE | {"secured": True, "acl": ["user:b", "user:a", "user:b"]}),
        ("nodes", NODE | {"projectKey": None, "title": None, "url": None, "properties": {"k": [1, {"x": None}]}}),
        ("nodes", NODE | {"secured": "true"}),
        ("nodes", NODE | {"secured": 1}),
        ("nodes", NODE | {"acl": "user:a"}),
        ("nodes", NODE | {"acl": [1]}),
        ("nodes", NODE | {"text": {"a": 1}}),
        ("nodes", NODE | {"text": ["a"]}),
        ("nodes", NODE | {"properties": []}),
        ("nodes", NODE | {"tenantId": ""}),
        ("nodes", NODE | {"id": 5}),
        ("nodes", NODE | {"projectKey": 5}),
        ("nodes", NODE | {"title": ["t"]}),
        ("nodes", NODE | {"extra": 1}),
        ("nodes", NODE | {"tenant_id": "t"}),
        ("nodes", {k: v for k, v in NODE.items() if k != "nodeType"}),
        ("nodes", [NODE]),
        ("nodes", None),
        ("edges", EDGE),
        ("edges", EDGE | {"properties": {"w": 1.5}}),
        ("edges", EDGE | {"edgeType": ""}),
        ("edges", EDGE | {"tenantId": ""}),
        ("edges", EDGE | {"toNodeId": 1}),
        ("edges", EDGE | {"properties": None}),
        ("edges", EDGE | {"extra": 1}),
        ("edges", {k: v for k, v in EDGE.items() if k != "fromNodeId"}),
    ],
)
def test_an_item_read_directly_is_read_as_pydantic_reads_it(kind: str, item: Any) -> None:
    direct, expected = direct_and_model(kind, item)
    assert direct is None or direct == expected


class Flaky(Embeddings):
    """Returns NaN for texts containing "nan", an infinity for "inf"."""

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [[math.nan if "nan" in t else math.inf if "inf" in t else 1.0, 0.0] for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self.embed_documents([text])[0]


def test_rows_that_are_not_finite_in_a_batch_are_left_without_a_vector() -> None:
    done = embed_texts(Flaky(), ["one", "nan two", "three", "inf four"], dimension=2, profile_id="p")
    assert [row is None for row in done.rows] == [False, True, False, True]
    assert done.errors == ["the embedder returned a value that is not finite"] * 2


@pytest.mark.parametrize("dimension", [1, 2, 3, 384])
def test_the_weaviate_client_packs_a_numpy_vector_as_the_list_of_its_values(dimension: int) -> None:
    values = np.random.default_rng(dimension).standard_normal(dimension).astype(np.float32)
    for given in (values, values.tolist()):
        assert _Pack.single(client_vector(given)) == _Pack.single(values.tolist())


@pytest.mark.parametrize("enabled", [True, False])
def test_a_load_leaves_the_collector_as_it_found_it(tmp_path: Path, enabled: bool) -> None:
    was = gc.isenabled()
    (gc.enable if enabled else gc.disable)()
    try:
        graph = read_graph(example_dataset_path())
        assert gc.isenabled() is enabled
        load_dataset(graph, EmbeddedStore(tmp_path / "s.sqlite3"), default_profiles())
        assert gc.isenabled() is enabled
    finally:
        (gc.enable if was else gc.disable)()


def test_records_not_read_by_read_graph_are_checked_before_embedding(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(dataset, "embed_nodes", lambda *_, **__: pytest.fail("embedded before the check"))
    bad = NodeRecord("t", "n\n", "cdm.doc", None, "title", None, text={"body": "x"})
    with pytest.raises(DatasetError, match="node 'n\\\\n' of tenant 't': id"):
        load_dataset(GraphRecords([bad], []), EmbeddedStore(tmp_path / "s.sqlite3"), default_profiles())


def test_records_read_from_a_file_are_checked_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """read_graph's records are immutable and marked checked: the backend's load does not check them
    again; any other sequence (even of the same records) is checked."""
    from brain_graph.indexing.dataset import read_graph
    from brain_graph.stores import write_checks

    records = read_graph(example_dataset_path())
    assert isinstance(records.nodes, write_checks.CheckedNodes)
    assert isinstance(records.edges, write_checks.CheckedEdges)
    checked: list[str] = []
    original = write_checks._node_problem

    def counting(node: Any) -> str | None:
        checked.append(node.node_id)
        return original(node)

    monkeypatch.setattr(write_checks, "_node_problem", counting)
    write_checks.check_load(records.nodes, records.edges, [], [])
    assert checked == []
    write_checks.check_load(list(records.nodes), list(records.edges), [], [])
    assert len(checked) == len(records.nodes)
