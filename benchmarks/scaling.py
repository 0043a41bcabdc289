"""Scaling of the embedded store on one machine: a new process's first search, threads, processes.

Over one embedded store file (``--store``, loaded from the synthetic graph of ``--nodes`` when it does
not exist), the benchmark's searches (work-item titles of the first tenant, public scope, default
options) are run in four ways, in rounds that alternate between the settings compared, so that
whatever else the machine does falls on every setting alike:

- ``cold``: a new process builds the graph and times its first search, then the p50 of ``--searches``
  warm ones; the row is the median over ``--rounds`` processes of the first and of the warm p50.
- ``threads``: searches per second in one process with 1 thread and with ``--threads`` threads.
- ``processes``: searches per second in total with each of ``--processes`` worker processes searching
  at once (each process warmed up first, then started together).

Every figure carries the load average read before its round. The JSON goes to ``--out`` (default:
stdout only). Usage::

    .venv/bin/python -m benchmarks.scaling --nodes 100000 --store /tmp/bench/s100k.sqlite3
    .venv/bin/python -m benchmarks.scaling --nodes 100000 --store /tmp/bench/s100k.sqlite3 \\
        --processes 1 2 4 8 --threads 8 --rounds 5
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from multiprocessing.synchronize import Barrier
from pathlib import Path
from typing import Any

SEARCHED_TYPE = "cdm.work_item"


@dataclass
class Workload:
    """What every process searches: the store, its tenant and the query texts."""

    store: str
    tenant: str
    texts: list[str]

    def requests(self) -> list[dict[str, Any]]:
        scope = {"tenantId": self.tenant, "secured": False}
        return [{"queryText": text, "filter": scope, "options": {}} for text in self.texts]


@dataclass
class Report:
    """The measured rows, each with the load average before it."""

    nodes: int
    cold: list[dict[str, float]] = field(default_factory=list)
    threads: list[dict[str, float]] = field(default_factory=list)
    processes: list[dict[str, float]] = field(default_factory=list)


def load_average() -> float:
    return round(os.getloadavg()[0], 2)


def prepare(nodes: int, store: Path, searches: int) -> Workload:
    """The workload over ``store``, loading the synthetic graph of ``nodes`` (seed ``nodes``) into it
    first when the file does not exist."""
    from benchmarks.synthetic import write_graph
    from brain_graph import build_backend, default_profiles, load_dataset
    from brain_graph.indexing.dataset import read_graph

    with tempfile.TemporaryDirectory() as workdir:
        path = write_graph(Path(workdir) / f"synthetic-{nodes}.json", nodes, seed=nodes, tenant_prefix="scale")
        graph = read_graph(path)
        if not store.exists():
            store.parent.mkdir(parents=True, exist_ok=True)
            load_dataset(graph, build_backend("embedded", store_path=store), default_profiles(), replace=True)
    tenant = graph.nodes[0].tenant_id
    titles = [n.title for n in graph.nodes if n.tenant_id == tenant and n.title and n.node_type == SEARCHED_TYPE]
    return Workload(str(store), tenant, titles[:: max(1, len(titles) // searches)][:searches])


def compiled(workload: Workload) -> Any:
    from brain_graph import SearchServices, build_backend, build_graph, default_profiles

    backend = build_backend("embedded", store_path=Path(workload.store))
    return build_graph(SearchServices(backend=backend, profiles=default_profiles()))


def cold_process(workload: Workload, warm_searches: int) -> dict[str, float]:
    """In this (new) process: the first search's milliseconds, then the p50 of warm ones."""
    graph = compiled(workload)
    batch = workload.requests()
    started = time.perf_counter()
    graph.invoke(batch[0])
    first = (time.perf_counter() - started) * 1000
    for request in batch[:5]:
        graph.invoke(request)
    timings = []
    for index in range(warm_searches):
        started = time.perf_counter()
        graph.invoke(batch[index % len(batch)])
        timings.append((time.perf_counter() - started) * 1000)
    return {"first_ms": first, "warm_p50_ms": statistics.median(timings)}


def _cold_worker(workload: Workload, warm_searches: int, results: Any) -> None:
    try:
        results.put(cold_process(workload, warm_searches))
    except BaseException as error:
        results.put(error)
        raise


def _received(results: Any) -> Any:
    """The next result of a worker, raising what the worker raised."""
    got = results.get()
    if isinstance(got, BaseException):
        raise RuntimeError(f"a worker process failed: {got!r}")
    return got


def thread_rate(graph: Any, batch: list[dict[str, Any]], threads: int, searches: int) -> float:
    """Searches per second with ``threads`` searches at a time, over ``searches`` searches."""
    work = [batch[i % len(batch)] for i in range(searches)]
    with ThreadPoolExecutor(max_workers=threads) as pool:
        list(pool.map(graph.invoke, work[:threads]))
        started = time.perf_counter()
        list(pool.map(graph.invoke, work))
        return float(searches / (time.perf_counter() - started))


def _search_worker(workload: Workload, searches: int, ready: Barrier, results: Any) -> None:
    try:
        graph = compiled(workload)
        batch = workload.requests()
        for request in batch[:10]:
            graph.invoke(request)
    except BaseException as error:
        results.put(error)
        ready.abort()
        raise
    ready.wait()
    started = time.perf_counter()
    for index in range(searches):
        graph.invoke(batch[index % len(batch)])
    results.put((started, time.perf_counter(), searches))


def process_rate(workload: Workload, workers: int, searches_per_worker: int) -> float:
    """Searches per second in total with ``workers`` processes searching at once (started together,
    after each warmed up), from the first start to the last end."""
    context = mp.get_context("spawn")
    ready = context.Barrier(workers)
    results = context.Queue()
    processes = [
        context.Process(target=_search_worker, args=(workload, searches_per_worker, ready, results))
        for _ in range(workers)
    ]
    for process in processes:
        process.start()
    spans = [_received(results) for _ in processes]
    for process in processes:
        process.join()
    return float(sum(count for _, _, count in spans) / (max(end for _, end, _ in spans) - min(s for s, _, _ in spans)))


def run_cold(workload: Workload, rounds: int, warm_searches: int, report: Report) -> None:
    context = mp.get_context("spawn")
    for _ in range(rounds):
        results = context.Queue()
        load = load_average()
        process = context.Process(target=_cold_worker, args=(workload, warm_searches, results))
        process.start()
        row = _received(results)
        process.join()
        report.cold.append({**row, "ratio": row["first_ms"] / row["warm_p50_ms"], "load": load})


def run_threads(workload: Workload, rounds: int, threads: int, searches: int, report: Report) -> None:
    graph = compiled(workload)
    batch = workload.requests()
    for request in batch:
        graph.invoke(request)
    for _ in range(rounds):
        load = load_average()
        one = thread_rate(graph, batch, 1, searches)
        many = thread_rate(graph, batch, threads, searches)
        report.threads.append({"one": one, "many": many, "threads": threads, "ratio": many / one, "load": load})


def run_processes(workload: Workload, rounds: int, counts: Sequence[int], searches: int, report: Report) -> None:
    for _ in range(rounds):
        for workers in counts:
            load = load_average()
            rate = process_rate(workload, workers, searches)
            report.processes.append({"workers": workers, "per_s": rate, "load": load})


def summary(report: Report) -> dict[str, Any]:
    """Medians of each kind of row, and the ratios the issue's targets are stated in."""
    out: dict[str, Any] = {"nodes": report.nodes}
    if report.cold:
        out["cold"] = {key: statistics.median(row[key] for row in report.cold) for key in report.cold[0]}
    if report.threads:
        out["threads"] = {key: statistics.median(row[key] for row in report.threads) for key in report.threads[0]}
    if report.processes:
        by_count: dict[int, list[float]] = {}
        for row in report.processes:
            by_count.setdefault(int(row["workers"]), []).append(row["per_s"])
        rates = {workers: statistics.median(values) for workers, values in sorted(by_count.items())}
        one = rates.get(1)
        out["processes"] = {
            str(workers): {"per_s": rate, "vs_one": rate / one if one else None} for workers, rate in rates.items()
        }
    return out


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.scaling", description=__doc__.split("\n")[0])
    parser.add_argument("--nodes", type=int, default=100_000, help="nodes of the synthetic graph")
    parser.add_argument("--store", type=Path, required=True, help="embedded store file (loaded when missing)")
    parser.add_argument("--searches", type=int, default=50, help="distinct query texts")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of each measurement")
    parser.add_argument("--threads", type=int, default=8, help="threads of the threaded run")
    parser.add_argument("--processes", type=int, nargs="+", default=[1, 2], help="worker process counts")
    parser.add_argument("--per-worker", type=int, default=200, help="searches per thread run / per process")
    parser.add_argument("--only", nargs="+", choices=("cold", "threads", "processes"), default=None)
    parser.add_argument("--out", type=Path, default=None, help="JSON file of the rows and their summary")
    args = parser.parse_args(argv)
    if min(args.nodes, args.searches, args.rounds, args.threads, args.per_worker, *args.processes) < 1:
        parser.error("--nodes, --searches, --rounds, --threads, --per-worker and --processes must be at least 1")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    workload = prepare(args.nodes, args.store, args.searches)
    report = Report(args.nodes)
    only = set(args.only or ("cold", "threads", "processes"))
    if "cold" in only:
        run_cold(workload, args.rounds, 50, report)
    if "threads" in only:
        run_threads(workload, args.rounds, args.threads, args.per_worker, report)
    if "processes" in only:
        run_processes(workload, args.rounds, args.processes, args.per_worker, report)
    result = {"rows": asdict(report), "summary": summary(report)}
    text = json.dumps(result, indent=2, sort_keys=True)
    if args.out is not None:
        args.out.write_text(text + "\n", encoding="utf-8")
    print(json.dumps(result["summary"], indent=2, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
