"""The command line starts without its heavy dependencies: ``--help`` and ``--version`` import no
LangGraph, database client, numpy or torch (the top-level ones not even pydantic, which typer itself
uses to read a command's parameters); ``import brain_graph`` imports nothing of the API."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

HEAVY = ("langgraph", "langchain_core", "neo4j", "weaviate", "numpy", "torch", "sentence_transformers", "pydantic")
MODELS = "pydantic"

PROBE = """
import json, sys
import brain_graph.cli.main as cli
try:
    cli.app(sys.argv[1:], standalone_mode=False)
except SystemExit:
    pass
heavy = {heavy!r}
print(json.dumps(sorted(name for name in heavy if name in sys.modules)))
"""


def _heavy_modules_after(args: list[str]) -> list[str]:
    """The heavy top-level packages a fresh interpreter holds after running the CLI with ``args``."""
    completed = subprocess.run(
        [sys.executable, "-c", PROBE.format(heavy=HEAVY), *args], capture_output=True, text=True, check=True
    )
    return list(json.loads(completed.stdout.strip().splitlines()[-1]))


@pytest.mark.parametrize(
    "args",
    [["--version"], ["--help"], *([command, "--help"] for command in ("search", "index", "load", "profiles"))],
)
def test_help_and_version_import_nothing_heavy(args: list[str]) -> None:
    allowed = [] if len(args) == 1 else [MODELS]
    assert [name for name in _heavy_modules_after(args) if name not in allowed] == []


def test_the_probe_sees_heavy_modules_when_a_command_needs_them() -> None:
    """The check above can fail: ``profiles`` builds the embedders (langchain-core); a refused flag pair
    is refused before anything is imported."""
    assert "langchain_core" not in _heavy_modules_after(["profiles", "--default", "--check"])
    assert "langchain_core" in _heavy_modules_after(["profiles"])


def test_importing_the_package_imports_no_api_module_until_a_name_is_used() -> None:
    code = (
        "import sys, brain_graph; before = 'brain_graph.graphs.search' in sys.modules; "
        "brain_graph.build_graph; print(before, 'brain_graph.graphs.search' in sys.modules)"
    )
    completed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert completed.stdout.split() == ["False", "True"]


def test_every_public_name_resolves_and_is_listed() -> None:
    import brain_graph

    assert sorted(brain_graph._EXPORTS) == sorted(brain_graph.__all__)
    for name in brain_graph.__all__:
        assert getattr(brain_graph, name).__name__ == name
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        _ = brain_graph.nothing  # type: ignore[attr-defined]
