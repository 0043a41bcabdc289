"""The fast paths of a search give exactly what the full computations they skip give: the embedded
store's JSON columns decoded without ``json.loads``' overhead, the store path checked with one ``stat``
and the vector cache key resolved once per file, the support table's cached graph terms and adjusted
scores, and the remembered inline fields of the pack."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from brain_graph.core.errors import ConfigurationError
from brain_graph.core.filters import SeedFilter
from brain_graph.core.security import AccessScope
from brain_graph.core.text import MEMO_MAX_CHARS, _fit, code_span, code_span_of, escape_inline, inline, one_line
from brain_graph.pipeline.ranking import GraphScoring, SupportTable, adjusted_score
from brain_graph.stores.base import Link, NodeRecord, ProfileIndexInfo, VectorQuery, VectorRecord
from brain_graph.stores.embedded import EmbeddedStore
from brain_graph.stores.embedded.schema import stored_json

JSON_TEXTS = [
    "{}",
    "[]",
    '{"rank":2,"topic":"search"}',
    '["user:alice","group:sre"]',
    '{"summary":"a\\nb","body":"x = \'```\'"}',
    ' {"a": 1}',
    '{"a": 1} ',
    "\n[1, 2]\t",
    "NaN",
    '"text"',
    "{}x",
    "",
    "[1,",
    "{'a': 1}",
    b'{"a": 1}',
]


@pytest.mark.parametrize("text", JSON_TEXTS)
def test_stored_json_is_json_loads(text: str) -> None:
    try:
        expected: object = ("value", json.loads(text))
    except json.JSONDecodeError as error:
        expected = ("error", str(error))
    try:
        got: object = ("value", stored_json(text))
    except json.JSONDecodeError as error:
        got = ("error", str(error))
    if text == "NaN":  # nan != nan: compare what prints
        assert repr(got) == repr(expected)
    else:
        assert got == expected


def hops_table(scoring: GraphScoring) -> SupportTable:
    """Five seeds, three hops: shared neighbours, a seed reached back, more seeds than count."""
    table = SupportTable({"a": 0.9, "b": 0.8, "c": 0.7, "e": 0.6, "d": 0.5}, scoring)
    table.add_hop([Link(seed, "REFERENCES", "x", seed != "c") for seed in ("a", "b", "c", "e")])
    table.add_hop(
        [Link("x", "IN_CLUSTER", "y", True), Link("x", "REFERENCES", "a", False), Link("d", "DOCUMENTS", "y", True)]
    )
    table.add_hop([Link("y", "REFERENCES", "z", True), Link("a", "REFERENCES", "z", False)])
    return table


@pytest.mark.parametrize(
    "scoring",
    [GraphScoring(), GraphScoring(max_seeds=2, edge_weights={"IN_CLUSTER": 0.25}), GraphScoring(graph_boosts=False)],
)
def test_the_tables_graph_terms_and_adjusted_scores_are_those_of_its_breakdowns(scoring: GraphScoring) -> None:
    table = hops_table(scoring)
    for node_id in ("a", "b", "d", "x", "y", "z", "unknown"):
        for vector in (None, 0.0, 0.4375, 0.123456789):
            breakdown = table.breakdown(node_id, vector)
            assert table.graph(node_id, vector) == breakdown["graph"]
            assert table.adjusted(node_id, vector) == adjusted_score(breakdown)


def test_support_rows_are_new_on_every_call() -> None:
    table = hops_table(GraphScoring())
    first = table.support("z")
    first[0]["contribution"] = 99.0
    assert table.support("z")[0]["contribution"] != 99.0
    assert table.breakdown("z", 0.5)["support"] == table.support("z")


@pytest.mark.parametrize(
    "value",
    [None, "", "token_refresh.py", "see https://x.test and www.example.com", "a`b``c", "x" * (MEMO_MAX_CHARS + 1)],
)
def test_remembered_inline_fields_render_as_the_first_time(value: str | None) -> None:
    for limit in (1, 12, 10_000):
        for _ in range(2):
            assert inline(value, limit) == _fit(one_line(value) or "-", limit, escape_inline)
            assert code_span(value, limit) == _fit(one_line(value) or "-", limit, code_span_of)


PROFILE = ProfileIndexInfo("work", "test-embedder", 2)


def one_node_store(path: Path, node_id: str) -> None:
    store = EmbeddedStore(path)
    node = NodeRecord("t1", node_id, "cdm.work_item", None, node_id, None)
    store.load([node], [], [VectorRecord("t1", node_id, "work", None, False, (), [1.0, 0.0])], [PROFILE], replace=True)
    store.close()


def found(store: EmbeddedStore) -> list[str]:
    hits = store.query(
        [VectorQuery("work", [1.0, 0.0], "test-embedder")], scope=AccessScope("t1"), seed_filter=SeedFilter(), top_k=5
    )
    return [hit.node_id for hit in hits]


def test_a_store_path_that_is_not_a_file_is_checked_in_full(tmp_path: Path) -> None:
    scope = AccessScope("t1")
    assert EmbeddedStore(tmp_path / "missing.sqlite3").get_nodes(["a"], scope=scope) == []
    with pytest.raises(ConfigurationError, match="does not exist"):
        EmbeddedStore(tmp_path / "missing.sqlite3", explicit=True).get_nodes(["a"], scope=scope)
    with pytest.raises(ConfigurationError, match="is a directory"):
        EmbeddedStore(tmp_path).get_nodes(["a"], scope=scope)
    (tmp_path / "file").write_text("")
    with pytest.raises(ConfigurationError, match="is not a folder"):
        EmbeddedStore(tmp_path / "file" / "store.sqlite3").get_nodes(["a"], scope=scope)


def test_a_store_path_pointed_at_another_file_reads_that_file(tmp_path: Path) -> None:
    one_node_store(tmp_path / "first.sqlite3", "first")
    one_node_store(tmp_path / "second.sqlite3", "second")
    link = tmp_path / "store.sqlite3"
    link.symlink_to(tmp_path / "first.sqlite3")
    store = EmbeddedStore(link)
    assert found(store) == ["first"]
    link.unlink()
    os.symlink(tmp_path / "second.sqlite3", link)
    assert found(store) == ["second"]
    assert [node.node_id for node in store.get_nodes(["first", "second"], scope=AccessScope("t1"))] == ["second"]
    store.close()
