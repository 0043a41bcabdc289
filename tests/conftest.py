"""Shared fixtures: a small hand-made graph for unit tests and the bundled example graph."""

from __future__ import annotations

from pathlib import Path

import pytest

from brain_graph.graphs.search import BrainSearchGraph, build_graph
from brain_graph.indexing.dataset import Dataset, example_dataset_path, read_dataset
from brain_graph.pipeline.services import SearchServices
from tests.helpers import SMALL_GRAPH, make_store


@pytest.fixture
def small_services(tmp_path: Path) -> SearchServices:
    """Services over the small hand-made graph."""
    return make_store(tmp_path, SMALL_GRAPH)


@pytest.fixture
def small_graph(small_services: SearchServices) -> BrainSearchGraph:
    """The compiled graph over the small hand-made graph."""
    return build_graph(small_services)


@pytest.fixture(scope="session")
def example_dataset() -> Dataset:
    """The bundled example graph."""
    return read_dataset(example_dataset_path())


@pytest.fixture(scope="session")
def example_services(tmp_path_factory: pytest.TempPathFactory, example_dataset: Dataset) -> SearchServices:
    """Services over an embedded store loaded with the example graph (once per session)."""
    return make_store(tmp_path_factory.mktemp("example"), example_dataset)


@pytest.fixture(scope="session")
def example_graph(example_services: SearchServices) -> BrainSearchGraph:
    """The compiled graph over the example graph."""
    return build_graph(example_services)
