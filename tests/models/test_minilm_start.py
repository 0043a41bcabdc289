"""The real MiniLM model is loaded only when something is embedded: its dimension comes from its
files (the same the loaded model reports), and an ``index`` with nothing to do never imports
sentence-transformers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from brain_graph.embedding.model_dimension import declared_dimension
from tests.helpers import SMALL_GRAPH
from tests.models.test_minilm import SPEC, build

PROBE = """
import sys
from brain_graph.cli.main import app
try:
    app(sys.argv[1:], standalone_mode=False)
except SystemExit:
    pass
print("sentence_transformers" in sys.modules, "torch" in sys.modules)
"""


def test_the_declared_dimension_is_the_loaded_models() -> None:
    embedder = build()
    declared = declared_dimension(embedder.folder)
    assert declared == 384
    assert embedder.max_seq_length == 256  # loads the model, which checks its dimension against the files
    assert len(embedder.embed_query("token refresh")) == declared


def test_an_index_with_nothing_to_embed_loads_no_model(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("BRAIN_GRAPH_", "NEO4J_", "WEAVIATE_"))}
    env |= {"BRAIN_GRAPH_EMBEDDER": SPEC, "BRAIN_GRAPH_STORE_PATH": str(tmp_path / "store.sqlite3")}
    data = tmp_path / "graph.json"
    data.write_text(json.dumps(SMALL_GRAPH), encoding="utf-8")

    def run(*args: str) -> list[str]:
        completed = subprocess.run(
            [sys.executable, "-c", PROBE, *args], capture_output=True, text=True, env=env, timeout=600, check=True
        )
        return completed.stdout.split()[-2:]

    assert run("load", str(data), "--quiet") == ["True", "True"]  # the probe sees a load that embeds
    assert run("index", "--quiet") == ["False", "False"]
    assert run("profiles") == ["False", "False"]
