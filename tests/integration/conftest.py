"""Fixtures of the integration tests: the parity dataset loaded ONCE per session into an embedded
store and into the real Neo4j + Weaviate servers, under tenant ids unique to the run.

The dataset is the bundled example graph (``examples/data/example_graph.json``) when it exists,
otherwise a synthetic graph (``benchmarks.synthetic``). Fault tests run last: they stop servers.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from benchmarks.synthetic import synthetic_dataset
from brain_graph.indexing.dataset import Dataset, example_dataset_path, load_dataset, read_dataset
from brain_graph.pipeline.services import SearchServices
from brain_graph.stores.embedded import EmbeddedStore
from tests.integration.servers import connect, unique_prefix


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Run the fault tests (which stop and restart servers) after everything else."""
    items.sort(key=lambda item: "tests/integration/test_faults.py" in item.nodeid)


def parity_source() -> Dataset:
    """The example graph if bundled, else a synthetic one."""
    path = example_dataset_path()
    return read_dataset(path) if path.exists() else synthetic_dataset(600, tenants=2, seed=11)


def with_tenant_prefix(dataset: Dataset, prefix: str) -> Dataset:
    """The same dataset with every tenant id prefixed (tests share the servers)."""
    raw = dataset.model_dump(by_alias=True)
    for item in (*raw["nodes"], *raw["edges"]):
        item["tenantId"] = prefix + item["tenantId"]
    return Dataset.model_validate(raw)


@dataclass(frozen=True)
class Loaded:
    """The parity dataset in both backends."""

    dataset: Dataset
    tenants: tuple[str, ...]
    embedded: SearchServices
    server: SearchServices


@pytest.fixture(scope="session")
def loaded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Loaded]:
    """Load once per session; drop the tenants from the servers at the end."""
    dataset = with_tenant_prefix(parity_source(), unique_prefix("it"))
    tenants = tuple(sorted({node.tenant_id for node in dataset.nodes}))
    embedded = SearchServices(backend=EmbeddedStore(Path(tmp_path_factory.mktemp("parity")) / "store.sqlite3"))
    load_dataset(dataset, embedded.backend, embedded.profiles)
    backend = connect()
    server = SearchServices(backend=backend)
    try:
        load_dataset(dataset, backend, server.profiles)
        yield Loaded(dataset, tenants, embedded, server)
    finally:
        try:
            backend.admin.drop_tenants(tenants)
        finally:
            backend.close()


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A port that accepts TCP connections and never answers (a hung server)."""
    with silent_listener() as port:
        yield port


@contextmanager
def silent_listener() -> Iterator[int]:
    """A loopback port, open while the block runs, that accepts TCP connections and never answers."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(64)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(server.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield int(server.getsockname()[1])
    finally:
        stop.set()
        thread.join()
        for conn in held:
            conn.close()
        server.close()
