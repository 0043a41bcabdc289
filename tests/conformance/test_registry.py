"""Backends by name: a backend is a module plus one registration; ``BRAIN_GRAPH_BACKEND`` accepts the
registered names; each backend reads its own settings when it is built."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from brain_graph.core.errors import ConfigurationError
from brain_graph.pipeline.config import build_services, load_settings
from brain_graph.stores import StorageBackend, backend_names, build_backend, register_backend, registry
from brain_graph.stores.embedded import EmbeddedStore


@pytest.fixture(autouse=True)
def isolated_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    """Registrations of a test do not outlive it."""
    monkeypatch.setattr(registry, "_FACTORIES", dict(registry._FACTORIES))


def test_the_built_in_backends() -> None:
    assert backend_names() == ("embedded", "neo4j-weaviate", "mapped")


def test_a_registered_backend_is_selectable_by_name(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    built: list[dict[str, Any]] = []

    def factory(**overrides: Any) -> StorageBackend:
        built.append(overrides)
        return EmbeddedStore(tmp_path / "custom.sqlite3")

    register_backend("custom", factory)
    monkeypatch.setenv("BRAIN_GRAPH_BACKEND", "custom")
    services = build_services(load_settings())
    assert isinstance(services.backend, EmbeddedStore)
    assert build_backend("custom", option=1).name == "embedded"
    assert built == [{}, {"option": 1}]


def test_an_unknown_backend_is_one_line_naming_the_registered_ones(monkeypatch: pytest.MonkeyPatch) -> None:
    register_backend("custom", lambda **_: EmbeddedStore("unused"))
    monkeypatch.setenv("BRAIN_GRAPH_BACKEND", "neo4j")
    with pytest.raises(ConfigurationError) as error:
        load_settings()
    assert str(error.value) == (
        "BRAIN_GRAPH_BACKEND: Input should be 'embedded', 'neo4j-weaviate', 'mapped' or 'custom' (got 'neo4j')"
    )
    with pytest.raises(ConfigurationError, match="backend 'neo4j' is not registered"):
        build_backend("neo4j")


def test_each_backend_reads_its_own_settings(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("BRAIN_GRAPH_STORE_PATH", raising=False)
    monkeypatch.setenv("BRAIN_GRAPH_HOME", str(tmp_path))
    monkeypatch.setenv("BRAIN_GRAPH_BACKEND_TIMEOUT", "soon")  # the server backend's: not read here
    embedded = build_backend("embedded")
    assert isinstance(embedded, EmbeddedStore)
    assert embedded.path == tmp_path / "brain-graph.sqlite3"
    explicit = build_backend("embedded", store_path=tmp_path / "other.sqlite3")
    assert isinstance(explicit, EmbeddedStore)
    assert explicit.path == tmp_path / "other.sqlite3"
    with pytest.raises(ConfigurationError, match=r"^BRAIN_GRAPH_BACKEND_TIMEOUT: Input should be a valid number"):
        build_backend("neo4j-weaviate")
