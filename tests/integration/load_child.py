"""A replace-load into Neo4j + Weaviate that stops at a chosen point and waits there to be SIGKILLed.

    python -m tests.integration.load_child DATASET.json POINT K

POINT is where the load pauses (printing ``PAUSED <point>`` on stdout, then sleeping):
    neo4j-batch     inside the transaction of the K-th node/edge batch, after its statement ran
    weaviate-batch  after K Weaviate insert batches
    flip            just before the flip
    clean-up        after the flip, before the old generations are removed
Batches are made small (:data:`BATCH`) so that a small dataset has many of them. The servers come from
the environment (``eval "$(scripts/services env)"``), as for the tests.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import neo4j

from brain_graph.embedding.profiles import default_profiles
from brain_graph.indexing.dataset import load_dataset, read_dataset
from brain_graph.stores.neo4j_weaviate.backend import Neo4jWeaviateBackend, from_environment
from brain_graph.stores.neo4j_weaviate.neo4j import generations as neo4j_generations
from brain_graph.stores.neo4j_weaviate.neo4j.client import Neo4jClient
from brain_graph.stores.neo4j_weaviate.neo4j.generations import Flip, Neo4jGenerations
from brain_graph.stores.neo4j_weaviate.weaviate import writes as weaviate_writes
from brain_graph.stores.neo4j_weaviate.weaviate.writes import WeaviateWrites

BATCH = 50
POINTS = ("neo4j-batch", "weaviate-batch", "flip", "clean-up")


def pause(point: str) -> None:
    """Tell the parent where we are, then wait for SIGKILL."""
    print(f"PAUSED {point}", flush=True)
    time.sleep(600)
    raise SystemExit("not killed")


def is_batch_write(query: str) -> bool:
    """A load's node or edge batch (CREATE into a fresh generation, MERGE into the current one)."""
    nodes = ("UNWIND $rows AS row MERGE (n:BrainNode", "UNWIND $rows AS row CREATE (n:BrainNode")
    return query.startswith(nodes) or "MERGE (a)-[r:" in query or "CREATE (a)-[r:" in query


def install(point: str, k: int) -> None:
    """Patch the stores so that the load pauses at ``point``."""
    neo4j_generations.LOAD_BATCH = BATCH
    weaviate_writes.INSERT_BATCH = BATCH
    calls = 0
    commit, insert, flip = Neo4jClient.commit, WeaviateWrites.insert_batch, Neo4jGenerations.flip
    clean_up = Neo4jWeaviateBackend.clean_up

    def paused_commit(self: Neo4jClient, session: neo4j.Session, query: str, params: Mapping[str, Any]) -> Any:
        nonlocal calls
        if point == "neo4j-batch" and is_batch_write(query):
            calls += 1
            if calls == k:
                with session.begin_transaction() as tx:
                    tx.run(query, dict(params)).consume()
                    pause(point)  # killed with the transaction open: the server rolls it back
        return commit(self, session, query, params)

    async def paused_insert(self: WeaviateWrites, collection: Any, profile_id: str, batch: list[Any]) -> None:
        nonlocal calls
        if point == "weaviate-batch":
            calls += 1
            if calls > k:
                pause(point)
        await insert(self, collection, profile_id, batch)

    def paused_flip(
        self: Neo4jGenerations, generations: Mapping[str, int], clocks: Mapping[str, int] | None = None
    ) -> dict[str, Flip]:
        if point == "flip":
            pause(point)
        return flip(self, generations, clocks)

    def paused_clean_up(self: Neo4jWeaviateBackend, flips: Mapping[str, Flip]) -> None:
        if point == "clean-up":
            pause(point)
        clean_up(self, flips)

    Neo4jClient.commit = paused_commit  # type: ignore[method-assign]
    WeaviateWrites.insert_batch = paused_insert  # type: ignore[method-assign]
    Neo4jGenerations.flip = paused_flip  # type: ignore[method-assign]
    Neo4jWeaviateBackend.clean_up = paused_clean_up  # type: ignore[method-assign]


def main(argv: list[str]) -> int:
    path, point, k = Path(argv[0]), argv[1], int(argv[2])
    if point not in POINTS:
        raise SystemExit(f"unknown point {point!r}; one of {POINTS}")
    install(point, k)
    backend = from_environment()
    load_dataset(read_dataset(path), backend, default_profiles())
    print("DONE", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
