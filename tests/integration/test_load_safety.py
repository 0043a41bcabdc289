"""Replacing a tenant on Neo4j + Weaviate is safe: a replace-load that fails or is killed at any point
leaves every search returning byte for byte what it returned before, and the two stores consistent;
the next successful load gives the new result and leaves a single generation in both stores.

Each test loads OLD (two tenants) under its own tenant prefix, checks the searches (through the
compiled graph) against the embedded store loaded with the same data, then breaks a replace-load of NEW:
    * in-process: a method raises (the k-th Neo4j batch, with its transaction open; the Weaviate write
      as a whole; the k-th Weaviate batch; the flip; the clean-up after the flip);
    * killed: a child process (``tests/integration/load_child.py``) pauses at a point, is SIGKILLed
      there (inside an open Neo4j transaction, between Weaviate batches, before the flip, after it),
      and a real ``brain-graph load`` is SIGKILLed as soon as its first batch is visible in Neo4j;
    * overtaken: two loads interleave; the older one's flip is refused and neither deletes the other.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import neo4j
import pytest

from benchmarks.synthetic import synthetic_dataset
from brain_graph.core.contracts import BrainSearchResult
from brain_graph.graphs.search import build_graph
from brain_graph.indexing.dataset import Dataset, embed_nodes, index_info, load_dataset
from brain_graph.pipeline.services import SearchServices
from brain_graph.pipeline.state import BrainSearchInput
from brain_graph.stores.embedded import EmbeddedStore
from brain_graph.stores.neo4j_weaviate.backend import Neo4jWeaviateBackend
from brain_graph.stores.neo4j_weaviate.neo4j import generations as neo4j_generations
from brain_graph.stores.neo4j_weaviate.neo4j.client import Neo4jClient
from brain_graph.stores.neo4j_weaviate.neo4j.generations import Flip, Neo4jGenerations
from brain_graph.stores.neo4j_weaviate.weaviate import writes as weaviate_writes
from brain_graph.stores.neo4j_weaviate.weaviate.index import WeaviateVectorIndex
from brain_graph.stores.neo4j_weaviate.weaviate.writes import WeaviateWrites
from tests.integration.conftest import with_tenant_prefix
from tests.integration.load_child import BATCH, is_batch_write
from tests.integration.servers import REPO, connect, server_settings, unique_prefix

pytestmark = pytest.mark.integration
SIZE = 200  # nodes over two tenants: 2 x 2 node batches and ~8 edge batches of BATCH rows
SEEDS = {"old": 5, "new": 6, "third": 7}


class InjectedError(Exception):
    """The failure a test injects."""


def searches(dataset: Dataset) -> list[dict[str, Any]]:
    """Requests derived from the data: per tenant, a deep search and a wide one."""
    requests = []
    for tenant in sorted({n.tenant_id for n in dataset.nodes}):
        mine = sorted(
            (n for n in dataset.nodes if n.tenant_id == tenant and not n.secured and n.title), key=lambda n: n.id
        )
        for node, options in ((mine[0], {"expandDepth": 2}), (mine[-1], {"topK": 20, "expandDepth": 1})):
            requests.append(
                {"queryText": node.title, "filter": {"tenantId": tenant, "secured": False}, "options": options}
            )
    return requests


def results(services: SearchServices, requests: list[dict[str, Any]]) -> list[str]:
    """The wire results of the requests, as JSON text (compared byte for byte)."""
    graph = build_graph(services)
    return [
        json.dumps(BrainSearchResult.model_validate(graph.invoke(cast(BrainSearchInput, r))).to_wire(), sort_keys=True)
        for r in requests
    ]


@dataclass
class Scenario:
    """OLD loaded on the servers under a unique prefix, with the expected results of every dataset."""

    backend: Neo4jWeaviateBackend
    services: SearchServices
    datasets: dict[str, Dataset]
    requests: list[dict[str, Any]]
    expected: dict[str, list[str]]
    tenants: list[str]
    prefix: str
    tmp: Path
    state_before: object = field(default=None)

    def load(self, name: str, backend: Neo4jWeaviateBackend | None = None) -> None:
        load_dataset(self.datasets[name], backend or self.backend, self.services.profiles)

    def results(self) -> list[str]:
        return results(self.services, self.requests)

    def write(self, name: str) -> Path:
        path = self.tmp / f"{name}.json"
        path.write_text(json.dumps(self.datasets[name].model_dump(by_alias=True)), encoding="utf-8")
        return path

    def current(self) -> dict[str, int | None]:
        return {t: self.backend.generations.current_generation(t) for t in self.tenants}

    def state(self) -> tuple[object, ...]:
        """What searches can see: current generations, node/edge counts, vector counts per profile."""
        return self.current(), [self.backend.admin.count(t) for t in self.tenants]

    def stored(self) -> dict[str, tuple[list[int], list[int]]]:
        """Per tenant, the generations stored in Neo4j and in Weaviate."""
        return {
            t: (self.backend.generations.stored_generations(t), self.backend.weaviate.stored_generations(t))
            for t in self.tenants
        }

    def assert_unchanged(self, expected: str = "old") -> None:
        assert self.results() == self.expected[expected]
        if expected == "old":
            assert self.state() == self.state_before

    def assert_single_generation(self) -> None:
        current = self.current()
        assert self.stored() == {t: ([g], [g]) for t, g in current.items() if g is not None}

    def assert_new_after_reload(self, name: str = "new") -> None:
        """A later successful load gives its result and removes every other generation."""
        self.load(name)
        assert self.results() == self.expected[name]
        self.assert_single_generation()


def reference(dataset: Dataset, requests: list[dict[str, Any]], path: Path) -> list[str]:
    """The results of the requests on the embedded store loaded with ``dataset``."""
    services = SearchServices(backend=EmbeddedStore(path))
    load_dataset(dataset, services.backend, services.profiles)
    return results(services, requests)


@dataclass(frozen=True)
class References:
    """The datasets of this module (one tenant prefix) and their results on the embedded store."""

    prefix: str
    datasets: dict[str, Dataset]
    requests: list[dict[str, Any]]
    expected: dict[str, list[str]]


@pytest.fixture(scope="module")
def references(tmp_path_factory: pytest.TempPathFactory) -> References:
    """Computed once: the tests run one after another on the same tenants, each dropping them at the end."""
    prefix = unique_prefix("ls")
    datasets = {
        name: with_tenant_prefix(synthetic_dataset(SIZE, tenants=2, seed=seed), prefix) for name, seed in SEEDS.items()
    }
    requests = searches(datasets["old"])
    where = tmp_path_factory.mktemp("load-safety")
    expected = {name: reference(d, requests, where / f"{name}.sqlite3") for name, d in datasets.items()}
    assert len({tuple(e) for e in expected.values()}) == len(expected), "the datasets must give different results"
    return References(prefix, datasets, requests, expected)


@pytest.fixture
def scenario(references: References, tmp_path: Path) -> Iterator[Scenario]:
    backend = connect()
    datasets, expected = dict(references.datasets), references.expected
    tenants = sorted({n.tenant_id for n in datasets["old"].nodes})
    services = SearchServices(backend=backend)
    scenario = Scenario(
        backend, services, datasets, references.requests, expected, tenants, references.prefix, tmp_path
    )
    try:
        scenario.load("old")
        assert scenario.results() == expected["old"]
        scenario.state_before = scenario.state()
        yield scenario
    finally:
        try:
            backend.admin.drop_tenants(tenants)
            assert scenario.stored() == {t: ([], []) for t in tenants}
        finally:
            backend.close()


# -- failures in-process --------------------------------------------------------------------------


def fail_neo4j_batch(monkeypatch: pytest.MonkeyPatch, k: int) -> None:
    """The k-th node/edge batch fails inside its transaction, after its statement ran."""
    monkeypatch.setattr(neo4j_generations, "LOAD_BATCH", BATCH)
    original = Neo4jClient.commit
    calls = 0

    def commit(self: Neo4jClient, session: neo4j.Session, query: str, params: Mapping[str, Any]) -> Any:
        nonlocal calls
        if is_batch_write(query):
            calls += 1
            if calls == k:
                with session.begin_transaction() as tx:
                    tx.run(query, dict(params)).consume()
                    raise InjectedError(f"batch {k}")
        return original(self, session, query, params)

    monkeypatch.setattr(Neo4jClient, "commit", commit)


def fail_weaviate_batch(monkeypatch: pytest.MonkeyPatch, k: int) -> None:
    """The k-th Weaviate insert batch fails (the ones before it were written)."""
    monkeypatch.setattr(weaviate_writes, "INSERT_BATCH", BATCH)
    original = WeaviateWrites.insert_batch
    calls = 0

    async def insert(self: WeaviateWrites, collection: Any, profile_id: str, batch: list[Any]) -> None:
        nonlocal calls
        calls += 1
        if calls == k:
            raise InjectedError(f"insert batch {k}")
        await original(self, collection, profile_id, batch)

    monkeypatch.setattr(WeaviateWrites, "insert_batch", insert)


def raise_injected(*_: object, **__: object) -> None:
    raise InjectedError("injected")


FAILURES: dict[str, Callable[[pytest.MonkeyPatch], None]] = {
    "neo4j-first-node-batch": lambda mp: fail_neo4j_batch(mp, 1),
    "neo4j-node-batch-3": lambda mp: fail_neo4j_batch(mp, 3),
    "neo4j-edge-batch": lambda mp: fail_neo4j_batch(mp, 7),
    "between-neo4j-and-weaviate": lambda mp: mp.setattr(WeaviateVectorIndex, "write", raise_injected),
    "weaviate-batch-3": lambda mp: fail_weaviate_batch(mp, 3),
    "flip": lambda mp: mp.setattr(Neo4jGenerations, "flip", raise_injected),
}


@pytest.mark.parametrize("point", list(FAILURES))
def test_a_failed_replace_load_changes_nothing_searches_see(
    scenario: Scenario, monkeypatch: pytest.MonkeyPatch, point: str
) -> None:
    with monkeypatch.context() as patch:
        FAILURES[point](patch)
        with pytest.raises(InjectedError):
            scenario.load("new")
    scenario.assert_unchanged()
    scenario.assert_new_after_reload()


def test_a_failed_clean_up_leaves_the_new_data_and_the_next_load_removes_the_rest(
    scenario: Scenario, monkeypatch: pytest.MonkeyPatch
) -> None:
    old = scenario.current()
    with monkeypatch.context() as patch:
        patch.setattr(WeaviateVectorIndex, "remove_older", raise_injected)
        with pytest.raises(InjectedError):
            scenario.load("new")
    assert scenario.results() == scenario.expected["new"]
    new = scenario.current()
    assert scenario.stored() == {t: ([old[t], new[t]], [old[t], new[t]]) for t in scenario.tenants}
    scenario.assert_new_after_reload("third")


def test_a_refused_dataset_writes_nothing_on_the_server(scenario: Scenario) -> None:
    """The reported case: a lone surrogate in a text, refused before any write; no generation is taken."""
    raw = scenario.datasets["new"].model_dump(by_alias=True)
    raw["nodes"][-1]["properties"] = {"note": "\ud800"}
    with pytest.raises(ValueError, match="lone surrogate"):
        load_dataset(Dataset.model_validate(raw), scenario.backend, scenario.services.profiles)
    scenario.assert_unchanged()
    scenario.assert_single_generation()


def test_an_overtaken_load_neither_hides_nor_deletes_the_newer_one(
    scenario: Scenario, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A (NEW) takes its generation; B (THIRD) takes a newer one and stages it; A flips and cleans up
    without touching B's staged generation in either store; B flips and cleans up. Then A' takes a
    generation, B' takes a newer one and completes first: A' finds its flip refused, removes its own
    generation and returns; B' stays."""
    other = connect()
    third = scenario.datasets["third"]
    staged: dict[str, int] = {}
    overtaken: dict[str, int] = {}
    flip = Neo4jGenerations.flip

    def stage_b(
        self: Neo4jGenerations, generations: Mapping[str, int], clocks: Mapping[str, int] | None = None
    ) -> dict[str, Flip]:
        if not staged:
            registry = scenario.services.profiles
            staged.update(other.generations.take_generations(scenario.tenants))
            other.generations.write(third.node_records(), third.edge_records(), staged)
            vectors = embed_nodes(third.node_records(), registry)
            other.weaviate.write(vectors, index_info(registry), generations=staged, replace_tenants=scenario.tenants)
        return flip(self, generations, clocks)

    def complete_b(
        self: Neo4jGenerations, generations: Mapping[str, int], clocks: Mapping[str, int] | None = None
    ) -> dict[str, Flip]:
        if not overtaken:
            overtaken.update(generations)
            scenario.load("old", other)  # B': its own flip comes here too, and goes through
        return flip(self, generations, clocks)

    try:
        with monkeypatch.context() as patch:
            patch.setattr(Neo4jGenerations, "flip", stage_b)
            scenario.load("new")
        assert scenario.results() == scenario.expected["new"]
        a = scenario.current()
        both = [[a[t], staged[t]] for t in scenario.tenants]
        assert scenario.stored() == {t: (gens, gens) for t, gens in zip(scenario.tenants, both, strict=True)}
        other.clean_up(other.generations.flip(staged))
        assert scenario.results() == scenario.expected["third"]
        scenario.assert_single_generation()

        with monkeypatch.context() as patch:
            patch.setattr(Neo4jGenerations, "flip", complete_b)
            scenario.load("new")  # A'
        assert scenario.results() == scenario.expected["old"]
        scenario.assert_single_generation()
        assert all(g is not None and g > overtaken[t] for t, g in scenario.current().items())
    finally:
        other.close()


# -- killed loads ---------------------------------------------------------------------------------


def child_env() -> dict[str, str]:
    server_settings()  # fails clearly when the servers are not configured
    return {**os.environ, "PYTHONPATH": str(REPO), "BRAIN_GRAPH_BACKEND": "neo4j-weaviate"}


def wait_for_line(process: subprocess.Popen[str], prefix: str, timeout: float = 120) -> str:
    """The first stdout line starting with ``prefix``; fails when the process ends or takes too long."""
    assert process.stdout is not None
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([process.stdout], [], [], 0.5)
        if ready:
            line = process.stdout.readline()
            if line.startswith(prefix):
                return line.strip()
            if not line:
                break
    process.kill()
    _, stderr = process.communicate()
    pytest.fail(f"no {prefix!r} from the child (exit {process.returncode}): {stderr[-2000:]}")


def kill(process: subprocess.Popen[str]) -> None:
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=30)
    assert process.returncode == -signal.SIGKILL


KILL_POINTS = [("neo4j-batch", 3, "old"), ("weaviate-batch", 2, "old"), ("flip", 0, "old"), ("clean-up", 0, "new")]


@pytest.mark.parametrize(("point", "k", "visible"), KILL_POINTS, ids=[p[0] for p in KILL_POINTS])
def test_a_killed_replace_load(scenario: Scenario, point: str, k: int, visible: str) -> None:
    """Killed before the flip: the old result; after it: the new one. The next load cleans up."""
    command = [sys.executable, "-m", "tests.integration.load_child", str(scenario.write("new")), point, str(k)]
    with subprocess.Popen(
        command, cwd=REPO, env=child_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    ) as process:
        try:
            assert wait_for_line(process, "PAUSED") == f"PAUSED {point}"
            assert scenario.results() == scenario.expected[visible]  # while the load is paused
        finally:
            kill(process)
    scenario.assert_unchanged(visible)
    assert any(len(neo4j) > 1 for neo4j, _ in scenario.stored().values()), "the kill left a staged generation"
    scenario.assert_new_after_reload("third")


def test_a_killed_cli_load(scenario: Scenario) -> None:
    """``brain-graph load`` SIGKILLed as soon as its first batch is visible in Neo4j (at the default
    batch sizes), on a dataset big enough for several batches."""
    scenario.datasets["big"] = with_tenant_prefix(synthetic_dataset(2500, tenants=2, seed=8), scenario.prefix)
    command = [sys.executable, "-m", "brain_graph.cli.main", "load", str(scenario.write("big"))]
    old = scenario.current()
    with (
        (scenario.tmp / "cli.log").open("w") as log,
        subprocess.Popen(command, cwd=REPO, env=child_env(), stdout=log, stderr=log, text=True) as process,
    ):
        try:
            deadline = time.monotonic() + 300
            while time.monotonic() < deadline and process.poll() is None:
                if any(len(stored) > 1 for stored in map(scenario.backend.generations.stored_generations, old)):
                    break
                time.sleep(0.02)
            assert process.poll() is None, f"the load ended before it could be killed: {process.returncode}"
        finally:
            kill(process)
    assert scenario.current() == old
    scenario.assert_unchanged()
    scenario.assert_new_after_reload()
