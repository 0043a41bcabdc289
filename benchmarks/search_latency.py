"""Search latency (p50/p95) and load throughput of the embedded and Neo4j + Weaviate backends.

    .venv/bin/python -m benchmarks.search_latency                    # 1k and 10k nodes, both backends
    .venv/bin/python -m benchmarks.search_latency --sizes 100000 --searches 20
    .venv/bin/python -m benchmarks.search_latency --backends embedded

The Neo4j + Weaviate backend needs the servers (``eval "$(scripts/services up)"``); without them its
rows are reported as unavailable. Each size is a synthetic graph (:mod:`benchmarks.synthetic`, two
tenants, ~3 edges per node) loaded under tenant ids unique to the run and dropped afterwards.
Embedding is timed apart from loading. Searches run through the compiled LangGraph graph (query
embedding included), public scope, default options; ``depth 2`` runs set ``expandDepth=2``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from benchmarks.synthetic import synthetic_dataset
from brain_graph.dataset import Dataset, embed_nodes, index_info
from brain_graph.errors import BackendUnavailableError
from brain_graph.graph import build_graph
from brain_graph.services import SearchServices
from brain_graph.state import BrainSearchInput
from brain_graph.stores import StorageBackend, build_backend


@dataclass
class Row:
    backend: str
    nodes: int
    edges: int
    vectors: int
    embed_s: float
    load_s: float
    p50_ms: float
    p95_ms: float
    p50_d2_ms: float
    p95_d2_ms: float
    round_trips: str


def percentile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def prefixed(dataset: Dataset, prefix: str) -> Dataset:
    raw = dataset.model_dump(by_alias=True)
    for item in (*raw["nodes"], *raw["edges"]):
        item["tenantId"] = prefix + item["tenantId"]
    return Dataset.model_validate(raw)


def make_backend(name: str, workdir: Path) -> StorageBackend:
    """A registered backend built from its settings (the embedded one on a fresh file)."""
    if name == "embedded":
        return build_backend(name, store_path=workdir / f"bench-{uuid.uuid4().hex[:8]}.sqlite3")
    if not os.environ.get("NEO4J_URI") or not os.environ.get("WEAVIATE_HTTP_PORT"):
        raise BackendUnavailableError(name, 'servers not configured: eval "$(scripts/services up)"')
    return build_backend(name)


def run_searches(services: SearchServices, requests: list[dict[str, Any]]) -> list[float]:
    graph = build_graph(services)
    for request in requests[:5]:  # warm-up: connections, plan caches, profile cache
        graph.invoke(cast(BrainSearchInput, request))
    timings = []
    for request in requests:
        started = time.perf_counter()
        graph.invoke(cast(BrainSearchInput, request))
        timings.append((time.perf_counter() - started) * 1000)
    return timings


def bench(backend_name: str, size: int, searches: int, workdir: Path) -> Row:
    dataset = prefixed(synthetic_dataset(size, tenants=2, seed=size), f"bench{uuid.uuid4().hex[:6]}-")
    backend = make_backend(backend_name, workdir)
    services = SearchServices(backend=backend)
    nodes, edges = dataset.node_records(), dataset.edge_records()
    started = time.perf_counter()
    vectors = embed_nodes(nodes, services.profiles)
    embed_s = time.perf_counter() - started
    started = time.perf_counter()
    try:
        backend.load(nodes, edges, vectors, index_info(services.profiles), replace=True)
    except BaseException:
        backend.close()
        raise
    load_s = time.perf_counter() - started

    tenant = nodes[0].tenant_id
    titles = [n.title for n in nodes if n.tenant_id == tenant and n.title and n.node_type == "cdm.work_item"]
    step = max(1, len(titles) // searches)
    texts = titles[::step][:searches]

    def requests(depth: int) -> list[dict[str, Any]]:
        return [
            {"queryText": t, "filter": {"tenantId": tenant, "secured": False}, "options": {"expandDepth": depth}}
            for t in texts
        ]

    trips = ""
    try:
        d1 = run_searches(services, requests(1))
        before = backend.admin.round_trips()
        build_graph(services).invoke(cast(BrainSearchInput, requests(1)[0]))
        after = backend.admin.round_trips()
        trips = " + ".join(f"{key} {after[key] - before[key]}" for key in after)
        d2 = run_searches(services, requests(2))
    finally:
        backend.admin.drop_tenants(sorted({n.tenant_id for n in nodes}))
        backend.close()
    return Row(
        backend_name,
        len(nodes),
        len(edges),
        len(vectors),
        embed_s,
        load_s,
        statistics.median(d1),
        percentile(d1, 0.95),
        statistics.median(d2),
        percentile(d2, 0.95),
        trips,
    )


def print_table(rows: list[Row]) -> None:
    header = (
        f"{'backend':<15} {'nodes':>7} {'edges':>7} {'vectors':>7} {'embed s':>8} {'load s':>8} {'nodes/s':>8} "
        f"{'p50 ms':>7} {'p95 ms':>7} {'p50 d2':>7} {'p95 d2':>7}  round trips (depth 1)"
    )
    print(header)
    print("-" * len(header))
    for r in rows:
        print(
            f"{r.backend:<15} {r.nodes:>7} {r.edges:>7} {r.vectors:>7} {r.embed_s:>8.2f} {r.load_s:>8.2f} "
            f"{r.nodes / r.load_s:>8.0f} {r.p50_ms:>7.1f} {r.p95_ms:>7.1f} {r.p50_d2_ms:>7.1f} {r.p95_d2_ms:>7.1f}"
            f"  {r.round_trips}"
        )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000])
    parser.add_argument("--backends", nargs="+", default=["embedded", "neo4j-weaviate"])
    parser.add_argument("--searches", type=int, default=50, help="searches per size and depth")
    args = parser.parse_args(argv)
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="brain-graph-bench-") as workdir:
        for size in args.sizes:
            for name in args.backends:
                print(f"... {name}, {size} nodes", file=sys.stderr, flush=True)
                try:
                    rows.append(bench(name, size, args.searches, Path(workdir)))
                except BackendUnavailableError as error:
                    print(f"{name}: skipped ({error})", file=sys.stderr)
    print_table(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
