"""A write to an embedded store another process is writing waits for it (:data:`WRITE_LOCK_WAIT_S`),
then fails with a one-line BackendUnavailableError naming the store, and writes nothing; searches
keep reading the data of before."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from brain_graph.core.errors import BackendUnavailableError, ConfigurationError
from brain_graph.indexing.dataset import Dataset, load_dataset
from brain_graph.indexing.hooks import GraphWriter
from brain_graph.pipeline.services import SearchServices
from brain_graph.stores.embedded import EmbeddedStore, writes
from tests.helpers import SMALL_GRAPH, make_store


@pytest.fixture
def services(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> SearchServices:
    monkeypatch.setattr(writes, "WRITE_LOCK_WAIT_S", 0.2)
    return make_store(tmp_path, SMALL_GRAPH)


@pytest.fixture
def other_writer(services: SearchServices) -> Iterator[sqlite3.Connection]:
    """Another connection holding the store's write lock (as a load in another process does)."""
    holder = sqlite3.connect(services.backend.path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    yield holder
    holder.execute("ROLLBACK")
    holder.close()


def _titles(services: SearchServices) -> list[str | None]:
    return sorted(r.title for r in services.backend.index_store.get_records("t1", ["w1", "new"]))


@pytest.mark.usefixtures("other_writer")
def test_a_hook_write_waiting_on_another_writer_is_a_typed_error(services: SearchServices) -> None:
    before = _titles(services)
    node = {"tenantId": "t1", "id": "new", "nodeType": "cdm.work_item", "title": "new", "text": {"summary": "x"}}
    with pytest.raises(BackendUnavailableError) as failed:
        GraphWriter(services).upsert_nodes([node])
    assert str(failed.value) == (
        f"embedded store unavailable: {services.backend.path} is being written by another process; "
        "retry when it is done"
    )
    assert _titles(services) == before


@pytest.mark.usefixtures("other_writer")
def test_a_load_waiting_on_another_writer_is_a_typed_error(services: SearchServices) -> None:
    before = _titles(services)
    with pytest.raises(BackendUnavailableError, match="being written by another process"):
        load_dataset(Dataset.model_validate(SMALL_GRAPH), services.backend, services.profiles)
    assert _titles(services) == before


def test_a_sqlite_file_of_other_tables_is_not_a_store_to_write(tmp_path: Path) -> None:
    """A write that SQLite refuses because the file's tables are not a brain-graph store's is a
    ConfigurationError naming the file (not an outage to retry), and nothing is written."""
    path = tmp_path / "other.sqlite3"
    with sqlite3.connect(path) as other:
        other.execute("CREATE TABLE nodes (x INTEGER)")
    services = SearchServices(backend=EmbeddedStore(path))
    with pytest.raises(ConfigurationError, match=r"other\.sqlite3 is not a brain-graph store \("):
        load_dataset(Dataset.model_validate(SMALL_GRAPH), services.backend, services.profiles)
    with sqlite3.connect(path) as other:
        assert other.execute("SELECT count(*) FROM nodes").fetchone() == (0,)
