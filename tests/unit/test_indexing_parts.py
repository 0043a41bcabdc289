"""Pure parts of the write side: content hashes, the vector changes of a page, batch embedding with
failures, reports."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest
from langchain_core.embeddings import Embeddings

from brain_graph.core.errors import ConfigurationError
from brain_graph.core.filters import NodeFacets
from brain_graph.embedding.profiles import default_profiles, profile_text
from brain_graph.indexing.batches import embed_texts
from brain_graph.indexing.changes import vector_changes
from brain_graph.indexing.hashing import content_hash, is_current
from brain_graph.indexing.report import IndexReport
from brain_graph.stores.base import NodeRecord, ProfileIndexInfo, VectorKey, VectorState

IDENTITY = ProfileIndexInfo("p", "model@abc", 3)


class Picky(Embeddings):
    """Fails on texts containing "bad"; returns NaN for "nan"; a wrong dimension for "wide"."""

    def __init__(self) -> None:
        self.batches: list[int] = []

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.batches.append(len(texts))
        if any("bad" in t for t in texts):
            raise RuntimeError("cannot embed bad")
        return [[math.nan, 0.0, 0.0] if "nan" in t else [1.0] * (4 if "wide" in t else 3) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self.embed_documents([text])[0]


def test_the_content_hash_changes_with_the_text_the_model_and_the_dimension() -> None:
    base = content_hash(IDENTITY, "hello")
    assert base == content_hash(IDENTITY, "hello")
    assert len(base) == 32
    assert base != content_hash(IDENTITY, "hello ")
    assert base != content_hash(ProfileIndexInfo("p", "model@abd", 3), "hello")
    assert base != content_hash(ProfileIndexInfo("p", "model@abc", 4), "hello")
    # no ambiguity from concatenation: ("ab", "c") and ("a", "bc") differ
    assert content_hash(ProfileIndexInfo("p", "ab", 3), "c") != content_hash(ProfileIndexInfo("p", "a", 3), "bc")


def test_a_vector_is_current_only_with_the_same_hash_and_filter_metadata() -> None:
    node = NodeRecord(
        "t", "n", "x", "P", None, None, secured=True, acl=("user:a", "group:g"), tags=("Ops",), updated_at=5
    )
    facets = NodeFacets("x", None, ("ops",), 5)
    state = VectorState("n", "h", "P", True, ("group:g", "user:a"), facets=facets)
    assert is_current(state, node, "h")
    for changed in (replace(facets, node_type="y"), replace(facets, tags=()), replace(facets, updated_at=None)):
        assert not is_current(replace(state, facets=changed), node, "h")
    assert not is_current(state, replace(node, namespace="docs"), "h")
    assert not is_current(state, node, "other")
    assert not is_current(None, node, "h")
    assert not is_current(VectorState("n", "h", "Q", True, ("group:g", "user:a")), node, "h")
    assert not is_current(VectorState("n", "h", "P", False, ()), node, "h")
    assert not is_current(VectorState("n", "h", "P", True, ("user:a",)), node, "h")
    assert not is_current(VectorState("n", "h", "P", True, ("group:g", "user:a"), searchable=False), node, "h")


def test_a_failing_batch_is_retried_text_by_text() -> None:
    embedder = Picky()
    done = embed_texts(embedder, ["one", "bad two", "three", "nan four"], dimension=3, profile_id="p")
    assert [row is None for row in done.rows] == [False, True, False, True]
    assert done.failed == 2
    assert embedder.batches == [4, 1, 1, 1, 1]
    assert all(row.dtype == np.float32 for row in done.rows if row is not None)
    assert any("cannot embed bad" in error for error in done.errors)


def test_a_wrong_dimension_stops_the_run() -> None:
    with pytest.raises(ConfigurationError, match="profile p: the embedder returned dimension 4, the profile has 3"):
        embed_texts(Picky(), ["wide"], dimension=3, profile_id="p")


def test_reports_add_up_and_say_when_there_was_nothing_to_do() -> None:
    total = IndexReport(unchanged=3)
    assert total.summary().startswith("nothing to do: 3 vector(s) already current")
    total.add(IndexReport(embedded=2, pending=1, truncated=1, seconds=0.5))
    assert total.to_json() | {"seconds": 0} == {
        "embedded": 2,
        "unchanged": 3,
        "deleted": 0,
        "pending": 1,
        "truncated": 1,
        "nodes": 0,
        "edges": 0,
        "seconds": 0,
    }
    assert total.summary().startswith("embedded 2, unchanged 3, deleted 0, pending 1, truncated 1")


def test_an_unsearchable_vector_is_deleted_and_written_again_even_when_current() -> None:
    """A stored vector searches do not see as stored is re-embedded and both deleted and upserted (a
    store may keep an equal vector where it is, out of its index); a searchable current one is left
    alone, and ``full`` re-embeds it without deleting it."""
    registry = default_profiles()
    profile = registry.get("cdm.doc.body")
    nodes = [NodeRecord("t", node_id, "cdm.doc", "P", f"title {node_id}", None, text={"body": "b"}) for node_id in "ab"]
    text_hash = {n.node_id: content_hash(registry.identity(profile), profile_text(n, profile)[0]) for n in nodes}

    def states() -> dict[str, VectorState]:
        return {
            "a": VectorState("a", text_hash["a"], "P", False, (), facets=NodeFacets("cdm.doc")),
            "b": VectorState("b", text_hash["b"], "P", False, (), searchable=False, facets=NodeFacets("cdm.doc")),
        }

    for full in (False, True):
        report = IndexReport()
        changes = vector_changes(nodes, profile, registry, states(), full=full, report=report)
        assert [v.node_id for v in changes.upsert_vectors] == (["a", "b"] if full else ["b"])
        assert changes.delete_vectors == [VectorKey("t", profile.profile_id, "b")]
        assert (report.embedded, report.unchanged, report.deleted) == ((2, 0, 0) if full else (1, 1, 0))
