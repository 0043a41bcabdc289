"""Search latency (p50/p95/p99) and load throughput of the embedded and Neo4j + Weaviate backends.

    .venv/bin/python -m benchmarks.search_latency                    # 1k and 10k nodes, both backends
    .venv/bin/python -m benchmarks.search_latency --sizes 100000 --searches 20
    .venv/bin/python -m benchmarks.search_latency --backends embedded --sizes 1000 10000 100000 \
        --reuse-stores ~/.cache/brain-graph-bench     # keep the embedded stores: embed and load once

The Neo4j + Weaviate backend needs the servers (``eval "$(scripts/services up)"``); without them its
rows are reported as unavailable. Each size is a synthetic graph (:mod:`benchmarks.synthetic`, two
tenants, ~3 edges per node) loaded under tenant ids unique to the run and dropped afterwards.
Embedding is timed apart from loading. Searches run through the compiled LangGraph graph (query
embedding included), public scope, default options; ``depth 2`` runs set ``expandDepth=2``.

In the same run, ``numpy`` is the floor of a search: a bare numpy scan (float32 matrix-vector product
of the tenant's normalised vectors of each default profile, then the top ``topK``) for the same query
vectors, embedding excluded; ``ratio`` is the depth-1 p50 over the floor's p50. The table is printed
and written as JSON and markdown (``--out``, default ``benchmarks/results``).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import sqlite3
import statistics
import sys
import tempfile
import time
import uuid
from array import array
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import numpy as np
import numpy.typing as npt

from benchmarks.synthetic import synthetic_dataset
from brain_graph.dataset import Dataset, embed_nodes, index_info
from brain_graph.errors import BackendUnavailableError
from brain_graph.graph import build_graph
from brain_graph.services import SearchServices
from brain_graph.state import BrainSearchInput
from brain_graph.stores import StorageBackend, VectorRecord, build_backend

RESULTS = Path(__file__).parent / "results"
TOP_K = 20


@dataclass
class Row:
    backend: str
    nodes: int
    edges: int
    vectors: int
    embed_s: float | None  # None: a reused store (--reuse-stores), neither embedded nor loaded in this run
    load_s: float | None
    p50_ms: float
    p95_ms: float
    p99_ms: float
    cpu_p50_ms: float  # process CPU per search (client side: includes BLAS threads, not the servers)
    p50_d2_ms: float
    p95_d2_ms: float
    numpy_p50_ms: float
    numpy_p95_ms: float
    round_trips: str
    first_ms: float = 0.0  # the first search on a fresh graph and backend object (cold caches)
    split_ms: dict[str, float] = field(default_factory=dict)  # p50 per step, plus "graph" (the rest)

    @property
    def ratio(self) -> float:
        """Depth-1 p50 over the bare numpy scan's p50."""
        return self.p50_ms / self.numpy_p50_ms if self.numpy_p50_ms else float("nan")


def percentile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def prefixed(dataset: Dataset, prefix: str) -> Dataset:
    raw = dataset.model_dump(by_alias=True)
    for item in (*raw["nodes"], *raw["edges"]):
        item["tenantId"] = prefix + item["tenantId"]
    return Dataset.model_validate(raw)


def make_backend(name: str, workdir: Path, store_path: Path | None = None) -> StorageBackend:
    """A registered backend built from its settings (the embedded one on ``store_path``, else a fresh file)."""
    if name == "embedded":
        return build_backend(name, store_path=store_path or workdir / f"bench-{uuid.uuid4().hex[:8]}.sqlite3")
    if not os.environ.get("NEO4J_URI") or not os.environ.get("WEAVIATE_HTTP_PORT"):
        raise BackendUnavailableError(name, 'servers not configured: eval "$(scripts/services up)"')
    return build_backend(name)


def run_searches(services: SearchServices, requests: list[dict[str, Any]]) -> tuple[list[float], list[float], float]:
    """Wall-clock and process CPU milliseconds (all threads of this process) of each search, after a
    warm-up, and the milliseconds of the first search (cold: connections, caches, vector matrices)."""
    graph = build_graph(services)
    started = time.perf_counter()
    graph.invoke(cast(BrainSearchInput, requests[0]))
    first = (time.perf_counter() - started) * 1000
    for request in requests[1:5]:  # warm-up: connections, plan caches, profile cache, vector matrices
        graph.invoke(cast(BrainSearchInput, request))
    timings, cpu = [], []
    for request in requests:
        started, started_cpu = time.perf_counter(), time.process_time()
        graph.invoke(cast(BrainSearchInput, request))
        timings.append((time.perf_counter() - started) * 1000)
        cpu.append((time.process_time() - started_cpu) * 1000)
    return timings, cpu, first


def step_split(services: SearchServices, requests: list[dict[str, Any]]) -> dict[str, float]:
    """p50 milliseconds of each step (the steps' own ``custom`` stream events) and of the rest of the
    graph run (LangGraph and the step wrappers: ``graph``), over ``requests`` streamed once each."""
    graph = build_graph(services)
    per_step: dict[str, list[float]] = {}
    rest = []
    for request in requests:
        started = time.perf_counter()
        steps = 0.0
        for event in graph.stream(cast(BrainSearchInput, request), stream_mode="custom"):
            per_step.setdefault(event["step"], []).append(event["ms"])
            steps += event["ms"]
        rest.append((time.perf_counter() - started) * 1000 - steps)
    return {**{step: statistics.median(ms) for step, ms in per_step.items()}, "graph": statistics.median(rest)}


def stored_vectors(path: Path, tenant: str) -> list[VectorRecord]:
    """The vectors of ``tenant`` in an embedded store file, read directly (for the numpy floor)."""
    with sqlite3.connect(path) as db:
        rows = db.execute("SELECT node_id, profile_id, vector FROM vectors WHERE tenant_id = ?", (tenant,)).fetchall()
    return [
        VectorRecord(tenant, node_id, profile_id, None, False, (), array("f", blob))
        for node_id, profile_id, blob in rows
    ]


Matrices = dict[str, npt.NDArray[np.float32]]


def floor_matrices(services: SearchServices, vectors: Sequence[VectorRecord], tenant: str) -> Matrices:
    """The tenant's normalised float32 vectors of each default profile, for :func:`numpy_floor`."""
    matrices = {}
    for profile in (p for p in services.profiles.profiles if p.default):
        rows = [v.vector for v in vectors if v.tenant_id == tenant and v.profile_id == profile.profile_id]
        matrix = np.asarray(rows, dtype=np.float32).reshape(len(rows), profile.dimension)
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        matrices[profile.profile_id] = (matrix / np.where(norms == 0, 1, norms)).astype(np.float32, copy=False)
    return matrices


def numpy_floor(services: SearchServices, matrices: Matrices, texts: list[str]) -> list[float]:
    """Milliseconds per search of a bare numpy scan: for each default profile, the float32 product of the
    tenant's normalised vectors with the normalised query vector, then the best :data:`TOP_K` in order."""
    registry = services.profiles
    profiles = [p for p in registry.profiles if p.default]
    queries = []
    for text in texts:
        per_profile = {}
        for profile in profiles:
            query = np.asarray(registry.embedders[profile.embedder_id].embed_query(text), dtype=np.float32)
            per_profile[profile.profile_id] = query / (np.linalg.norm(query) or 1.0)
        queries.append(per_profile)
    timings = []
    for per_profile in queries:
        started = time.perf_counter()
        for profile_id, query in per_profile.items():
            scores = matrices[profile_id] @ query
            k = min(TOP_K, len(scores))
            if k:
                best = np.argpartition(scores, len(scores) - k)[len(scores) - k :]
                best[np.argsort(-scores[best], kind="stable")]
        timings.append((time.perf_counter() - started) * 1000)
    return timings


def bench(backend_name: str, size: int, searches: int, workdir: Path, reuse: Path | None = None) -> Row:
    """One backend at one size. With ``reuse`` (embedded only), the store file of this size is kept in
    that folder under fixed tenant ids and loaded only when it is not there yet."""
    reused = reuse is not None and backend_name == "embedded"
    prefix = "bench-" if reused else f"bench{uuid.uuid4().hex[:6]}-"
    dataset = prefixed(synthetic_dataset(size, tenants=2, seed=size), prefix)
    store_path = reuse / f"synthetic-{size}.sqlite3" if reuse is not None and reused else None
    backend = make_backend(backend_name, workdir, store_path)
    services = SearchServices(backend=backend)
    nodes, edges = dataset.node_records(), dataset.edge_records()
    tenant = nodes[0].tenant_id
    embed_s = load_s = None
    if store_path is not None and backend.admin.count(tenant).nodes == sum(n.tenant_id == tenant for n in nodes):
        vectors = stored_vectors(store_path, tenant)
    else:
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

    titles = [n.title for n in nodes if n.tenant_id == tenant and n.title and n.node_type == "cdm.work_item"]
    step = max(1, len(titles) // searches)
    texts = titles[::step][:searches]
    matrices = floor_matrices(services, vectors, tenant)
    tenants = sorted({n.tenant_id for n in nodes})
    node_count, edge_count = len(nodes), len(edges)
    # Drop the inputs (hundreds of thousands of objects at 100k nodes) and freeze what is left, so the
    # collector's full passes time the searches' objects, not the benchmark's.
    del dataset, nodes, edges, vectors
    gc.collect()
    gc.freeze()

    def requests(depth: int) -> list[dict[str, Any]]:
        return [
            {"queryText": t, "filter": {"tenantId": tenant, "secured": False}, "options": {"expandDepth": depth}}
            for t in texts
        ]

    trips = ""
    try:
        d1, cpu, first = run_searches(services, requests(1))
        split = step_split(services, requests(1))
        before = backend.admin.round_trips()
        build_graph(services).invoke(cast(BrainSearchInput, requests(1)[0]))
        after = backend.admin.round_trips()
        trips = " + ".join(f"{key} {after[key] - before[key]}" for key in after)
        d2, _, _ = run_searches(services, requests(2))
        floor = numpy_floor(services, matrices, texts)
        vector_count = sum(sum(backend.admin.count(t).vectors.values()) for t in tenants)
    finally:
        gc.unfreeze()
        if store_path is None:
            backend.admin.drop_tenants(tenants)
        backend.close()
    return Row(
        backend_name,
        node_count,
        edge_count,
        vector_count,
        embed_s,
        load_s,
        statistics.median(d1),
        percentile(d1, 0.95),
        percentile(d1, 0.99),
        statistics.median(cpu),
        statistics.median(d2),
        percentile(d2, 0.95),
        statistics.median(floor),
        percentile(floor, 0.95),
        trips,
        first,
        split,
    )


COLUMNS = (
    ("backend", "<15"),
    ("nodes", ">7"),
    ("edges", ">7"),
    ("vectors", ">7"),
    ("embed s", ">8"),
    ("load s", ">8"),
    ("nodes/s", ">8"),
    ("p50 ms", ">7"),
    ("p95 ms", ">7"),
    ("p99 ms", ">7"),
    ("cpu ms", ">7"),
    ("first ms", ">9"),
    ("p50 d2", ">7"),
    ("p95 d2", ">7"),
    ("numpy", ">6"),
    ("ratio", ">6"),
    ("round trips (depth 1)", ""),
)


def _cells(r: Row) -> list[str]:
    def seconds(value: float | None) -> str:
        return "-" if value is None else f"{value:.2f}"

    rate = "-" if not r.load_s else f"{r.nodes / r.load_s:.0f}"
    return [
        r.backend,
        str(r.nodes),
        str(r.edges),
        str(r.vectors),
        seconds(r.embed_s),
        seconds(r.load_s),
        rate,
        *(f"{value:.1f}" for value in (r.p50_ms, r.p95_ms, r.p99_ms, r.cpu_p50_ms, r.first_ms)),
        *(f"{value:.1f}" for value in (r.p50_d2_ms, r.p95_d2_ms)),
        f"{r.numpy_p50_ms:.2f}",
        f"{r.ratio:.1f}",
        r.round_trips,
    ]


def print_table(rows: list[Row]) -> None:
    header = " ".join(f"{name:{align}}" for name, align in COLUMNS)
    print(header)
    print("-" * len(header))
    for r in rows:
        print(" ".join(f"{cell:{align}}" for cell, (_, align) in zip(_cells(r), COLUMNS, strict=True)))


def split_table(rows: list[Row]) -> list[str]:
    """The per-step split as markdown lines."""
    steps = list(dict.fromkeys(step for r in rows for step in r.split_ms))
    lines = ["| backend | nodes | " + " | ".join(steps) + " |", "|---|---:|" + "---:|" * len(steps)]
    for r in rows:
        cells = [f"{r.split_ms[step]:.2f}" if step in r.split_ms else "-" for step in steps]
        lines.append(f"| {r.backend} | {r.nodes} | " + " | ".join(cells) + " |")
    return lines


def machine() -> dict[str, Any]:
    """What the numbers were measured on."""
    from importlib.metadata import version

    return {
        "platform": platform.platform(),
        "processor": platform.processor() or platform.machine(),
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "sqlite": sqlite3.sqlite_version,
        "brain-graph": version("brain-graph"),
    }


def write_results(rows: list[Row], out: Path, args: argparse.Namespace) -> None:
    """``search_latency.json`` (rows, machine, arguments) and ``search_latency.md`` (the table) in ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    meta = {"machine": machine(), "sizes": args.sizes, "backends": args.backends, "searches": args.searches}
    data = {**meta, "topK": TOP_K, "rows": [{**vars(r), "ratio": r.ratio} for r in rows]}
    (out / "search_latency.json").write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    lines = [
        "# Search latency",
        "",
        f"`python -m benchmarks.search_latency --sizes {' '.join(map(str, args.sizes))} "
        f"--backends {' '.join(args.backends)} --searches {args.searches}`; "
        + ", ".join(f"{key} {value}" for key, value in meta["machine"].items()),
        "",
        "Milliseconds per search through the compiled graph (query embedding included), topK 20; "
        "`cpu ms`: p50 of the process CPU time per search (client side); `numpy`: p50 of a bare numpy scan of "
        "the same vectors in the same run; `ratio`: p50 / numpy.",
        "",
        "| " + " | ".join(name for name, _ in COLUMNS) + " |",
        "|" + "|".join("---" if align.startswith("<") or not align else "---:" for _, align in COLUMNS) + "|",
        *("| " + " | ".join(_cells(r)) + " |" for r in rows),
        "",
        "p50 milliseconds per step at depth 1 (each step's own timing; `graph`: the rest of the run, LangGraph "
        "and the step wrappers):",
        "",
        *split_table(rows),
    ]
    (out / "search_latency.md").write_text("\n".join(lines) + "\n", encoding="utf-8")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000])
    parser.add_argument("--backends", nargs="+", default=["embedded", "neo4j-weaviate"])
    parser.add_argument("--searches", type=int, default=50, help="searches per size and depth")
    parser.add_argument("--out", type=Path, default=RESULTS, help="folder of the JSON and markdown results")
    parser.add_argument(
        "--reuse-stores",
        type=Path,
        default=None,
        help="keep the embedded stores in this folder and reuse them (embedding 100k nodes takes minutes)",
    )
    args = parser.parse_args(argv)
    rows: list[Row] = []
    if args.reuse_stores is not None:
        args.reuse_stores = args.reuse_stores.expanduser()
        args.reuse_stores.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="brain-graph-bench-") as workdir:
        for size in args.sizes:
            for name in args.backends:
                print(f"... {name}, {size} nodes", file=sys.stderr, flush=True)
                try:
                    rows.append(bench(name, size, args.searches, Path(workdir), args.reuse_stores))
                except BackendUnavailableError as error:
                    print(f"{name}: skipped ({error})", file=sys.stderr)
    print_table(rows)
    write_results(rows, args.out, args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
