"""A replicated Weaviate: three nodes (``scripts/services up cluster``), collections with three
replicas, writes and reads at QUORUM. One node that is not the client's entry point is killed
(SIGKILL) while searches run and while loads run: every search keeps answering, and a search during
which the tenant's generation did not change answers exactly what the embedded backend answers for
that generation's data (a search that overlaps a load's flip may combine the two generations, as on
a single node: docs/internals/neo4j-weaviate-backend.md); a load either completes or leaves the
previous data, and the next one completes. A node that missed a load while it was down is repaired
by async replication before searches rely on it again.

The cluster runs beside the single servers the other tests use (ports of its own; Neo4j is the
single one). This module starts it when it is not running and stops it again afterwards; the node
it kills is started again in ``finally``.
"""

from __future__ import annotations

import json
import subprocess
import threading
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from benchmarks.synthetic import synthetic_dataset
from brain_graph.core.errors import BrainGraphError
from brain_graph.core.security import Principal
from brain_graph.embedding.profiles import ProfileRegistry, default_profiles
from brain_graph.indexing.dataset import Dataset, load_dataset
from brain_graph.pipeline.services import SearchServices
from brain_graph.stores.embedded import EmbeddedStore
from brain_graph.stores.neo4j_weaviate.backend import Neo4jWeaviateBackend
from brain_graph.stores.neo4j_weaviate.weaviate.naming import tenant_name
from tests.integration.conftest import with_tenant_prefix
from tests.integration.servers import REPO, SERVICES, connect, services, unique_prefix
from tests.integration.test_generation_cache import titled
from tests.integration.test_parity import parity_requests, search

pytestmark = pytest.mark.integration
VICTIM = "weaviate-3"  # never the entry point (node 1): the client keeps its connection
REPLICAS = 3
ROUNDS_AFTER_KILL = 2  # full rounds of every request searched after a kill
Case = tuple[str, dict[str, Any], Principal | None]


@dataclass(frozen=True)
class Cluster:
    """The running cluster's ports, node 1 first."""

    http_ports: tuple[int, ...]
    grpc_ports: tuple[int, ...]

    def backend(self) -> Neo4jWeaviateBackend:
        """A backend whose Weaviate is node 1 of the cluster (three replicas, QUORUM both ways), checked
        to answer."""
        return connect(
            weaviate_http_port=self.http_ports[0],
            weaviate_grpc_port=self.grpc_ports[0],
            weaviate_replication_factor=REPLICAS,
            weaviate_write_consistency="QUORUM",
            weaviate_read_consistency="QUORUM",
            timeout_s=60.0,  # a search may wait for a node that just died until the others notice
        )


def exported(stdout: str) -> dict[str, str]:
    """The ``export NAME=value`` lines of ``scripts/services`` as a mapping."""
    pairs = (line.removeprefix("export ").split("=", 1) for line in stdout.splitlines() if line.startswith("export "))
    return dict(pairs)


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    """The three-node cluster, started here unless it runs already (then left running)."""
    running = subprocess.run(
        [str(SERVICES), "status", "cluster"], cwd=REPO, capture_output=True, text=True, check=False, timeout=60
    )
    started = running.returncode != 0
    if started:
        services("down", "cluster")  # a node left dead by an earlier run
    env = exported(services("up", "cluster"))
    ports = Cluster(
        tuple(int(p) for p in env["WEAVIATE_CLUSTER_HTTP_PORTS"].split(",")),
        tuple(int(p) for p in env["WEAVIATE_CLUSTER_GRPC_PORTS"].split(",")),
    )
    assert len(ports.http_ports) == REPLICAS
    try:
        yield ports
    finally:
        if started:
            services("down", "cluster")


@dataclass(frozen=True)
class Answer:
    """One search: its case, the tenant's generation read just before it and just after it, and its
    wire result (or the error it raised)."""

    case: int
    generation_before: int | None
    generation_after: int | None
    result: Any


@dataclass
class Searcher:
    """Searches every case again and again on a thread until stopped, recording each :class:`Answer`."""

    services_: SearchServices
    backend: Neo4jWeaviateBackend
    tenant: str
    cases: list[Case]
    answers: list[Answer] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event)
    _rounds: int = 0
    _round_done: threading.Condition = field(default_factory=threading.Condition)
    _thread: threading.Thread | None = None

    def _run(self) -> None:
        generation = self.backend.generations.current_generation
        while not self._stop.is_set():
            for index, (_, request, principal) in enumerate(self.cases):
                before = generation(self.tenant)
                try:
                    result: Any = search(self.services_, request, principal)
                except Exception as error:  # recorded: the test fails on it
                    result = error
                self.answers.append(Answer(index, before, generation(self.tenant), result))
            with self._round_done:
                self._rounds += 1
                self._round_done.notify_all()

    def start(self) -> Searcher:
        self._thread = threading.Thread(target=self._run, name="cluster-searcher", daemon=True)
        self._thread.start()
        return self

    def wait_rounds(self, more: int) -> None:
        """Block until ``more`` further full rounds have ended (the one in progress not counted)."""
        with self._round_done:
            target = self._rounds + more + 1
            while self._rounds < target:
                assert self._thread is not None
                assert self._thread.is_alive(), "the searcher stopped"
                self._round_done.wait(60)

    def stop(self) -> list[Answer]:
        self._stop.set()
        assert self._thread is not None
        self._thread.join(120)
        assert not self._thread.is_alive(), "a search did not return within two minutes"
        return self.answers


def expected_answers(dataset: Dataset, cases: list[Case], store: Path, profiles: ProfileRegistry) -> list[Any]:
    """What the embedded backend answers to each case with ``dataset`` loaded (the parity reference)."""
    embedded = SearchServices(backend=EmbeddedStore(store), profiles=profiles)
    load_dataset(dataset, embedded.backend, embedded.profiles)
    return [search(embedded, request, principal) for _, request, principal in cases]


def check_answers(answers: list[Answer], expected: dict[int | None, list[Any]], cases: list[Case]) -> int:
    """No search failed, and each one during which the generation stayed the same answered what
    ``expected`` holds for that generation; the number of those."""
    steady = 0
    for answer in answers:
        name = cases[answer.case][0]
        if isinstance(answer.result, BaseException):
            raise AssertionError(f"{name}: the search failed: {answer.result!r}") from answer.result
        if answer.generation_before != answer.generation_after:
            continue  # overlapped a flip
        assert answer.generation_before in expected, f"{name}: searched generation {answer.generation_before}"
        wanted = expected[answer.generation_before][answer.case]
        assert answer.result == wanted, (
            f"{name}: differs in {sorted(k for k in wanted if answer.result[k] != wanted[k])}"
        )
        steady += 1
    return steady


def searched(services_: SearchServices, cases: list[Case]) -> list[Any]:
    return [search(services_, request, principal) for _, request, principal in cases]


def load_outcome(load: Callable[[], object]) -> BrainGraphError | None:
    """Run a load: None when it completed, else the error it failed with (the backend's errors only)."""
    try:
        load()
    except BrainGraphError as error:
        return error
    return None


def replica_counts(cluster: Cluster, tenants: list[str]) -> dict[tuple[str, str], list[int]]:
    """Objects of each (collection, shard) of ``tenants`` on each node that holds it (Weaviate's
    ``/v1/nodes`` report, asked of node 1)."""
    url = f"http://127.0.0.1:{cluster.http_ports[0]}/v1/nodes?output=verbose"
    with urllib.request.urlopen(url, timeout=10) as reply:
        nodes = json.load(reply)["nodes"]
    bases = tuple(tenant_name(tenant) for tenant in tenants)
    counts: dict[tuple[str, str], list[int]] = {}
    for node in nodes:
        for shard in node.get("shards") or ():
            if str(shard["name"]).startswith(bases):
                counts.setdefault((shard["class"], shard["name"]), []).append(int(shard.get("objectCount") or 0))
    return counts


def wait_repaired(cluster: Cluster, tenants: list[str], polls: int = 240) -> None:
    """Wait (polling every half second, at most ``polls`` times) until every shard of ``tenants`` is
    reported by all :data:`REPLICAS` nodes with the same number of objects."""
    pause = threading.Event()
    counts: dict[tuple[str, str], list[int]] = {}
    for _ in range(polls):
        counts = replica_counts(cluster, tenants)
        if counts and all(len(c) == REPLICAS and len(set(c)) == 1 for c in counts.values()):
            return
        pause.wait(0.5)
    raise AssertionError(f"replicas not repaired: {counts}")


def kill_when_writing(loading: Neo4jWeaviateBackend, loaded: threading.Event) -> None:
    """Kill the victim once the loader has sent a few requests to Weaviate (its checks, then its insert
    batches), or once the load ended should that come first: the test's outcome checks hold either way."""
    start = loading.weaviate.round_trips
    while loading.weaviate.round_trips < start + 3 and not loaded.wait(0.01):
        pass
    services("kill", VICTIM)


def test_a_node_dies_during_searches_and_loads(cluster: Cluster, tmp_path: Path) -> None:
    first = with_tenant_prefix(synthetic_dataset(400, tenants=1, seed=5), unique_prefix("cl"))
    second = titled(first, "relabelled")
    tenants = sorted({node.tenant_id for node in first.nodes})
    cases = [case for case in parity_requests(first) if not case[0].startswith("tenant-")]
    profiles = default_profiles()
    before = expected_answers(first, cases, tmp_path / "first.sqlite3", profiles)
    after = expected_answers(second, cases, tmp_path / "second.sqlite3", profiles)
    assert before != after  # the two loads are told apart
    assert any(answer["hits"] for answer in before)  # the comparison is not vacuous

    loading = cluster.backend()  # a loader, and below a search server
    try:
        load_dataset(first, loading, profiles)
        # connected after the load, so that its first read of the collections finds them
        searching = cluster.backend()
    except BaseException:
        loading.close()
        raise
    services_ = SearchServices(backend=searching, profiles=profiles)
    current = searching.generations.current_generation

    def searcher() -> Searcher:
        started = Searcher(services_, searching, tenants[0], cases).start()
        started.wait_rounds(1)  # a round before anything happens: the checks are not vacuous
        return started

    try:
        wait_repaired(cluster, tenants)  # every shard of the load on the three nodes
        expected = {current(tenants[0]): before}
        assert searched(services_, cases) == before

        # 1. a node dies while searches run
        running = searcher()
        services("kill", VICTIM)
        running.wait_rounds(ROUNDS_AFTER_KILL)
        assert check_answers(running.stop(), expected, cases) >= len(cases) * (ROUNDS_AFTER_KILL + 1)
        services("restart", VICTIM)

        # 2. a node dies while a load runs (killed by the load's own progress report, so surely
        # before its writes end), with searches running throughout
        killed: list[str] = []

        def kill_once(_: int) -> None:
            if not killed:
                services("kill", VICTIM)
                killed.append(VICTIM)

        running = searcher()
        failed = load_outcome(lambda: load_dataset(second, loading, profiles, progress=kill_once))
        if failed is None:
            expected[current(tenants[0])] = after
        running.wait_rounds(1)
        assert check_answers(running.stop(), expected, cases) >= len(cases)
        assert killed == [VICTIM]
        assert searched(services_, cases) == (before if failed else after), f"load failed with {failed}"
        if failed is not None:  # the next run converges, the node still down
            load_dataset(second, loading, profiles)
            assert searched(services_, cases) == after
        expected = {current(tenants[0]): after}

        # 3. the node comes back, having missed that load: once async replication has repaired it,
        # searches answer the new data; then it dies again while a load writes its vectors
        services("restart", VICTIM)
        wait_repaired(cluster, tenants)
        assert searched(services_, cases) == after
        running = searcher()
        loaded = threading.Event()
        watcher = threading.Thread(target=kill_when_writing, args=(loading, loaded), daemon=True)
        watcher.start()
        try:
            failed = load_outcome(lambda: load_dataset(first, loading, profiles))
        finally:
            loaded.set()
            watcher.join(120)
        if failed is None:
            expected[current(tenants[0])] = before
        running.wait_rounds(1)
        assert check_answers(running.stop(), expected, cases) >= len(cases)
        assert searched(services_, cases) == (after if failed else before), f"load failed with {failed}"
        if failed is not None:
            load_dataset(first, loading, profiles)
            assert searched(services_, cases) == before
    finally:
        services("restart", VICTIM)
        try:
            loading.admin.drop_tenants(tenants)
        finally:
            searching.close()
            loading.close()
