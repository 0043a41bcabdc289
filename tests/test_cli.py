"""The ``brain-graph`` command line."""

from __future__ import annotations

import importlib.metadata
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from brain_graph.cli.main import app
from tests.helpers import SMALL_GRAPH

runner = CliRunner()


@pytest.fixture
def loaded_store(tmp_path: Path) -> Path:
    dataset = tmp_path / "graph.json"
    dataset.write_text(json.dumps(SMALL_GRAPH), encoding="utf-8")
    store = tmp_path / "store.sqlite3"
    result = runner.invoke(app, ["load", str(dataset), "--store", str(store)])
    assert result.exit_code == 0, result.output
    assert "loaded 13 nodes, 12 edges" in result.output
    return store


def test_search_prints_the_markdown_pack(loaded_store: Path) -> None:
    result = runner.invoke(app, ["search", "token refresh", "--tenant", "t1", "--public", "--store", str(loaded_store)])
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("# Brain search context\n\n**Query:** token refresh\n")


def test_search_json_is_the_camel_case_result(loaded_store: Path) -> None:
    args = ["search", "token refresh", "--tenant", "t1", "--public", "--top-k", "2", "--depth", "0", "--json"]
    result = runner.invoke(app, [*args, "--store", str(loaded_store)])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert list(payload) == [
        *("hits", "episodes", "graphNodes", "graphEdges", "passages", "promptPack", "candidates"),
        *("filtersApplied", "warnings", "graphContextIncluded"),
    ]
    assert len(payload["hits"]) == 2
    assert set(payload["hits"][0]) == {
        *("nodeId", "nodeType", "profileId", "profileKind", "score", "title", "url"),
        *("vectorScore", "lexicalScore"),
    }
    assert set(payload["promptPack"]) == {"contextMarkdown", "citations"}
    assert set(payload["promptPack"]["citations"][0]) == {
        *("sourceNodeId", "url", "title", "nodeType"),
        *("vectorScore", "adjustedScore", "reachedBy", "via"),
    }
    candidate_keys = {"nodeId", "nodeType", "title", "url", "profileId", "vectorScore", "adjustedScore"}
    assert set(payload["candidates"][0]) == {*candidate_keys, "reachedBy", "hops", "via", "scoringBreakdown"}
    assert set(payload["candidates"][0]["scoringBreakdown"]) == {
        "vector",
        "lexical",
        "graph",
        "marginFloor",
        "linkWeight",
        "support",
        "ceiling",
    }
    # depth 0: the candidates are the hits, none reached by the graph
    assert [c["nodeId"] for c in payload["candidates"]] == [h["nodeId"] for h in payload["hits"]]
    assert {c["reachedBy"] for c in payload["candidates"]} <= {"vector", "lexical", "exact"}


def test_secured_search_with_a_principal(loaded_store: Path) -> None:
    args = ["search", "token refresh outage postmortem", "--tenant", "t1", "--principal", "bob", "--group", "security"]
    result = runner.invoke(app, [*args, "--json", "--store", str(loaded_store)])
    assert result.exit_code == 0, result.output
    assert "d2" in {hit["nodeId"] for hit in json.loads(result.stdout)["hits"]}


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["--top-k", "500", "--public"], 2, "error: invalid request: --top-k: Input should be less than or equal"),
        (["--kind", "video", "--public"], 2, "error: invalid request: --kind: unknown profile kind"),
        ([], 3, "error: a secured search needs --principal ID (with its --group memberships), or --public"),
    ],
)
def test_errors_are_one_line_with_an_exit_code(loaded_store: Path, args: list[str], code: int, message: str) -> None:
    result = runner.invoke(app, ["search", "token", "--tenant", "t1", *args, "--store", str(loaded_store)])
    assert result.exit_code == code
    assert result.stderr.startswith(message)
    assert result.stderr.count("\n") == 1
    assert "Traceback" not in result.output


def test_load_needs_a_path_or_example() -> None:
    result = runner.invoke(app, ["load"])
    assert result.exit_code == 2
    assert "give a dataset PATH or --example" in result.stderr


def test_the_installed_command_reports_a_bad_dataset_in_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"nodes": [], "edges": [{"tenantId": "t"}]}', encoding="utf-8")
    command = [sys.executable, "-m", "brain_graph.cli.main", "load", str(bad), "--store", str(tmp_path / "s.sqlite3")]
    completed = subprocess.run(command, capture_output=True, text=True, check=False)
    assert completed.returncode == 2
    assert completed.stderr.startswith(f"error: {bad}: edges.0.edgeType: Field required")
    assert "Traceback" not in completed.stderr
    assert not (tmp_path / "s.sqlite3").exists()


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("caf\u00e9".encode("latin-1"), "not UTF-8"),
        (("[" * 200_000).encode(), "nested too deeply"),
        (json.dumps(SMALL_GRAPH | {"formatVersion": 9}).encode(), "formatVersion: Input should be 1"),
    ],
)
def test_every_malformed_dataset_exits_2_in_one_line(tmp_path: Path, content: bytes, message: str) -> None:
    bad = tmp_path / "bad.json"
    bad.write_bytes(content)
    result = runner.invoke(app, ["load", str(bad), "--store", str(tmp_path / "s.sqlite3")])
    assert result.exit_code == 2
    assert result.stderr.startswith(f"error: {bad}: ")
    assert message in result.stderr
    assert result.stderr.count("\n") == 1


@pytest.mark.parametrize(
    ("variables", "message"),
    [
        (
            {"BRAIN_GRAPH_BACKEND": "neo4j"},
            "BRAIN_GRAPH_BACKEND: Input should be 'embedded', 'neo4j-weaviate' or 'mapped'",
        ),
        (  # a backend's own settings are read when that backend is built
            {"BRAIN_GRAPH_BACKEND": "neo4j-weaviate", "BRAIN_GRAPH_BACKEND_TIMEOUT": "soon"},
            "BRAIN_GRAPH_BACKEND_TIMEOUT: Input should be a valid number",
        ),
        ({"BRAIN_GRAPH_BACKEND": "embedded", "BRAIN_GRAPH_MAX_EXPAND_DEPTH": "9"}, "BRAIN_GRAPH_MAX_EXPAND_DEPTH:"),
    ],
)
def test_a_configuration_error_is_one_line_naming_the_variable(
    tmp_path: Path, variables: dict[str, str], message: str
) -> None:
    env = {**os.environ, **variables}
    command = [sys.executable, "-m", "brain_graph.cli.main", "search", "token", "--tenant", "t1", "--public"]
    completed = subprocess.run(command, capture_output=True, text=True, check=False, env=env, cwd=tmp_path)
    assert completed.returncode == 2
    assert completed.stderr.startswith(f"error: {message}")
    assert completed.stderr.count("\n") == 1
    assert "Traceback" not in completed.stderr


@pytest.mark.parametrize(
    "entry",
    [
        [str(Path(sys.executable).with_name("brain-graph"))],  # the installed console script
        [sys.executable, "-m", "brain_graph.cli.main"],
    ],
    ids=["console-script", "module"],
)
def test_a_terminal_that_cannot_show_a_character_gets_its_escape(loaded_store: Path, entry: list[str]) -> None:
    env = {**os.environ, "PYTHONIOENCODING": "ascii"}
    command = [*entry, "search", "caf\u00e9 token", "--tenant", "t1", "--public"]
    completed = subprocess.run([*command, "--store", str(loaded_store)], capture_output=True, text=True, env=env)
    assert completed.returncode == 0, completed.stderr
    assert "caf\\xe9 token" in completed.stdout
    assert "Traceback" not in completed.stderr


def test_a_principal_that_reads_as_a_group_exits_2(loaded_store: Path) -> None:
    args = ["search", "token", "--tenant", "t1", "--principal", "group:security", "--store", str(loaded_store)]
    result = runner.invoke(app, args)
    assert result.exit_code == 2
    assert result.stderr.startswith("error: invalid request: --principal: must not start with")


def test_version_prints_the_installed_version() -> None:
    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0
    assert result.output == f"brain-graph {importlib.metadata.version('brain-graph')}\n"


def test_an_unknown_tenant_is_noted_on_stderr_but_a_tenant_without_matches_is_not(loaded_store: Path) -> None:
    unknown = runner.invoke(app, ["search", "token", "--tenant", "nobody", "--public", "--store", str(loaded_store)])
    assert unknown.exit_code == 0
    assert "_No sources._" in unknown.stdout
    assert unknown.stderr.startswith("note: tenant 'nobody' holds no data in the embedded backend; fill it with: ")
    known = runner.invoke(app, ["search", "token", "--tenant", "t1", "--public", "--store", str(loaded_store)])
    assert known.exit_code == 0
    assert known.stderr == ""


def _index(store: Path, *args: str) -> dict[str, object]:
    result = runner.invoke(app, ["index", "--store", str(store), "--json", *args])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_index_reports_one_json_object_and_a_second_run_embeds_nothing(loaded_store: Path) -> None:
    first = _index(loaded_store)
    assert set(first) >= {"embedded", "unchanged", "deleted", "pending", "truncated", "seconds", "tenants"}
    assert first["embedded"] == 0  # the load embedded everything
    assert first["unchanged"] > 0
    assert first["deleted"] == first["pending"] == 0
    full = _index(loaded_store, "--full")
    assert (full["embedded"], full["unchanged"]) == (first["unchanged"], 0)
    human = runner.invoke(app, ["index", "--store", str(loaded_store)])
    assert human.exit_code == 0
    assert "nothing to do" in human.output


def test_index_of_one_tenant_and_profile(loaded_store: Path) -> None:
    report = _index(loaded_store, "--tenant", "t1", "--profile", "cdm.doc.body")
    assert (report["tenants"], report["profiles"]) == (["t1"], ["cdm.doc.body"])
    bad = runner.invoke(app, ["index", "--store", str(loaded_store), "--profile", "nope"])
    assert bad.exit_code == 2
    assert bad.output.count("\n") == 1
    assert bad.output.startswith("error: invalid request: --profile: unknown embedding profile(s) ['nope']")


def test_quiet_load_prints_nothing(tmp_path: Path) -> None:
    dataset = tmp_path / "graph.json"
    dataset.write_text(json.dumps(SMALL_GRAPH), encoding="utf-8")
    result = runner.invoke(app, ["load", str(dataset), "--store", str(tmp_path / "s.sqlite3"), "--quiet"])
    assert result.exit_code == 0
    assert result.output == ""


def test_an_index_after_changing_the_embedder_asks_for_a_full_run(loaded_store: Path) -> None:
    env = {"BRAIN_GRAPH_EMBEDDER": "lexical:256"}
    refused = runner.invoke(app, ["index", "--store", str(loaded_store)], env=env)
    assert refused.exit_code == 2
    assert "'lexical-hash-v1'" in refused.output
    assert "lexical-hash-v1/256" in refused.output
    assert "brain-graph index --full" in refused.output
    searched = runner.invoke(
        app, ["search", "token", "--tenant", "t1", "--public", "--store", str(loaded_store)], env=env
    )
    assert searched.exit_code == 2
    assert "re-index" in searched.output
    switched = runner.invoke(app, ["index", "--store", str(loaded_store), "--full", "--json"], env=env)
    assert switched.exit_code == 0, switched.output
    assert json.loads(switched.stdout)["embedded"] > 0
    after = runner.invoke(app, ["search", "token", "--tenant", "t1", "--public", "--store", str(loaded_store)], env=env)
    assert after.exit_code == 0, after.output


@pytest.mark.parametrize(
    ("variable", "value", "message"),
    [
        ("BRAIN_GRAPH_EMBEDDER", "word2vec", "BRAIN_GRAPH_EMBEDDER"),
        ("BRAIN_GRAPH_PROFILE_EMBEDDERS", "nope=lexical", "BRAIN_GRAPH_PROFILE_EMBEDDERS"),
        ("BRAIN_GRAPH_EMBEDDER", "sentence-transformers:/no/such/model", "/no/such/model"),
    ],
)
def test_a_bad_embedder_setting_is_one_line(loaded_store: Path, variable: str, value: str, message: str) -> None:
    result = runner.invoke(app, ["index", "--store", str(loaded_store)], env={variable: value})
    assert result.exit_code == 2
    assert result.output.count("\n") == 1
    assert message in result.output


def test_search_modes_and_the_score_floor_from_flags(loaded_store: Path) -> None:
    base = ["search", "Token refresh design", "--tenant", "t1", "--public", "--json", "--store", str(loaded_store)]
    for mode in ("vector", "lexical", "hybrid"):
        result = runner.invoke(app, [*base, "--mode", mode])
        assert result.exit_code == 0, result.output
        hits = json.loads(result.stdout)["hits"]
        assert hits[0]["nodeId"] == "d1"
        assert (hits[0]["vectorScore"] is None) == (mode == "lexical")
        assert (hits[0]["lexicalScore"] is None) == (mode == "vector")
    floored = json.loads(runner.invoke(app, [*base, "--min-score", "5"]).stdout)
    assert floored["candidates"] == []
    assert floored["promptPack"]["citations"] == []
    assert floored["episodes"] == []


@pytest.mark.parametrize(
    ("flags", "named"),
    [
        (["--mode", "fuzzy"], "--mode"),
        (["--min-score", "-1"], "--min-score"),
        (["--top-k", "0"], "--top-k"),
    ],
)
def test_a_bad_search_flag_is_named_in_one_line(loaded_store: Path, flags: list[str], named: str) -> None:
    args = ["search", "token", "--tenant", "t1", "--public", "--store", str(loaded_store), *flags]
    result = runner.invoke(app, args)
    assert result.exit_code == 2
    assert result.stderr.startswith(f"error: invalid request: {named}: ")
    assert result.stderr.count("\n") == 1
