"""Where a search's time goes: each step's wall and CPU time, the framework's floor, and a profile.

    .venv/bin/python -m benchmarks.step_profile --backend embedded --nodes 100000
    .venv/bin/python -m benchmarks.step_profile --backend neo4j-weaviate --nodes 1000   # servers running

Loads the synthetic graph of ``--nodes`` into the backend as :mod:`benchmarks.search_latency` does (the
same queries, public scope, default options), runs ``--warm-up`` unmeasured searches, then measures,
each over ``--searches`` searches through a compiled graph (query embedding included):

- ``search``: each search's wall time and process CPU time (every thread: gRPC's and the driver's too);
- each step's wall time and CPU time of the thread running it (timed inside its node, in a graph of
  timed steps run after the plain one); ``rest``: in that run, each search's wall time less its
  steps' (LangGraph, the node wrappers and the timing itself);
- ``framework``: the same compiled graph (:func:`brain_graph.graphs.search.compile_steps`: state, schemas,
  node wrappers) whose steps return the updates the real steps returned for the same request: what
  LangGraph and the wrappers cost over the real state, with no work of the steps;
- ``numpy``: the bare numpy scan of the same vectors (:func:`benchmarks.search_latency.numpy_floor`);
  ``floor ratio``: (framework + numpy) / numpy, the lowest ``ratio`` of the benchmark any steps could
  reach through this graph;

and writes a pyinstrument profile of ``--searches`` searches (``<backend>-<nodes>.txt``, with the
summary as ``<backend>-<nodes>.md``) to ``--out`` (default ``benchmarks/results/profiles``). The
graph is dropped afterwards. Needs the ``bench`` extra (pyinstrument).
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from benchmarks.load import run_load
from benchmarks.report import machine
from benchmarks.search_latency import (
    RESULTS,
    SERVER,
    floor_matrices,
    make_backend,
    numpy_floor,
    prepare,
    requests,
    settle,
    warm_up,
)
from benchmarks.server_cpu import server_pids
from brain_graph import BrainSearchGraph, BrainSearchInput, SearchServices, default_profiles
from brain_graph.graphs.search import PIPELINE, compile_steps
from brain_graph.pipeline.binding import Step, StepDeps
from brain_graph.pipeline.state import BrainSearchState

PROFILES = RESULTS / "profiles"
Timings = dict[str, list[tuple[float, float]]]  # step -> (wall ms, thread CPU ms) per search


@dataclass(frozen=True)
class StepProfile:
    """The p50s of one run, milliseconds."""

    backend: str
    nodes: int
    searches: int
    wall: float
    cpu: float
    steps: dict[str, tuple[float, float]]  # step -> (wall, thread CPU)
    rest: float  # per search of the timed run: its wall time less its steps'
    framework: float
    numpy: float

    @property
    def floor_ratio(self) -> float:
        return (self.framework + self.numpy) / self.numpy if self.numpy else float("nan")


def timed(name: str, step: Step, timings: Timings) -> Step:
    """``step``, appending its wall and thread CPU milliseconds to ``timings[name]``."""

    def run(state: BrainSearchState, deps: StepDeps) -> Mapping[str, Any]:
        wall, cpu = time.perf_counter(), time.thread_time()
        try:
            return step(state, deps)
        finally:
            elapsed = ((time.perf_counter() - wall) * 1000, (time.thread_time() - cpu) * 1000)
            timings.setdefault(name, []).append(elapsed)

    run.__doc__ = step.__doc__
    return run


def recording(name: str, step: Step, updates: dict[tuple[str, str], Mapping[str, Any]]) -> Step:
    """``step``, keeping its update by (step, query text)."""

    def run(state: BrainSearchState, deps: StepDeps) -> Mapping[str, Any]:
        update = step(state, deps)
        updates[(name, state["queryText"])] = update
        return update

    run.__doc__ = step.__doc__
    return run


def replaying(name: str, updates: Mapping[tuple[str, str], Mapping[str, Any]]) -> Step:
    """A step returning the update recorded for its query text (no work of its own)."""

    def run(state: BrainSearchState, deps: StepDeps) -> Mapping[str, Any]:
        return updates[(name, state["queryText"])]

    return run


def invoke_all(graph: BrainSearchGraph, batch: Sequence[dict[str, Any]]) -> list[tuple[float, float]]:
    """(wall ms, process CPU ms) of each search of ``batch``."""
    measured = []
    for request in batch:
        wall, cpu = time.perf_counter(), time.process_time()
        graph.invoke(cast(BrainSearchInput, request))
        measured.append(((time.perf_counter() - wall) * 1000, (time.process_time() - cpu) * 1000))
    return measured


def p50(values: Sequence[tuple[float, float]], index: int) -> float:
    return statistics.median(value[index] for value in values)


def summary(profile: StepProfile) -> str:
    """The markdown summary of a run."""
    lines = [
        f"# {profile.backend}, {profile.nodes} nodes: p50 of {profile.searches} searches, ms",
        "",
        "| | wall | CPU |",
        "|---|---:|---:|",
        f"| search (CPU: the process's) | {profile.wall:.2f} | {profile.cpu:.2f} |",
    ]
    lines += [f"| {name} (CPU: its thread's) | {wall:.2f} | {cpu:.2f} |" for name, (wall, cpu) in profile.steps.items()]
    steps_wall = sum(wall for wall, _ in profile.steps.values())
    lines += [
        f"| steps together | {steps_wall:.2f} | {sum(cpu for _, cpu in profile.steps.values()):.2f} |",
        f"| rest: LangGraph, node wrappers | {profile.rest:.2f} | |",
        f"| framework (the steps replayed) | {profile.framework:.2f} | |",
        f"| bare numpy scan | {profile.numpy:.2f} | |",
        "",
        f"Floor ratio (framework + numpy) / numpy: {profile.floor_ratio:.2f}; "
        f"the search's ratio: {profile.wall / profile.numpy:.2f}."
        if profile.numpy
        else "",
    ]
    return "\n".join(lines).rstrip() + "\n"


def profile_run(
    backend_name: str,
    nodes: int,
    searches: int,
    warm_up_searches: int,
    out: Path,
    profiled: Callable[[BrainSearchGraph, Sequence[dict[str, Any]]], str],
) -> StepProfile:
    """Load, measure, profile (``profiled(graph, batch)`` returns the profile's text) and drop."""
    profiles = default_profiles()
    with tempfile.TemporaryDirectory(prefix="brain-graph-profile-") as workdir:
        data = prepare(nodes, searches, Path(workdir), f"prof{uuid.uuid4().hex[:6]}-", profiles)
        store = Path(workdir) / "store.sqlite3"
        backend = make_backend(backend_name, store)
        services = SearchServices(backend=backend, profiles=profiles)
        timings: Timings = {}
        updates: dict[tuple[str, str], Mapping[str, Any]] = {}
        provider: Callable[[], SearchServices] = lambda: services  # noqa: E731
        real = compile_steps(PIPELINE, provider)
        steps = compile_steps([(name, timed(name, step, timings)) for name, step in PIPELINE], provider)
        recorder = compile_steps([(name, recording(name, step, updates)) for name, step in PIPELINE], provider)
        framework = compile_steps([(name, replaying(name, updates)) for name, _ in PIPELINE], provider)
        try:
            run_load(data.path, backend_name, store if backend_name == "embedded" else None)
            batch = requests(data, 1)
            settle(server_pids())
            warm_up(real, batch, warm_up_searches)
            invoke_all(recorder, batch)
            gc.collect()
            gc.freeze()
            plain = invoke_all(real, batch)
            invoke_all(steps, batch)  # warm the timed graph's own objects
            timings.clear()
            timed_runs = invoke_all(steps, batch)
            invoke_all(framework, batch)
            replayed = invoke_all(framework, batch)
            floor = numpy_floor(profiles, floor_matrices(profiles, data.vectors), data.texts)
            text = profiled(real, batch)
        finally:
            gc.unfreeze()
            backend.admin.drop_tenants(data.tenants)
            backend.close()
    result = StepProfile(
        backend_name,
        data.nodes,
        len(batch),
        p50(plain, 0),
        p50(plain, 1),
        {name: (p50(values, 0), p50(values, 1)) for name, values in timings.items()},
        statistics.median(
            wall - sum(values[index][0] for values in timings.values()) for index, (wall, _) in enumerate(timed_runs)
        ),
        p50(replayed, 0),
        statistics.median(floor),
    )
    out.mkdir(parents=True, exist_ok=True)
    stem = f"{backend_name}-{data.nodes}"
    (out / f"{stem}.txt").write_text(text)
    described = ", ".join(f"{key} {value}" for key, value in machine().items())
    header = f"`python -m benchmarks.step_profile --backend {backend_name} --nodes {nodes}`; {described}\n\n"
    (out / f"{stem}.md").write_text(summary(result).replace("\n\n", "\n\n" + header, 1))
    return result


def pyinstrument_text(graph: BrainSearchGraph, batch: Sequence[dict[str, Any]]) -> str:
    """A pyinstrument profile (text) of the searches of ``batch``, sampled every 0.2 ms."""
    from pyinstrument import Profiler

    profiler = Profiler(interval=0.0002, async_mode="disabled")
    profiler.start()
    for request in batch:
        graph.invoke(cast(BrainSearchInput, request))
    profiler.stop()
    return str(profiler.output_text(unicode=False, color=False, show_all=False))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--backend", choices=("embedded", SERVER), default="embedded")
    parser.add_argument("--nodes", type=int, default=1_000)
    parser.add_argument("--searches", type=int, default=200, help="measured searches (distinct queries, at most)")
    parser.add_argument("--warm-up", type=int, default=300, help="unmeasured searches first")
    parser.add_argument("--out", type=Path, default=PROFILES)
    args = parser.parse_args(argv)
    if args.nodes < 1 or args.searches < 1 or args.warm_up < 0:
        parser.error("--nodes and --searches must be at least 1, --warm-up at least 0")
    result = profile_run(args.backend, args.nodes, args.searches, args.warm_up, args.out, pyinstrument_text)
    sys.stdout.write(summary(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
