"""The cost of each retrieval mode: the same searches in ``vector``, ``lexical`` and ``hybrid`` mode,
interleaved in one run, on the embedded store and on Neo4j + Weaviate.

    .venv/bin/python -m benchmarks.hybrid_latency                      # 10k and 100k nodes, both backends
    .venv/bin/python -m benchmarks.hybrid_latency --sizes 100000 --backends embedded --searches 100 \
        --reuse-stores /tmp/hybrid-stores --profile                     # keep the store; pyinstrument profiles

Per size, the synthetic graph of :mod:`benchmarks.search_latency` (same file, same queries: work-item
titles of the first tenant, public scope, default options but ``retrievalMode``, ``--depth`` 1) is
loaded into each backend end to end (:mod:`benchmarks.load`, a child process). Then, on a fresh
backend object and graph:

1. ``first vector ms``: the first search (vector mode; on the embedded store it reads the tenant's
   vector matrices), then ``first lexical ms``: the first lexical search. On the embedded store that
   one builds the in-memory BM25 postings of each searched profile (read from the file once per data
   version, then cached with the matrices): ``build ms`` times that work alone (the statement reading
   the lexical documents, and :meth:`~brain_graph.stores.embedded.lexical.LexicalIndex.from_rows`),
   for the default profiles together, median of three; ``index MB`` is the postings' size as the cache
   counts it. On the server backend the first lexical search is only the first BM25 and ``Aggregate``
   requests.
2. ``--warm-up`` unmeasured searches, the modes in turn;
3. the measured searches: each query in every mode, one after the other, the order of the modes
   rotated from query to query, so that the modes share the machine's state (a 2-core VM shared with
   the servers and other work): p50/p95/p99 wall time per mode through the compiled graph (query
   embedding included), the client's process CPU (p50) and each local server's mean CPU per search;
4. the p50 of each step per mode (a streamed run of the same requests, interleaved the same way) and
   the round trips of one search per mode.

``/ vector`` (p50) is a mode's p50 over vector mode's p50 in the same run. With ``--profile`` a pyinstrument
profile (wall clock, 0.2 ms samples) of the searches in hybrid and in vector mode is written to
``<out>/profiles/hybrid-<backend>-<nodes>-<mode>.txt``. Results: printed, and
``<out>/hybrid_latency.{json,md}`` (default ``benchmarks/results``).
"""

from __future__ import annotations

import argparse
import gc
import json
import sqlite3
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, cast

from benchmarks import server_cpu
from benchmarks.load import run_load
from benchmarks.report import latency, machine
from benchmarks.search_latency import (
    RESULTS,
    SERVER,
    Prepared,
    make_backend,
    prepare,
    round_trips,
    server_versions,
    servers_configured,
    settle,
    warm_server,
)
from benchmarks.step_profile import pyinstrument_text
from brain_graph import (
    BackendUnavailableError,
    BrainSearchInput,
    ProfileRegistry,
    SearchServices,
    build_graph,
    default_profiles,
)
from brain_graph import BrainSearchGraph as Graph
from brain_graph.stores.embedded.lexical import LEXICAL_OF, LexicalIndex

MODES = ("vector", "lexical", "hybrid")
BASENAME = "hybrid_latency"


@dataclass
class ModeRow:
    """One retrieval mode of one backend at one size."""

    mode: str
    p50_ms: float
    p95_ms: float
    p99_ms: float
    cpu_p50_ms: float  # client process CPU per search (all threads)
    server_cpu_ms: dict[str, float]  # mean CPU per search of each local server process
    round_trips: str
    steps_ms: dict[str, float]  # p50 per step (streamed run)
    ratio: float = float("nan")  # p50 over vector mode's p50


@dataclass
class Result:
    """One backend at one size: the first searches, the lexical index build and the modes."""

    backend: str
    nodes: int
    vectors: int
    searches: int
    load_s: float | None
    first_vector_ms: float
    first_lexical_ms: float
    build_ms: float | None  # embedded: reading the lexical documents and building the postings, alone
    read_ms: float | None  # embedded: the statement reading them (part of build_ms)
    index_mb: float | None
    modes: list[ModeRow] = field(default_factory=list)


def mode_requests(data: Prepared, mode: str, depth: int) -> list[dict[str, Any]]:
    """The searches of one mode: public scope in the searched tenant, default options but the mode and depth."""
    scope = {"tenantId": data.tenant, "secured": False}
    return [
        {"queryText": t, "filter": scope, "options": {"expandDepth": depth, "retrievalMode": mode}} for t in data.texts
    ]


def rotated(index: int) -> list[str]:
    """The modes in the order of query ``index``: each mode first, second and third in turn."""
    shift = index % len(MODES)
    return [*MODES[shift:], *MODES[:shift]]


def invoke(graph: Graph, request: dict[str, Any]) -> float:
    """One search's wall milliseconds."""
    started = time.perf_counter()
    graph.invoke(cast(BrainSearchInput, request))
    return (time.perf_counter() - started) * 1000


def measure(
    graph: Graph, batches: dict[str, list[dict[str, Any]]], servers: dict[str, int]
) -> tuple[dict[str, list[float]], dict[str, list[float]], dict[str, dict[str, float]]]:
    """Wall and process CPU milliseconds of every search per mode, interleaved (:func:`rotated`), and
    each server's mean CPU milliseconds per search per mode (read around each search, outside its time)."""
    wall: dict[str, list[float]] = {mode: [] for mode in MODES}
    cpu: dict[str, list[float]] = {mode: [] for mode in MODES}
    spent: dict[str, dict[str, float]] = {mode: {} for mode in MODES}
    for index in range(len(batches[MODES[0]])):
        for mode in rotated(index):
            before = server_cpu.snapshot(servers)
            started_cpu = time.process_time()
            wall[mode].append(invoke(graph, batches[mode][index]))
            cpu[mode].append((time.process_time() - started_cpu) * 1000)
            after = server_cpu.snapshot(servers)
            for name, seconds in server_cpu.per_search_ms(before, after, 1).items():
                spent[mode][name] = spent[mode].get(name, 0.0) + seconds
    count = len(batches[MODES[0]])
    per_search = {mode: {name: ms / count for name, ms in totals.items()} for mode, totals in spent.items()}
    return wall, cpu, per_search


def step_split(graph: Graph, batches: dict[str, list[dict[str, Any]]]) -> dict[str, dict[str, float]]:
    """p50 milliseconds of each step per mode, from the steps' own ``custom`` stream events, interleaved."""
    per_step: dict[str, dict[str, list[float]]] = {mode: {} for mode in MODES}
    for index in range(len(batches[MODES[0]])):
        for mode in rotated(index):
            for event in graph.stream(cast(BrainSearchInput, batches[mode][index]), stream_mode="custom"):
                per_step[mode].setdefault(event["step"], []).append(event["ms"])
    return {mode: {step: statistics.median(ms) for step, ms in steps.items()} for mode, steps in per_step.items()}


def lexical_build(store_path: Path, tenant: str, profiles: ProfileRegistry) -> tuple[float, float, float]:
    """Reading the default profiles' lexical documents of ``tenant`` and building their postings, alone
    (milliseconds: the whole, the reads), median of three, and the postings' size in MB."""
    defaults = sorted(p.profile_id for p in profiles.profiles if p.default)
    db = sqlite3.connect(f"file:{store_path}?mode=ro", uri=True)
    db.row_factory = sqlite3.Row
    totals, reads, size = [], [], 0
    try:
        for _ in range(3):
            total = read = 0.0
            size = 0
            for profile_id in defaults:
                started = time.perf_counter()
                rows = db.execute(LEXICAL_OF, {"tenant": tenant, "profile": profile_id}).fetchall()
                read += time.perf_counter() - started
                index = LexicalIndex.from_rows(tenant, rows)
                total += time.perf_counter() - started
                size += index.nbytes
            totals.append(total * 1000)
            reads.append(read * 1000)
    finally:
        db.close()
    return statistics.median(totals), statistics.median(reads), size / 1e6


def bench(name: str, data: Prepared, options: argparse.Namespace, workdir: Path, profiles: ProfileRegistry) -> Result:
    """Every mode of one backend at one size (see the module docstring)."""
    reused = options.reuse_stores is not None and name == "embedded"
    folder = options.reuse_stores if reused else workdir
    store_path = folder / (f"synthetic-{data.size}.sqlite3" if reused else f"bench-{uuid.uuid4().hex[:8]}.sqlite3")
    backend = make_backend(name, store_path)
    graph = build_graph(SearchServices(backend=backend, profiles=profiles))
    servers = server_cpu.server_pids() if name == SERVER else {}
    try:
        loaded = None
        if not (reused and backend.admin.count(data.tenant).nodes):  # a load writes the whole file or nothing
            loaded = run_load(data.path, name, store_path if name == "embedded" else None)
        gc.collect()
        gc.freeze()
        batches = {mode: mode_requests(data, mode, options.depth) for mode in MODES}
        settle(server_cpu.server_pids())
        first_vector = invoke(graph, batches["vector"][0])
        first_lexical = invoke(graph, batches["lexical"][0])
        build = read = size = None
        if name == "embedded":
            build, read, size = lexical_build(store_path, data.tenant, profiles)
        for index in range(options.warm_up):
            graph.invoke(cast(BrainSearchInput, batches[MODES[index % 3]][(index // 3) % len(data.texts)]))
        wall, cpu, spent = measure(graph, batches, servers)
        steps = step_split(graph, batches)
        trips = {mode: round_trips(backend, graph, batches[mode][0]) for mode in MODES}
        if options.profile:
            out = options.out / "profiles"
            out.mkdir(parents=True, exist_ok=True)
            for mode in ("hybrid", "vector"):
                path = out / f"hybrid-{name}-{data.nodes}-{mode}.txt"
                path.write_text(pyinstrument_text(graph, batches[mode]))
                print(f"wrote {path}", file=sys.stderr)
        vectors = sum(sum(backend.admin.count(t).vectors.values()) for t in data.tenants)
    finally:
        gc.unfreeze()
        if not reused:
            backend.admin.drop_tenants(data.tenants)
        backend.close()
    rows = [
        ModeRow(mode, *latency(wall[mode]), statistics.median(cpu[mode]), spent[mode], trips[mode], steps[mode])
        for mode in MODES
    ]
    for row in rows:
        row.ratio = row.p50_ms / rows[0].p50_ms
    return Result(
        name,
        data.nodes,
        vectors,
        len(data.texts),
        loaded.seconds if loaded else None,
        first_vector,
        first_lexical,
        build,
        read,
        size,
        rows,
    )


def _fixed(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def tables(results: Sequence[Result]) -> list[str]:
    """The markdown tables: per mode, then the first searches and the embedded lexical index."""
    lines = [
        "| backend | nodes | mode | p50 ms | p95 ms | p99 ms | / vector (p50) | cpu ms | server cpu ms | retrieve ms"
        " | round trips |",
        "|---|---:|---|---:|---:|---:|---:|---:|---|---:|---|",
    ]
    for result in results:
        for row in result.modes:
            servers = " + ".join(f"{name} {ms:.1f}" for name, ms in sorted(row.server_cpu_ms.items())) or "-"
            lines.append(
                f"| {result.backend} | {result.nodes} | {row.mode} | {row.p50_ms:.1f} | {row.p95_ms:.1f}"
                f" | {row.p99_ms:.1f} | {row.ratio:.2f}× | {row.cpu_p50_ms:.1f} | {servers}"
                f" | {_fixed(row.steps_ms.get('retrieve'))} | {row.round_trips} |"
            )
    lines += [
        "",
        "| backend | nodes | vectors | load s | searches per mode | first vector ms | first lexical ms"
        " | build ms (read) | index MB |",
        "|---|---:|---:|---:|---:|---:|---:|---|---:|",
    ]
    for result in results:
        build = "-" if result.build_ms is None else f"{result.build_ms:.0f} ({_fixed(result.read_ms, 0)})"
        lines.append(
            f"| {result.backend} | {result.nodes} | {result.vectors} | {_fixed(result.load_s)} | {result.searches}"
            f" | {result.first_vector_ms:.1f} | {result.first_lexical_ms:.1f} | {build} | {_fixed(result.index_mb)} |"
        )
    return lines


def step_table(results: Sequence[Result]) -> list[str]:
    """p50 of each step per mode (streamed run)."""
    steps = list(dict.fromkeys(step for r in results for row in r.modes for step in row.steps_ms))
    lines = [
        "| backend | nodes | mode | " + " | ".join(steps) + " |",
        "|---|---:|---|" + "---:|" * len(steps),
    ]
    for result in results:
        for row in result.modes:
            cells = " | ".join(_fixed(row.steps_ms.get(step), 2) for step in steps)
            lines.append(f"| {result.backend} | {result.nodes} | {row.mode} | {cells} |")
    return lines


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--backends", nargs="+", choices=("embedded", SERVER), default=["embedded", SERVER])
    parser.add_argument("--searches", type=int, default=100, help="distinct queries, each searched in every mode")
    parser.add_argument("--warm-up", type=int, default=150, help="unmeasured searches before the measured ones")
    parser.add_argument("--depth", type=int, default=1, help="expandDepth of every search")
    parser.add_argument("--profile", action="store_true", help="write pyinstrument profiles of hybrid and vector")
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--reuse-stores", type=Path, default=None, help="keep the embedded stores in this folder")
    args = parser.parse_args(argv)
    if args.searches < 1 or args.warm_up < 0 or args.depth < 0:
        parser.error("--searches must be at least 1, --warm-up and --depth at least 0")
    if args.reuse_stores is not None:
        args.reuse_stores = args.reuse_stores.expanduser()
        args.reuse_stores.mkdir(parents=True, exist_ok=True)
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    profiles = default_profiles()
    results: list[Result] = []
    with tempfile.TemporaryDirectory(prefix="brain-graph-hybrid-") as workdir:
        if SERVER in args.backends and servers_configured():
            warm_server(Path(workdir))
        for size in args.sizes:
            prefix = "bench-" if args.reuse_stores is not None else f"bench{uuid.uuid4().hex[:6]}-"
            data = prepare(size, args.searches, Path(workdir), prefix, profiles)
            for name in args.backends:
                print(f"... {name}, {size} nodes", file=sys.stderr, flush=True)
                try:
                    results.append(bench(name, data, args, Path(workdir), profiles))
                except BackendUnavailableError as error:
                    print(f"{name}: skipped ({error})", file=sys.stderr)
    command = " ".join(["python -m benchmarks.hybrid_latency", *(sys.argv[1:] if argv is None else argv)])
    markdown = "\n".join(
        [f"`{command}`", "", *tables(results), "", "p50 of each step, per mode (ms):", "", *step_table(results), ""]
    )
    print(markdown)
    meta = {
        "machine": machine(server_versions() if SERVER in args.backends else {}),
        "arguments": {key: str(value) if isinstance(value, Path) else value for key, value in vars(args).items()},
        "command": command,
    }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / f"{BASENAME}.json").write_text(
        json.dumps({**meta, "results": [asdict(r) for r in results]}, indent=2) + "\n"
    )
    (args.out / f"{BASENAME}.md").write_text(markdown)
    return 0


if __name__ == "__main__":
    sys.exit(main())
