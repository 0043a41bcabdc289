"""The cost of brain-graph's metrics on a search: the same searches on the embedded example store with
the instrumentation (run counting, step and backend-read timing) and without it, interleaved one for
one so both kinds share the machine's state; prints the medians, the median per-pair ratio and the
difference of the medians.

    .venv/bin/python -m benchmarks.observability_overhead --searches 400

"Without" swaps the instrumentation's entry points for no-ops while its searches run: the run
stream's ``measured`` (:mod:`brain_graph.observability.searches`), the step histogram of
:mod:`brain_graph.pipeline.binding` and ``timed_reads`` in the retrieve and expand steps.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import statistics
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from unittest.mock import patch

import brain_graph.graphs.search as search_module
import brain_graph.pipeline.binding as binding
from brain_graph.graphs.search import build_graph
from brain_graph.indexing.dataset import example_dataset_path, read_dataset
from tests.helpers import make_store

QUERIES = ("token refresh", "duplicate card charges", "login timeout", "payment retries")
WARM_UP = 20
# The step modules (the package's names are the step functions themselves).
retrieve_step = importlib.import_module("brain_graph.nodes.retrieve")
expand_step = importlib.import_module("brain_graph.nodes.expand")


class _NoHistogram:
    """A histogram that records nothing."""

    def labels(self, *_: str) -> _NoHistogram:
        return self

    def observe(self, _: float) -> None:
        return None


@contextlib.contextmanager
def uninstrumented() -> Iterator[None]:
    """Within the block, searches run without metrics."""
    no_timing = _NoHistogram()
    with contextlib.ExitStack() as stack:
        stack.enter_context(patch.object(search_module, "measured", lambda events: events))
        stack.enter_context(patch.object(binding, "STEP_SECONDS", no_timing))
        for step in (retrieve_step, expand_step):
            stack.enter_context(patch.object(step, "timed_reads", lambda backend: backend.search_reads))
        yield


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--searches", type=int, default=400, help="measured searches of each kind")
    arguments = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        graph = build_graph(make_store(Path(directory), read_dataset(example_dataset_path())))
        requests: list[Any] = [
            {"queryText": query, "filter": {"tenantId": "acme", "secured": False}} for query in QUERIES
        ]
        times: dict[str, list[float]] = {"with": [], "without": []}
        packs: dict[str, list[Any]] = {"with": [], "without": []}
        for index in range(arguments.searches + WARM_UP):
            request = requests[index % len(requests)]
            for kind in ("with", "without") if index % 2 == 0 else ("without", "with"):
                with uninstrumented() if kind == "without" else contextlib.nullcontext():
                    started = time.perf_counter()
                    output = graph.invoke(request)
                    elapsed = time.perf_counter() - started
                if index >= WARM_UP:
                    times[kind].append(elapsed)
                if index < len(requests):
                    packs[kind].append(output["promptPack"])
        if packs["with"] != packs["without"]:
            raise SystemExit("the instrumentation changed a pack")
        with_ms = statistics.median(times["with"]) * 1000
        without_ms = statistics.median(times["without"]) * 1000
        ratios = [a / b for a, b in zip(times["with"], times["without"], strict=True)]
        print(f"searches of each kind: {arguments.searches} (embedded example store, interleaved)")
        print(f"median with metrics: {with_ms:.3f} ms, without: {without_ms:.3f} ms")
        print(
            f"median per-pair ratio: {statistics.median(ratios):.4f}; difference of medians: "
            f"{(with_ms - without_ms) * 1000:.1f} us; packs identical with and without"
        )


if __name__ == "__main__":
    main()
