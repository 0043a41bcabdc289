"""A replicated Weaviate: three nodes (``scripts/services up cluster``), collections with three
replicas, writes and reads at QUORUM. One node that is not the client's entry point is killed
(SIGKILL) while searches run and while loads run: every search keeps answering, each one exactly
what the embedded backend answers for the data it sees (the previous load's or the new one's, never
a mix or an error), and a load either completes or leaves the previous data; the next one completes.

The cluster runs beside the single servers the other tests use (ports of its own; Neo4j is the
single one). This module starts it when it is not running and stops it again afterwards; the node
it kills is started again in ``finally``.
"""

from __future__ import annotations

import subprocess
import threading
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
            timeout_s=15.0,
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


@dataclass
class Searcher:
    """Searches every case again and again on a thread until stopped, recording each answer (the
    wire result, or the error raised) with the index of its case."""

    services_: SearchServices
    cases: list[Case]
    answers: list[tuple[int, Any]] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event)
    _rounds: int = 0
    _round_done: threading.Condition = field(default_factory=threading.Condition)
    _thread: threading.Thread | None = None

    def _run(self) -> None:
        while not self._stop.is_set():
            for index, (_, request, principal) in enumerate(self.cases):
                try:
                    answer: Any = search(self.services_, request, principal)
                except Exception as error:  # recorded: the test fails on it
                    answer = error
                self.answers.append((index, answer))
            with self._round_done:
                self._rounds += 1
                self._round_done.notify_all()

    def start(self) -> Searcher:
        self._thread = threading.Thread(target=self._run, name="cluster-searcher", daemon=True)
        self._thread.start()
        return self

    def wait_rounds(self, more: int) -> None:
        """Block until ``more`` further full rounds have ended (started after this call or not)."""
        with self._round_done:
            target = self._rounds + more + 1  # the round in progress may have started before the event
            while self._rounds < target:
                assert self._thread is not None
                assert self._thread.is_alive(), "the searcher stopped"
                self._round_done.wait(60)

    def stop(self) -> list[tuple[int, Any]]:
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


def check_answers(answers: list[tuple[int, Any]], allowed: list[list[Any]], cases: list[Case]) -> None:
    """Every answer is one of the allowed answers of its case."""
    assert answers, "no search ran"
    for index, answer in answers:
        if isinstance(answer, BaseException):
            raise AssertionError(f"{cases[index][0]}: the search failed: {answer!r}") from answer
        assert answer in allowed[index], (
            f"{cases[index][0]}: an answer of neither load ({differences(answer, allowed[index])})"
        )


def differences(answer: dict[str, Any], allowed: list[Any]) -> list[list[str]]:
    """For each allowed answer, the parts of ``answer`` that differ from it."""
    return [sorted(key for key in answer if answer[key] != other.get(key)) for other in allowed]


def searched(services_: SearchServices, cases: list[Case]) -> list[Any]:
    return [search(services_, request, principal) for _, request, principal in cases]


def load_outcome(load: Callable[[], object]) -> BrainGraphError | None:
    """Run a load: None when it completed, else the error it failed with (the backend's errors only)."""
    try:
        load()
    except BrainGraphError as error:
        return error
    return None


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
    both = [[old, new] for old, new in zip(before, after, strict=True)]

    searching, loading = cluster.backend(), cluster.backend()  # a search server and a loader
    services_ = SearchServices(backend=searching, profiles=profiles)
    try:
        load_dataset(first, loading, profiles)
        assert searched(services_, cases) == before

        # 1. a node dies while searches run
        searcher = Searcher(services_, cases).start()
        searcher.wait_rounds(1)
        services("kill", VICTIM)
        searcher.wait_rounds(ROUNDS_AFTER_KILL)
        check_answers(searcher.stop(), [[answer] for answer in before], cases)
        services("restart", VICTIM)

        # 2. a node dies while a load runs (killed by the load's own progress report, so surely
        # before its writes end), with searches running throughout
        killed: list[str] = []

        def kill_once(_: int) -> None:
            if not killed:
                services("kill", VICTIM)
                killed.append(VICTIM)

        searcher = Searcher(services_, cases).start()
        failed = load_outcome(lambda: load_dataset(second, loading, profiles, progress=kill_once))
        searcher.wait_rounds(1)
        check_answers(searcher.stop(), both, cases)
        assert killed == [VICTIM]
        assert searched(services_, cases) == (before if failed else after), f"load failed with {failed}"
        if failed is not None:  # the next run converges, the node still down
            load_dataset(second, loading, profiles)
            assert searched(services_, cases) == after
    finally:
        services("restart", VICTIM)
        try:
            loading.admin.drop_tenants(tenants)
        finally:
            searching.close()
            loading.close()
