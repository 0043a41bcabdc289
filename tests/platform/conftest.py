"""Fixtures of the platform tests: an embedded store loaded with the example graph in a
``BRAIN_GRAPH_HOME`` directory, the in-process graph over that very file, and ``langgraph dev``
servers over it (one per test module, stopped at the module's end)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from langgraph_sdk import get_sync_client
from langgraph_sdk.client import SyncLangGraphClient

from brain_graph.graphs.search import BrainSearchGraph, build_graph
from brain_graph.indexing.dataset import Dataset
from brain_graph.pipeline.services import SearchServices
from brain_graph.stores.embedded import STORE_FILE_NAME, EmbeddedStore
from tests.helpers import make_store
from tests.platform.devserver import REPO_ROOT, DevServer, run_dev_server


@pytest.fixture(scope="session")
def brain_home(tmp_path_factory: pytest.TempPathFactory, example_dataset: Dataset) -> Path:
    """A ``BRAIN_GRAPH_HOME`` whose embedded store holds the example graph."""
    home = tmp_path_factory.mktemp("brain-home")
    make_store(home, example_dataset, name=STORE_FILE_NAME).backend.close()
    return home


@pytest.fixture(scope="session")
def home_services(brain_home: Path) -> SearchServices:
    """Library-default services over the store in ``brain_home`` (the file the servers read)."""
    return SearchServices(backend=EmbeddedStore(brain_home / STORE_FILE_NAME))


@pytest.fixture(scope="session")
def home_graph(home_services: SearchServices) -> BrainSearchGraph:
    """The in-process graph over the store in ``brain_home``."""
    return build_graph(home_services)


@pytest.fixture(scope="module")
def dev_server(brain_home: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevServer]:
    """``langgraph dev`` with the repository's ``langgraph.json``, ``BRAIN_GRAPH_HOME=brain_home``,
    ``DEBUG_PIPELINE=1`` and ``BRAIN_GRAPH_AUTH=insecure``; started once per module, its process
    group killed at the end."""
    with run_dev_server(
        REPO_ROOT / "langgraph.json",
        tmp_path_factory.mktemp("langgraph-dev"),
        # The repository's langgraph.json authenticates with bearer tokens; these tests use the
        # insecure development mode (tests/platform/test_graphql_server.py covers the tokens).
        {"BRAIN_GRAPH_HOME": str(brain_home), "DEBUG_PIPELINE": "1", "BRAIN_GRAPH_AUTH": "insecure"},
    ) as server:
        yield server


@pytest.fixture
def sdk(dev_server: DevServer) -> Iterator[SyncLangGraphClient]:
    """A langgraph-sdk client of the module's server (no API key is sent)."""
    client = get_sync_client(url=dev_server.url, api_key=None, timeout=60.0)
    try:
        yield client
    finally:
        client.close()
