"""The LangGraph deployment configuration files: valid, portable, and pointing at working factories."""

from __future__ import annotations

import importlib
import inspect
import json
from pathlib import Path
from typing import Any

import pytest
from langgraph.pregel import Pregel
from langgraph_cli.config import validate_config_file
from starlette.applications import Starlette
from starlette.testclient import TestClient

from brain_graph.graphs.index import INDEX_GRAPH_NAME
from brain_graph.graphs.search import GRAPH_NAME, NODE_NAMES
from tests.platform.devserver import REPO_ROOT

CONFIGS = [REPO_ROOT / "langgraph.json", REPO_ROOT / "examples" / "cortex" / "langgraph.json"]


def _load(spec: str) -> Any:
    module, _, attribute = spec.partition(":")
    return getattr(importlib.import_module(module), attribute)


def _path(graph: str | dict[str, Any]) -> str:
    return graph if isinstance(graph, str) else str(graph["path"])


@pytest.mark.parametrize("config_path", CONFIGS, ids=lambda path: str(path.relative_to(REPO_ROOT)))
def test_config_is_valid_and_portable(config_path: Path) -> None:
    config = validate_config_file(config_path)
    raw = json.loads(config_path.read_text(encoding="utf-8"))
    assert config["python_version"] == "3.11"
    assert raw["env"] == {}  # no .env file needed; brain-graph reads an optional .env itself
    assert _path(raw["graphs"][GRAPH_NAME]) == "brain_graph.serving.server:make_graph"
    assert raw["http"]["app"] == "brain_graph.serving.server:app"
    text = config_path.read_text(encoding="utf-8")
    assert "/work/" not in text
    assert "/home/" not in text


@pytest.mark.parametrize("config_path", CONFIGS, ids=lambda path: str(path.relative_to(REPO_ROOT)))
def test_every_graph_factory_builds_a_graph(config_path: Path) -> None:
    raw = json.loads(config_path.read_text(encoding="utf-8"))
    for graph in raw["graphs"].values():
        factory = _load(_path(graph))
        assert not inspect.signature(factory).parameters  # called per request by the server: no arguments
        compiled = factory()
        assert isinstance(compiled, Pregel)
        assert factory() is compiled  # built once per process


def test_root_config_serves_the_search_and_the_index_graphs() -> None:
    raw = json.loads((REPO_ROOT / "langgraph.json").read_text(encoding="utf-8"))
    assert list(raw["graphs"]) == [GRAPH_NAME, INDEX_GRAPH_NAME]
    assert raw["dependencies"] == ["."]


def test_health_route_in_process() -> None:
    app = _load("brain_graph.serving.server:app")
    assert isinstance(app, Starlette)
    with TestClient(app) as client:
        body = client.get("/brain/health").json()
    assert body["graph"] == GRAPH_NAME
    assert body["nodes"] == list(NODE_NAMES)
