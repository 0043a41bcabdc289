"""A dataset a store could refuse is refused before the first write, on every backend: the previous
data of the tenant (and of every other tenant) stays exactly as it was.

A lone surrogate (``"\\ud800"`` as a JSON escape), which the Neo4j driver cannot encode, is one such
value: the checks refuse it, the store never sees it (docs/internals/loading.md).
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from brain_graph.core.errors import DatasetError
from brain_graph.core.filters import SeedFilter
from brain_graph.core.vocabulary import WORK_ITEM
from brain_graph.embedding.profiles import default_profiles
from brain_graph.indexing.dataset import load_dataset, read_dataset
from brain_graph.stores.base import EdgeRecord, NodeRecord, VectorQuery, VectorRecord
from tests.conformance.conftest import Harness
from tests.conformance.test_loading import dataset, snapshot

SURROGATE = "\ud800"
IDS = ["a", "b", "c"]


def bad_records(harness: Harness, case: str) -> tuple[list[NodeRecord], list[EdgeRecord], list[VectorRecord]]:
    """The good dataset of ``t1`` with one field broken."""
    nodes, edges, vectors = dataset(harness, ["a", "b", "d"])
    broken = {
        "text": lambda n: replace(n, text={"body": f"x{SURROGATE}y"}),
        "title": lambda n: replace(n, title=SURROGATE),
        "properties": lambda n: replace(n, properties={"k": [1, {"v": SURROGATE}]}),
        "property-key": lambda n: replace(n, properties={SURROGATE: 1}),
        "acl": lambda n: replace(n, secured=True, acl=(f"user:{SURROGATE}",)),
        "raw-acl": lambda n: replace(n, secured=True, acl=("alice",)),
        "non-finite": lambda n: replace(n, properties={"x": float("nan")}),
        "big-integer": lambda n: replace(n, properties={"x": [1, 2**64]}),
        "acl-not-secured": lambda n: replace(n, secured=False, acl=("group:g",)),
        "script-url": lambda n: replace(n, url="javascript:alert(1)"),
        "invisible-project": lambda n: replace(n, project_key="P\u200b"),
    }
    if case == "edge":
        edges[-1] = replace(edges[-1], properties={"note": SURROGATE})
    elif case == "vector":
        vectors[-1] = replace(vectors[-1], vector=[1.0, float("inf"), 0.0, 0.0])
    elif case == "dimension":
        vectors[-1] = replace(vectors[-1], vector=[1.0, 0.0])
    else:
        nodes[-1] = broken[case](nodes[-1])
    return nodes, edges, vectors


CASES = [
    "text",
    "title",
    "properties",
    "property-key",
    "acl",
    "raw-acl",
    "non-finite",
    "big-integer",
    "acl-not-secured",
    "script-url",
    "invisible-project",
    "edge",
    "vector",
    "dimension",
]


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("replace_", [True, False], ids=["replace", "merge"])
def test_a_refused_load_writes_nothing(harness: Harness, case: str, replace_: bool) -> None:
    nodes, edges, vectors = dataset(harness, IDS)
    other = dataset(harness, ["a", "z"], tenant="t2")
    harness.load(nodes + other[0], edges + other[1], vectors + other[2])
    before = snapshot(harness, "t1", [*IDS, "d"]), snapshot(harness, "t2", ["a", "z"])

    bad = bad_records(harness, case)
    with pytest.raises(DatasetError):
        harness.load(*bad, replace=replace_)
    assert (snapshot(harness, "t1", [*IDS, "d"]), snapshot(harness, "t2", ["a", "z"])) == before


def test_a_lone_surrogate_in_a_dataset_file_is_refused(harness: Harness, tmp_path: Path) -> None:
    """The reported case, through the real path: a JSON file with a ``\\ud800`` escape, read and loaded."""
    registry = default_profiles()
    tenant = harness.t("t1")
    good = {
        "nodes": [
            {"tenantId": tenant, "id": "w1", "nodeType": "cdm.work_item", "title": "token refresh", "text": {}},
            {"tenantId": tenant, "id": "w2", "nodeType": "cdm.work_item", "title": "login page"},
        ],
        "edges": [{"tenantId": tenant, "edgeType": "REFERENCES", "fromNodeId": "w1", "toNodeId": "w2"}],
    }
    path = tmp_path / "good.json"
    path.write_text(json.dumps(good), encoding="utf-8")
    load_dataset(read_dataset(path), harness.backend, registry)
    ids = ["w1", "w2"]
    profile = next(p for p in registry.profiles if WORK_ITEM in p.node_types)
    embedder = registry.embedders[profile.embedder_id]
    query = [VectorQuery(profile.profile_id, embedder.embed_query("token refresh"), registry.embedder_name(profile))]

    def state() -> tuple[object, ...]:
        scope = harness.scope("t1")
        hits = harness.backend.vector_index.query(query, scope=scope, seed_filter=SeedFilter(), top_k=5)
        return snapshot(harness, "t1", ids), harness.backend.graph_store.get_nodes(ids, scope=scope), hits

    before = state()
    assert before[2], "the good dataset has vectors"

    for field, value in (("title", "token \\ud800 refresh"), ("url", "https://x.test/\\ud800")):
        text = json.dumps(good).replace('"title": "login page"', f'"{field}": "{value}"')
        assert "\\ud800" in text  # a JSON escape: json.loads turns it into a lone surrogate
        path.write_text(text, encoding="utf-8")
        with pytest.raises(DatasetError):
            load_dataset(read_dataset(path), harness.backend, registry)
        assert state() == before
