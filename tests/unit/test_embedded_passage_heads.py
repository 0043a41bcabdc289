"""The embedded store reads the passage heads of a long text, not the text; a store written before
heads existed (no ``heads`` column), or heads of another encoding, are read from the text."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from brain_graph.core.passage_heads import HEAD_CHARS, HEADS_PREFIX, field_heads
from brain_graph.core.security import AccessScope
from brain_graph.core.vocabulary import DOC
from brain_graph.stores.access import sql_params
from brain_graph.stores.base import NodeRecord
from brain_graph.stores.embedded import EmbeddedStore
from brain_graph.stores.embedded.store import PASSAGE_HEADS

LONG = {"body": "refresh  token\n" * HEAD_CHARS}
NODES = [
    NodeRecord("t", "long", DOC, None, "long", None, text=LONG),
    NodeRecord("t", "short", DOC, None, "short", None, text={"body": "a  b"}),
]
SCOPE = AccessScope("t")


def loaded(path: Path) -> EmbeddedStore:
    store = EmbeddedStore(path)
    store.load(NODES, [], [], [], replace=True)
    return store


def test_the_heads_of_a_long_text_are_read_instead_of_it(tmp_path: Path) -> None:
    store = loaded(tmp_path / "s.sqlite3")
    params = {**sql_params(SCOPE), "ids": '["long", "short"]', "whole": False}
    params |= {"prefix": HEADS_PREFIX, "prefix_chars": len(HEADS_PREFIX)}
    with sqlite3.connect(store.path) as db:
        db.row_factory = sqlite3.Row
        rows = {row["node_id"]: row for row in db.execute(PASSAGE_HEADS, params)}
        whole = {row["node_id"]: row for row in db.execute(PASSAGE_HEADS, {**params, "whole": True})}
    assert rows["long"]["text"] is None
    assert len(rows["long"]["heads"]) < 2 * HEAD_CHARS < len(LONG["body"])
    assert rows["short"]["heads"] is None  # a short text is its own head
    assert rows["short"]["text"] is not None
    assert whole["long"]["heads"] is None
    assert whole["long"]["text"] is not None


def test_a_store_without_heads_and_heads_of_another_encoding_are_read_from_the_text(tmp_path: Path) -> None:
    expected = {node.node_id: field_heads(node.node_type, node.text) for node in NODES}
    old = loaded(tmp_path / "old.sqlite3")
    with sqlite3.connect(old.path) as db:
        db.execute("ALTER TABLE nodes DROP COLUMN heads")  # as a store written before heads existed
    assert EmbeddedStore(old.path).get_passage_heads(["long", "short"], scope=SCOPE) == expected
    other = loaded(tmp_path / "other.sqlite3")
    with sqlite3.connect(other.path) as db:
        db.execute("UPDATE nodes SET heads = 'heads0:{}' WHERE heads IS NOT NULL")
    assert EmbeddedStore(other.path).get_passage_heads(["long", "short"], scope=SCOPE) == expected


def test_a_write_to_an_older_store_adds_the_heads(tmp_path: Path) -> None:
    store = loaded(tmp_path / "s.sqlite3")
    with sqlite3.connect(store.path) as db:
        db.execute("ALTER TABLE nodes DROP COLUMN heads")
    EmbeddedStore(store.path).load(NODES, [], [], [], replace=True)
    with sqlite3.connect(store.path) as db:
        [(heads,)] = db.execute("SELECT heads FROM nodes WHERE node_id = 'long'").fetchall()
    assert heads.startswith(HEADS_PREFIX)
