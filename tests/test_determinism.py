"""Same request, same data: byte-identical output, whatever the load order or the call style."""

from __future__ import annotations

import asyncio
import json
import random
from pathlib import Path
from typing import Any

from brain_graph.core.contracts import BrainSearchResult
from brain_graph.core.security import Principal
from brain_graph.graphs.search import BrainSearchGraph, build_graph
from brain_graph.indexing.dataset import Dataset
from brain_graph.pipeline.services import SearchServices
from brain_graph.pipeline.state import BrainSearchContext
from tests.helpers import make_store

REQUESTS: list[dict[str, Any]] = [
    {
        "queryText": "token refresh outage",
        "filter": {"tenantId": "acme", "secured": False},
        "options": {"expandDepth": 2},
    },
    {"queryText": "duplicate charge idempotency retry", "filter": {"tenantId": "acme", "projectKey": "PAY"}},
    {
        "queryText": "billing",
        "filter": {"tenantId": "globex", "secured": False},
        "options": {"topK": 50, "maxNodes": 40},
    },
]
PRINCIPAL = BrainSearchContext(principal=Principal("alice", ("security", "payments-leads")))


def pack_bytes(graph: BrainSearchGraph, raw: dict[str, Any]) -> bytes:
    result = BrainSearchResult.model_validate(graph.invoke(raw, context=PRINCIPAL))  # type: ignore[arg-type]
    return json.dumps(result.to_wire(), ensure_ascii=False, sort_keys=False).encode("utf-8")


def shuffled(dataset: Dataset, seed: int) -> Dataset:
    rng = random.Random(seed)
    nodes, edges = list(dataset.nodes), list(dataset.edges)
    rng.shuffle(nodes)
    rng.shuffle(edges)
    return dataset.model_copy(update={"nodes": nodes, "edges": edges})


def test_repeated_searches_are_byte_identical(example_graph: BrainSearchGraph) -> None:
    for raw in REQUESTS:
        outputs = {pack_bytes(example_graph, raw) for _ in range(3)}
        assert len(outputs) == 1
        assert b'"hits": []' not in next(iter(outputs))


def test_a_fresh_graph_and_store_give_the_same_bytes(
    example_graph: BrainSearchGraph, example_dataset: Dataset, tmp_path: Path
) -> None:
    reloaded = build_graph(make_store(tmp_path, example_dataset))
    for raw in REQUESTS:
        assert pack_bytes(reloaded, raw) == pack_bytes(example_graph, raw)


def test_shuffled_load_order_gives_the_same_bytes(
    example_graph: BrainSearchGraph, example_dataset: Dataset, tmp_path: Path
) -> None:
    for seed in (1, 2):
        other = build_graph(make_store(tmp_path, shuffled(example_dataset, seed), name=f"shuffled-{seed}.sqlite3"))
        for raw in REQUESTS:
            assert pack_bytes(other, raw) == pack_bytes(example_graph, raw)


def test_async_and_sync_invocation_agree(example_services: SearchServices) -> None:
    graph = build_graph(example_services)

    async def run_all() -> list[dict[str, Any]]:
        return [await graph.ainvoke(raw, context=PRINCIPAL) for raw in REQUESTS]  # type: ignore[arg-type]

    for raw, output in zip(REQUESTS, asyncio.run(run_all()), strict=True):
        assert BrainSearchResult.model_validate(output).to_wire() == json.loads(pack_bytes(graph, raw))
