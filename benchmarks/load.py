"""One end-to-end load in its own process, so that its peak memory is its own.

    python -m benchmarks.load graph.json --backend embedded --store bench.sqlite3
    python -m benchmarks.load graph.json --backend neo4j-weaviate      # servers from the environment

What ``brain-graph load`` does (:func:`brain_graph.indexing.dataset.read_graph`, then
:func:`brain_graph.indexing.dataset.load_dataset` with the bundled lexical embedder, replacing the file's
tenants): reading, validation, embedding and writing (connecting the server backend included), timed
together from the first byte read. Prints one JSON object: ``seconds``, ``nodes``, ``edges``,
``vectors``, ``peak_rss_mb`` (the process's peak resident memory, imports included) and
``start_rss_mb`` (the peak before the load: the imports). :func:`run_load` runs it from the benchmark.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class LoadResult:
    """What one load measured (see the module docstring)."""

    seconds: float
    nodes: int
    edges: int
    vectors: int
    peak_rss_mb: float
    start_rss_mb: float

    @property
    def nodes_per_s(self) -> float:
        return self.nodes / self.seconds if self.seconds else float("nan")


def peak_rss_mb() -> float:
    """This program's peak resident memory so far: ``VmHWM`` of ``/proc/self/status`` where there is
    one (the high-water mark of this program's own memory), else ``ru_maxrss``, which Linux carries
    over from the parent a child was forked from (a benchmark process of gigabytes would be counted
    as the child's peak). Both in kilobytes."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def load(path: Path, backend_name: str, store: Path | None) -> LoadResult:
    """Read, validate, embed and write ``path`` into the backend, replacing its tenants."""
    from brain_graph import SearchServices, build_backend, load_dataset
    from brain_graph.indexing.dataset import collector_paused, read_graph

    backend = build_backend(backend_name, store_path=store) if store is not None else build_backend(backend_name)
    try:
        services = SearchServices(backend=backend)
        start_rss = peak_rss_mb()
        started = time.perf_counter()
        with collector_paused():  # as the CLI
            report = load_dataset(read_graph(path), backend, services.profiles, replace=True)
        seconds = time.perf_counter() - started
    finally:
        backend.close()
    vectors = report.embedded + report.unchanged
    return LoadResult(seconds, report.nodes, report.edges, vectors, peak_rss_mb(), start_rss)


def run_load(path: Path, backend_name: str, store: Path | None = None) -> LoadResult:
    """:func:`load` in a child process (the same interpreter, the current environment)."""
    command = [sys.executable, "-m", "benchmarks.load", str(path), "--backend", backend_name]
    if store is not None:
        command += ["--store", str(store)]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"load of {path} into {backend_name} failed:\n{done.stderr.strip()}")
    return LoadResult(**json.loads(done.stdout))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="One end-to-end load, measured (JSON on stdout).")
    parser.add_argument("path", type=Path, help="dataset file")
    parser.add_argument("--backend", required=True, choices=("embedded", "neo4j-weaviate"))
    parser.add_argument("--store", type=Path, default=None, help="embedded store file")
    args = parser.parse_args(argv)
    result = load(args.path, args.backend, args.store)
    print(json.dumps(vars(result)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
