"""The vector copies on the nodes (pure logic: no server): scoring the first hop from the copies read
with the seeds, the copies a change writes, stored vectors seen with their copies."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

from brain_graph.core.security import AccessScope
from brain_graph.pipeline.state import SeedScores
from brain_graph.stores.base import VectorHit, VectorQuery, VectorRecord, VectorState
from brain_graph.stores.exact import exact_scores
from brain_graph.stores.identity import EmbeddingMismatchError
from brain_graph.stores.neo4j_weaviate.neo4j.vector_copies import (
    MAX_COPIED,
    CopyStates,
    changed_copies,
    copy_bytes,
    copy_properties,
    max_copied,
    reconciled,
    score_copies,
)
from nodes.expand import hop_similarity

WORK, DOC = "cdm.work.summary", "cdm.doc.body"
QUERIES = [VectorQuery(WORK, [1.0, 0.5, 0.0], "e"), VectorQuery(DOC, [0.0, 1.0, 1.0], "e")]


def test_copies_score_like_the_reference_over_float32_vectors() -> None:
    a, b = [0.3, 0.1, 0.7], [0.9, 0.2, 0.1]
    rows: list[list[Any]] = [["a", [copy_bytes(a), None]], ["b", [copy_bytes(b), copy_bytes(b)]]]
    hits = score_copies(QUERIES, (WORK, DOC), rows)
    stored = np.asarray([a, b], dtype=np.float32)
    work = dict(zip(["a", "b"], exact_scores(QUERIES[0].vector, stored), strict=True))
    doc = exact_scores(QUERIES[1].vector, stored[1:])[0]
    assert hits == [  # the queries' order, each by score then id; no hit without a vector
        *sorted((VectorHit(n, WORK, s) for n, s in work.items()), key=lambda h: (-h.score, h.node_id)),
        VectorHit("b", DOC, doc),
    ]


def test_copies_of_another_dimension_are_an_embedding_mismatch() -> None:
    mismatch = r"profile cdm\.doc\.body: query vector has dimension 3, the index holds dimension 2"
    with pytest.raises(EmbeddingMismatchError, match=mismatch):
        score_copies(QUERIES, (DOC,), [["a", [copy_bytes([1.0, 2.0])]]])


def test_a_change_removes_deleted_copies_and_sets_upserted_ones() -> None:
    upsert = VectorRecord("t", "n", WORK, None, True, ("group:a",), [1.0, 2.0], "h1")
    copies = changed_copies([upsert], [("t", "n", DOC), ("t", "m", WORK)])
    work, doc = copy_properties(WORK), copy_properties(DOC)
    values = [copy_bytes([1.0, 2.0]), True, ["group:a"], "h1"]
    assert copies == {
        ("t", "n"): {**dict.fromkeys(doc), **dict(zip(work, values, strict=True))},
        ("t", "m"): dict.fromkeys(work),
    }


def test_stored_vectors_whose_copy_is_missing_or_made_from_another_text_are_not_searchable() -> None:
    """Where the copies count, an object without its copy, or with a copy of another content hash, is
    not searchable; a node holding a copy without an object gets a state; a copy without a hash (from
    before copies had one) is taken to match; where the copies do not count, the objects stand."""
    states = [
        VectorState("kept", "h", "P", False, ()),
        VectorState("legacy", "h", "P", False, ()),
        VectorState("no-copy", "h", "P", False, ()),
        VectorState("other-text", "h", "P", False, ()),
        VectorState("unreachable", "h", "P", False, (), searchable=False),
    ]
    hashes = {"kept": "h", "legacy": None, "other-text": "old", "unreachable": "h", "copy-only": "h"}
    seen = {s.node_id: s.searchable for s in reconciled(states, CopyStates(3, True, hashes))}
    assert seen == {
        "copy-only": False,
        "kept": True,
        "legacy": True,
        "no-copy": False,
        "other-text": False,
        "unreachable": False,
    }
    assert reconciled(states, CopyStates(3, True, hashes))[0] == VectorState("copy-only", "", None, False, (), False)
    assert reconciled(states, CopyStates(3, False, {})) == states
    assert reconciled(states[::-1], CopyStates(None)) == states


class Reads:
    """A SearchReads whose similarity records what it was asked."""

    def __init__(self) -> None:
        self.asked: list[tuple[list[str], list[str]]] = []

    def similarity(
        self, queries: Sequence[VectorQuery], node_ids: Sequence[str], *, scope: AccessScope
    ) -> list[VectorHit]:
        self.asked.append(([q.profile_id for q in queries], list(node_ids)))
        return [VectorHit(node_id, q.profile_id, 0.5) for q in queries for node_id in node_ids]


def test_a_hop_asks_only_for_the_profiles_the_seeds_did_not_score() -> None:
    scored: SeedScores = {
        "profileIds": [WORK],
        "scores": [
            {"nodeId": "x", "profileId": WORK, "score": 0.9},
            {"nodeId": "admitted-elsewhere", "profileId": WORK, "score": 0.8},
        ],
    }
    reads = Reads()
    hits = hop_similarity(reads, QUERIES, ["x", "y"], scored, AccessScope("t"))  # type: ignore[arg-type]
    assert reads.asked == [([DOC], ["x", "y"])]
    assert hits == [VectorHit("x", WORK, 0.9), VectorHit("x", DOC, 0.5), VectorHit("y", DOC, 0.5)]

    everything: SeedScores = {"profileIds": [WORK, DOC], "scores": []}
    reads = Reads()
    assert hop_similarity(reads, QUERIES, ["x"], everything, AccessScope("t")) == []  # type: ignore[arg-type]
    assert reads.asked == []
    assert hop_similarity(reads, QUERIES, ["x"], None, AccessScope("t"))  # type: ignore[arg-type]
    assert reads.asked == [([WORK, DOC], ["x"])]


def test_the_copies_a_statement_returns_are_bounded_in_bytes() -> None:
    assert max_copied(QUERIES) == MAX_COPIED  # 3 dimensions: the node bound
    large = [VectorQuery(f"p{index}", [0.0] * 3072, "e") for index in range(3)]
    assert max_copied(large) == 1820  # 64 MiB over 3 x 3,072 x 4 bytes
