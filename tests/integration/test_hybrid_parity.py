"""Retrieval modes on both backends: the same pack in vector, lexical and hybrid mode; a node named
exactly (its id, the key part of its id, its title) is citation 1; the score floor."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from brain_graph.core import bm25
from brain_graph.indexing.dataset import Dataset
from tests.integration.conftest import Loaded
from tests.integration.test_parity import parity_requests, search

pytestmark = pytest.mark.integration
MODES = ("vector", "lexical", "hybrid")


def busiest_tenant(dataset: Dataset) -> str:
    return Counter(node.tenant_id for node in dataset.nodes).most_common(1)[0][0]


def named_nodes(dataset: Dataset) -> list[tuple[str, str]]:
    """(query, node id) pairs naming public work items and docs exactly: by id, by the key part of the id
    and by title (titles no other node of the tenant has)."""
    tenant = busiest_tenant(dataset)
    mine = sorted(
        (
            n
            for n in dataset.nodes
            if n.tenant_id == tenant and not n.secured and n.node_type in ("cdm.work_item", "cdm.doc")
        ),
        key=lambda n: n.id,
    )
    titles = Counter(bm25.exact_key(n.title) for n in dataset.nodes if n.tenant_id == tenant and n.title)
    pairs: list[tuple[str, str]] = []
    for node in mine[:3]:
        pairs.append((node.id, node.id))
        pairs.append((node.id.rsplit(":", 1)[-1], node.id))
    pairs += [(n.title, n.id) for n in mine[3:8] if n.title and titles[bm25.exact_key(n.title)] == 1]
    return pairs


def request(query: str, tenant: str, **options: Any) -> dict[str, Any]:
    return {"queryText": query, "filter": {"tenantId": tenant, "secured": False}, "options": options}


@pytest.mark.parametrize("mode", MODES)
def test_each_mode_gives_the_same_pack_on_both_backends(loaded: Loaded, mode: str) -> None:
    cases = parity_requests(loaded.dataset)
    lexical_hits = 0
    for name, case, principal in cases:
        case = {**case, "options": {**case["options"], "retrievalMode": mode}}
        expected = search(loaded.embedded, case, principal)
        assert search(loaded.server, case, principal) == expected, f"{mode} {name}: neo4j-weaviate differs"
        lexical_hits += sum(hit["lexicalScore"] is not None for hit in expected["hits"])
        if mode == "vector":
            assert all(hit["lexicalScore"] is None for hit in expected["hits"])
        if mode == "lexical":
            assert all(hit["vectorScore"] is None for hit in expected["hits"])
    assert (lexical_hits > 0) == (mode != "vector")


@pytest.mark.parametrize("mode", ["lexical", "hybrid"])
def test_a_node_named_exactly_is_citation_one(loaded: Loaded, mode: str) -> None:
    tenant = busiest_tenant(loaded.dataset)
    pairs = named_nodes(loaded.dataset)
    assert len(pairs) >= 8
    for query, node_id in pairs:
        for services in (loaded.embedded, loaded.server):
            result = search(services, request(query, tenant, retrievalMode=mode), None)
            first = result["promptPack"]["citations"][0]
            assert (first["sourceNodeId"], first["reachedBy"]) == (node_id, "exact"), (services.backend.name, query)
            assert result["candidates"][0]["reachedBy"] == "exact"


def test_the_score_floor_on_both_backends(loaded: Loaded) -> None:
    tenant = busiest_tenant(loaded.dataset)
    query = next(n.title for n in sorted(loaded.dataset.nodes, key=lambda n: n.id) if n.tenant_id == tenant and n.title)
    unfloored = search(loaded.embedded, request(query, tenant, topK=30), None)
    scores = sorted({candidate["adjustedScore"] for candidate in unfloored["candidates"]})
    floor = scores[len(scores) // 2]  # about half the candidates are below it
    floored = request(query, tenant, topK=30, minScore=floor)
    expected = search(loaded.embedded, floored, None)
    assert search(loaded.server, floored, None) == expected
    kept = [c["nodeId"] for c in expected["candidates"]]
    assert kept == [c["nodeId"] for c in unfloored["candidates"] if c["adjustedScore"] >= floor]
    assert 0 < len(kept) < len(unfloored["candidates"])
    assert {c["sourceNodeId"] for c in expected["promptPack"]["citations"]} <= set(kept)
    assert all(set(episode["memberNodeIds"]) <= set(kept) for episode in expected["episodes"])
    assert all(episode["memberNodeIds"] for episode in expected["episodes"])
