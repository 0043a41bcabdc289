"""Load rate, search latency and throughput of the embedded and Neo4j + Weaviate backends, and the peer.

    make bench                                                    # installs, starts and stops the servers
    .venv/bin/python -m benchmarks.search_latency                 # 1k, 10k and 100k nodes, both backends, the peer
    .venv/bin/python -m benchmarks.search_latency --smoke     # --sizes 300 --searches 5 --warm-up 5: under a minute
    .venv/bin/python -m benchmarks.search_latency --backends embedded --sizes 1000 10000 100000 \
        --reuse-stores ~/.cache/brain-graph-bench     # keep the embedded stores: generate and load once

The Neo4j + Weaviate backend and the peer need the servers (``eval "$(scripts/services up)"``);
without them those rows are skipped. Per size, a synthetic graph (:mod:`benchmarks.synthetic`, two
tenants, ~3 edges per node, seeded by the size) is written as a dataset file under tenant ids unique
to the run, loaded into each backend end to end by :mod:`benchmarks.load` (a child process: read,
validate, embed, write; its time and peak memory), searched in one tenant and dropped afterwards.
Before the measured searches the benchmark waits until the local servers are idle (a load or drop
goes on in the background) and, after the first search (``first ms``, cold caches), runs
``--warm-up`` unmeasured searches (300; the peer the same, at most 15 s): a young Neo4j's JIT
otherwise times its own compilation. Searches run through the compiled LangGraph graph (query
embedding included), public scope, default options (topK 20, depth 1); ``d2`` runs set
``expandDepth=2``; throughput is measured one at a time and with ``--concurrency`` searches in
threads. On the server backend, the peer (:mod:`benchmarks.peer`, neo4j-graphrag's
``WeaviateNeo4jRetriever``) searches the same tenant's graph and vectors on the same servers.

In the same run, ``numpy`` is the floor of a search: a bare numpy scan (float32 matrix-vector product
of the tenant's normalised vectors of each default profile, then the top ``topK``) for the same query
vectors, embedding excluded; ``ratio`` is the depth-1 p50 over the floor's p50. Results are printed
and written as JSON, markdown and a PNG plot (:mod:`benchmarks.report`; ``--out``, default
``benchmarks/results``).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import sys
import tempfile
import time
import urllib.request
import uuid
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import numpy as np
import numpy.typing as npt

from benchmarks import server_cpu
from benchmarks.load import run_load
from benchmarks.report import PeerRow, Row, latency, machine, peer_table, text_table, write_results
from benchmarks.synthetic import write_graph
from brain_graph import (
    BackendUnavailableError,
    BrainSearchInput,
    ProfileRegistry,
    SearchServices,
    StorageBackend,
    build_backend,
    build_graph,
    default_profiles,
)
from brain_graph import BrainSearchGraph as Graph
from brain_graph.indexing.dataset import read_graph
from brain_graph.indexing.report import IndexReport
from brain_graph.indexing.vector_stream import made_vectors
from brain_graph.stores import VectorRecord

RESULTS = Path(__file__).parent / "results"
SMOKE_RESULTS = RESULTS / "smoke"  # not committed (.gitignore)
TOP_K = 20
WARM_UP = 5  # searches before each measured run: connections, plan caches, profile cache, vector matrices
WARM_UP_SEARCHES = 300  # unmeasured searches per backend and size after the first (--warm-up)
SERVER = "neo4j-weaviate"
Matrices = dict[str, npt.NDArray[np.float32]]


@dataclass
class Prepared:
    """One size's dataset file and what the searches need of it (the searched tenant's default-profile
    vectors, embedded here: ``embed_s`` is embedding every node of the file)."""

    size: int
    path: Path
    nodes: int
    edges: int
    tenant: str
    tenants: list[str]
    texts: list[str]
    vectors: list[VectorRecord]
    embed_s: float


def prepare(size: int, searches: int, workdir: Path, prefix: str, profiles: ProfileRegistry) -> Prepared:
    """Write the synthetic graph of ``size`` (seed ``size``) and pick the query texts: work-item titles
    of the first tenant, spread over it."""
    path = write_graph(workdir / f"synthetic-{size}.json", size, seed=size, tenant_prefix=prefix)
    graph = read_graph(path)
    tenant = graph.nodes[0].tenant_id
    defaults = {p.profile_id for p in profiles.profiles if p.default}
    started = time.perf_counter()
    made = made_vectors(graph.nodes, profiles, IndexReport())  # only the searched tenant's are kept
    vectors = [v for v in made if v.tenant_id == tenant and v.profile_id in defaults]
    embed_s = time.perf_counter() - started
    titles = [n.title for n in graph.nodes if n.tenant_id == tenant and n.title and n.node_type == "cdm.work_item"]
    texts = titles[:: max(1, len(titles) // searches)][:searches]
    return Prepared(
        size,
        path,
        len(graph.nodes),
        len(graph.edges),
        tenant,
        sorted({n.tenant_id for n in graph.nodes}),
        texts,
        vectors,
        embed_s,
    )


def servers_configured() -> bool:
    """Whether the environment names Neo4j and Weaviate servers (``eval "$(scripts/services up)"``)."""
    return bool(os.environ.get("NEO4J_URI") and os.environ.get("WEAVIATE_HTTP_PORT"))


def make_backend(name: str, store_path: Path) -> StorageBackend:
    """A registered backend built from its settings (the embedded one on ``store_path``)."""
    if name == "embedded":
        return build_backend(name, store_path=store_path)
    if not servers_configured():
        raise BackendUnavailableError(name, 'servers not configured: eval "$(scripts/services up)"')
    return build_backend(name)


def requests(data: Prepared, depth: int) -> list[dict[str, Any]]:
    """The searches of one run: public scope in the searched tenant, default options but the depth."""
    scope = {"tenantId": data.tenant, "secured": False}
    return [{"queryText": t, "filter": scope, "options": {"expandDepth": depth}} for t in data.texts]


def run_searches(
    graph: Graph, batch: list[dict[str, Any]], servers: Mapping[str, int] | None = None
) -> tuple[list[float], list[float], dict[str, float]]:
    """Wall-clock and process CPU milliseconds (all threads of this process) of each search, after a
    warm-up, and the mean CPU milliseconds per search of each local server process in ``servers``."""
    for request in batch[:WARM_UP]:
        graph.invoke(cast(BrainSearchInput, request))
    timings, cpu = [], []
    before = server_cpu.snapshot(servers or {})
    for request in batch:
        started, started_cpu = time.perf_counter(), time.process_time()
        graph.invoke(cast(BrainSearchInput, request))
        timings.append((time.perf_counter() - started) * 1000)
        cpu.append((time.process_time() - started_cpu) * 1000)
    return timings, cpu, server_cpu.per_search_ms(before, server_cpu.snapshot(servers or {}), len(batch))


def warm_up(graph: Graph, batch: list[dict[str, Any]], searches: int) -> None:
    """Run ``searches`` searches of ``batch`` (repeated) unmeasured: a young Neo4j's JIT compiles for
    thousands of statements after a start and spends several times a long-running server's CPU on
    each meanwhile (the figures: "Warm servers" in benchmarks/README.md)."""
    for index in range(searches):
        graph.invoke(cast(BrainSearchInput, batch[index % len(batch)]))


def settle(servers: Mapping[str, int], quiet_share: float = 0.1, limit_s: float = 60.0) -> float:
    """Wait until the local servers spend less than ``quiet_share`` of a core (over half a second),
    at most ``limit_s`` seconds: after a load or a drop they flush, sample index statistics and
    collect garbage, on the cores the next measured searches use. The seconds waited."""
    started = time.perf_counter()
    while servers and time.perf_counter() - started < limit_s:
        before = server_cpu.snapshot(servers)
        time.sleep(0.5)
        after = server_cpu.snapshot(servers)
        if sum(after[name] - before[name] for name in before if name in after) < quiet_share * 0.5:
            break
    return time.perf_counter() - started


def concurrent_rate(graph: Graph, batch: list[dict[str, Any]], workers: int) -> float:
    """Searches per second with ``workers`` searches at a time in threads, over at least four searches
    per thread (``batch`` repeated), after one warm-up search per thread."""
    total = max(len(batch), 4 * workers)
    work = [batch[i % len(batch)] for i in range(total)]

    def search(request: dict[str, Any]) -> None:
        graph.invoke(cast(BrainSearchInput, request))

    with ThreadPoolExecutor(max_workers=workers) as pool:
        list(pool.map(search, work[:workers]))
        started = time.perf_counter()
        list(pool.map(search, work))
        return total / (time.perf_counter() - started)


def step_split(graph: Graph, batch: list[dict[str, Any]]) -> dict[str, float]:
    """p50 milliseconds of each step (the steps' own ``custom`` stream events) and of the rest of the
    graph run (LangGraph and the step wrappers: ``graph``), over ``batch``.

    Each request is streamed once for its steps' times and invoked once for its total: ``graph`` is
    the invoked run's wall time less its steps' streamed times. Streaming ``custom`` events makes
    LangGraph run every step on a worker thread while the caller's thread waits for events, which
    adds several milliseconds of hand-over an invoked run (the benchmark's searches) does not pay.
    """
    per_step: dict[str, list[float]] = {}
    rest = []
    for request in batch:
        steps = 0.0
        for event in graph.stream(cast(BrainSearchInput, request), stream_mode="custom"):
            per_step.setdefault(event["step"], []).append(event["ms"])
            steps += event["ms"]
        started = time.perf_counter()
        graph.invoke(cast(BrainSearchInput, request))
        rest.append((time.perf_counter() - started) * 1000 - steps)
    return {**{step: statistics.median(ms) for step, ms in per_step.items()}, "graph": statistics.median(rest)}


def floor_matrices(profiles: ProfileRegistry, vectors: Sequence[VectorRecord]) -> Matrices:
    """The normalised float32 vectors of each default profile, for :func:`numpy_floor`."""
    matrices = {}
    for profile in (p for p in profiles.profiles if p.default):
        rows = [np.asarray(v.vector, dtype=np.float32) for v in vectors if v.profile_id == profile.profile_id]
        matrix = np.asarray(rows, dtype=np.float32).reshape(len(rows), profile.dimension)
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        matrices[profile.profile_id] = (matrix / np.where(norms == 0, 1, norms)).astype(np.float32, copy=False)
    return matrices


def numpy_floor(profiles: ProfileRegistry, matrices: Matrices, texts: list[str]) -> list[float]:
    """Milliseconds per search of a bare numpy scan: for each default profile, the float32 product of the
    tenant's normalised vectors with the normalised query vector, then the best :data:`TOP_K` in order."""
    queries = []
    for text in texts:
        per_profile = {}
        for profile in (p for p in profiles.profiles if p.default):
            query = np.asarray(profiles.embedders[profile.embedder_id].embed_query(text), dtype=np.float32)
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


def round_trips(backend: StorageBackend, graph: Graph, request: dict[str, Any]) -> str:
    """Requests to each server during one search ("" for the embedded store)."""
    before = backend.admin.round_trips()
    graph.invoke(cast(BrainSearchInput, request))
    after = backend.admin.round_trips()
    return " + ".join(f"{key} {after[key] - before[key]}" for key in after)


def warm_server(workdir: Path) -> None:
    """Load and drop a 20-node graph on the server backend, so that the first measured load does not
    pay for creating the schema (constraints, indexes, collections) on fresh servers."""
    backend = make_backend(SERVER, workdir)
    prefix = f"benchwarm{uuid.uuid4().hex[:6]}-"
    try:
        run_load(write_graph(workdir / "warm-up.json", 20, tenant_prefix=prefix), SERVER)
    finally:
        backend.admin.drop_tenants([f"{prefix}tenant0", f"{prefix}tenant1"])
        backend.close()


def peer_row(data: Prepared, profiles: ProfileRegistry, warm_up_searches: int) -> PeerRow:
    """The peer's latency on the size's tenant (:mod:`benchmarks.peer`), on the loaded server backend."""
    from benchmarks.peer import Peer, run_peer_searches

    defaults = {p.profile_id for p in profiles.profiles if p.default}
    embedder = profiles.embedders[profiles.get(sorted(defaults)[0]).embedder_id]
    peer = Peer(data.tenants, data.tenant, data.vectors, defaults, embedder)
    with peer as retriever:
        timings = run_peer_searches(retriever, data.texts, warm_up_searches)
    return PeerRow(data.nodes, len(data.vectors), peer.scanned_nodes, *latency(timings))


def bench(
    name: str, data: Prepared, options: argparse.Namespace, workdir: Path, profiles: ProfileRegistry
) -> tuple[Row, PeerRow | None]:
    """One backend at one size (and the peer, on the server backend). With ``--reuse-stores`` the
    embedded store of this size is kept in that folder and loaded only when it is not there yet."""
    reused = options.reuse_stores is not None and name == "embedded"
    folder = options.reuse_stores if reused else workdir
    store_path = folder / (f"synthetic-{data.size}.sqlite3" if reused else f"bench-{uuid.uuid4().hex[:8]}.sqlite3")
    backend = make_backend(name, store_path)
    graph = build_graph(SearchServices(backend=backend, profiles=profiles))
    matrices = floor_matrices(profiles, data.vectors)
    peer = None
    try:
        loaded = None
        if not (reused and backend.admin.count(data.tenant).nodes):  # a load writes the whole file or nothing
            loaded = run_load(data.path, name, store_path if name == "embedded" else None)
        gc.collect()
        gc.freeze()  # the collector's full passes time the searches' objects, not the benchmark's
        depth1 = requests(data, 1)
        settle(server_cpu.server_pids())  # the previous size's load or drop, on either backend's cores
        started = time.perf_counter()
        graph.invoke(cast(BrainSearchInput, depth1[0]))
        first = (time.perf_counter() - started) * 1000
        warm_up(graph, depth1, options.warm_up)
        d1, cpu, servers_cpu = run_searches(graph, depth1, server_cpu.server_pids() if name == SERVER else None)
        concurrent = concurrent_rate(graph, depth1, options.concurrency)
        split = step_split(graph, depth1)
        trips = round_trips(backend, graph, depth1[0])
        d2, _, _ = run_searches(graph, requests(data, 2))
        floor = numpy_floor(profiles, matrices, data.texts)
        vectors = sum(sum(backend.admin.count(t).vectors.values()) for t in data.tenants)
        if name == SERVER and options.peer:
            peer = peer_row(data, profiles, options.warm_up)
    finally:
        gc.unfreeze()
        if not reused:
            backend.admin.drop_tenants(data.tenants)
        backend.close()
    row = Row(
        name,
        data.nodes,
        data.edges,
        vectors,
        loaded.seconds if loaded else None,
        loaded.peak_rss_mb if loaded else None,
        data.embed_s,
        *latency(d1),
        statistics.median(cpu),
        first,
        *latency(d2)[:2],
        *latency(floor)[:2],
        trips,
        len(d1) * 1000 / sum(d1),
        concurrent,
        options.concurrency,
        split,
        servers_cpu,
    )
    return row, peer


def server_versions() -> dict[str, str]:
    """Neo4j's and Weaviate's versions, when the servers are configured and answer."""
    from brain_graph.stores.neo4j_weaviate.backend import Neo4jWeaviateSettings

    if not servers_configured():
        return {}
    settings = Neo4jWeaviateSettings()
    versions = {}
    try:
        import neo4j

        with neo4j.GraphDatabase.driver(settings.neo4j_uri, auth=(settings.neo4j_user, settings.neo4j_password)) as d:
            records, _, _ = d.execute_query("CALL dbms.components() YIELD versions, edition RETURN versions, edition")
        versions["neo4j server"] = f"{records[0]['versions'][0]} {records[0]['edition']}"
    except Exception as error:  # a version is informative: report the run without it
        print(f"neo4j version: {error}", file=sys.stderr)
    try:
        url = f"http://{settings.weaviate_host}:{settings.weaviate_http_port}/v1/meta"
        with urllib.request.urlopen(url, timeout=5) as response:
            versions["weaviate server"] = str(json.load(response)["version"])
    except Exception as error:
        print(f"weaviate version: {error}", file=sys.stderr)
    return versions


def peer_available(options: argparse.Namespace) -> bool:
    """Whether the peer runs: asked for, the server backend in the run, neo4j-graphrag installed."""
    if not options.peer or SERVER not in options.backends:
        return False
    try:
        import benchmarks.peer  # noqa: F401
    except ImportError as error:
        print(f"peer: skipped ({error}; make install-bench)", file=sys.stderr)
        return False
    return True


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 100_000])
    parser.add_argument("--backends", nargs="+", choices=("embedded", SERVER), default=["embedded", SERVER])
    parser.add_argument("--searches", type=int, default=50, help="searches per size and depth (at least 1)")
    parser.add_argument(
        "--warm-up",
        type=int,
        default=WARM_UP_SEARCHES,
        help="unmeasured searches per backend and size before the measured ones (servers' JIT; the peer too)",
    )
    parser.add_argument("--concurrency", type=int, default=8, help="concurrent searches (threads) for throughput")
    parser.add_argument("--no-peer", dest="peer", action="store_false", help="skip neo4j-graphrag's retriever")
    parser.add_argument("--out", type=Path, default=None, help="folder of the JSON, markdown and PNG results")
    parser.add_argument(
        "--smoke",
        action="store_true",
        help=f"quick check: --sizes 300 --searches 5 --warm-up 5, results in {SMOKE_RESULTS}",
    )
    parser.add_argument(
        "--reuse-stores",
        type=Path,
        default=None,
        help="keep the embedded stores in this folder and reuse them (loading 100k nodes takes a minute or more)",
    )
    args = parser.parse_args(argv)
    if args.smoke:
        args.sizes, args.searches, args.warm_up = [300], 5, 5
    args.out = args.out or (SMOKE_RESULTS if args.smoke else RESULTS)
    if args.searches < 1 or args.concurrency < 1 or args.warm_up < 0:
        parser.error("--searches and --concurrency must be at least 1, --warm-up at least 0")
    if args.reuse_stores is not None:
        args.reuse_stores = args.reuse_stores.expanduser()
        args.reuse_stores.mkdir(parents=True, exist_ok=True)
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    args.peer = peer_available(args)
    profiles = default_profiles()
    rows: list[Row] = []
    peers: list[PeerRow] = []
    with tempfile.TemporaryDirectory(prefix="brain-graph-bench-") as workdir:
        if SERVER in args.backends and servers_configured():
            warm_server(Path(workdir))
        for size in args.sizes:
            prefix = "bench-" if args.reuse_stores is not None else f"bench{uuid.uuid4().hex[:6]}-"
            data = prepare(size, args.searches, Path(workdir), prefix, profiles)
            for name in args.backends:
                print(f"... {name}, {size} nodes", file=sys.stderr, flush=True)
                try:
                    row, peer = bench(name, data, args, Path(workdir), profiles)
                except BackendUnavailableError as error:
                    print(f"{name}: skipped ({error})", file=sys.stderr)
                    continue
                rows.append(row)
                peers += [peer] if peer else []
    print(text_table(rows))
    if peers:
        print("\n".join(["", *peer_table(rows, peers)]))
    meta = {
        "machine": machine(server_versions() if SERVER in args.backends else {}),
        "arguments": {key: str(value) if isinstance(value, Path) else value for key, value in vars(args).items()},
        "topK": TOP_K,
    }
    command = " ".join(["python -m benchmarks.search_latency", *(sys.argv[1:] if argv is None else argv)])
    for path in write_results(args.out, rows, peers, meta, command):
        print(f"wrote {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
