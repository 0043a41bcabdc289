"""Bad command-line input is reported as the flag the user typed: one ``error:`` line, exit 2, no
traceback; flags that contradict each other are refused before anything runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from brain_graph.cli.flags import SEARCH_FLAGS, flag_of, on_the_command_line
from brain_graph.cli.main import app
from brain_graph.core.errors import InvalidRequestError
from tests.helpers import SMALL_GRAPH

runner = CliRunner()

BAD_SEARCH_FLAGS: dict[str, tuple[list[str], str]] = {
    # flag: (the arguments after QUERY that make it invalid, the start of the problem reported)
    "QUERY": (["", "--public"], "String should have at least 1 character"),
    "--tenant": (["q", "--tenant", "", "--public"], "String should have at least 1 character"),
    "--project": (["q", "--project", " ", "--public"], "must not be blank"),
    "--kind": (["q", "--kind", "video", "--public"], "unknown profile kind"),
    "--node-type": (["q", "--node-type", "", "--public"], "entry '' must not be blank"),
    "--namespace": (["q", "--namespace", "", "--public"], "entry '' must not be blank"),
    "--tag": (["q", "--tag", "", "--public"], "entry '' must not be blank"),
    "--updated-after": (["q", "--updated-after", "yesterday", "--public"], "must be an ISO-8601 date"),
    "--max-age-days": (["q", "--max-age-days", "0", "--public"], "Input should be greater than or equal to 1"),
    "--as-of": (["q", "--max-age-days", "3", "--as-of", "soon", "--public"], "must be an ISO-8601 date"),
    "--top-k": (["q", "--top-k", "0", "--public"], "Input should be greater than or equal to 1"),
    "--depth": (["q", "--depth", "99", "--public"], "must be between 0 and 3"),
    "--max-nodes": (["q", "--max-nodes", "100000", "--public"], "Input should be less than or equal to"),
    "--max-episodes": (["q", "--max-episodes", "-1", "--public"], "Input should be greater than or equal to 0"),
    "--mode": (["q", "--mode", "fuzzy", "--public"], "Input should be 'vector', 'lexical' or 'hybrid'"),
    "--min-score": (["q", "--min-score", "-1", "--public"], "Input should be greater than or equal to 0"),
    "--principal": (["q", "--principal", "group:security"], "must not start with 'user:' or 'group:'"),
    "--group": (["q", "--principal", "bob", "--group", ""], "must not be empty"),
}
"""One invalid use of every flag that sets a request field; ``--public`` sets ``filter.secured`` to a
boolean, which cannot be invalid (its refusals are the conflicts below)."""


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("cli-flags")
    dataset = folder / "graph.json"
    dataset.write_text(json.dumps(SMALL_GRAPH), encoding="utf-8")
    path = folder / "store.sqlite3"
    result = runner.invoke(app, ["load", str(dataset), "--store", str(path), "--quiet"])
    assert result.exit_code == 0, result.output
    return path


def _refused(args: list[str]) -> str:
    """The one line a refused command printed (after checking exit 2, one line, no traceback)."""
    result = runner.invoke(app, args)
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert result.stderr.count("\n") == 1, result.stderr
    assert "Traceback" not in result.output
    return result.stderr


def test_every_flag_of_the_table_has_a_bad_case() -> None:
    assert set(BAD_SEARCH_FLAGS) == set(SEARCH_FLAGS.values()) - {"--public"}


@pytest.mark.parametrize("flag", sorted(BAD_SEARCH_FLAGS))
def test_a_bad_search_flag_is_named(store: Path, flag: str) -> None:
    args, problem = BAD_SEARCH_FLAGS[flag]
    line = _refused(["search", *args[:1], "--tenant", "t1", *args[1:], "--store", str(store)])
    assert line.startswith(f"error: invalid request: {flag}: {problem}")
    assert not any(field in line for field in SEARCH_FLAGS if "." in field)


@pytest.mark.parametrize(
    ("args", "flag", "problem"),
    [
        (["--tenant", ""], "--tenant", "must not be blank"),
        (["--profile", "nope", "--profile", "cdm.doc.body"], "--profile", "unknown embedding profile(s) ['nope']"),
    ],
)
def test_a_bad_index_flag_is_named(store: Path, args: list[str], flag: str, problem: str) -> None:
    line = _refused(["index", "--store", str(store), *args])
    assert line.startswith(f"error: invalid request: {flag}: {problem}")


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (["search", "q", "--tenant", "t1", "--public", "--principal", "bob"], ("--principal", "--public")),
        (["search", "q", "--tenant", "t1", "--public", "--group", "security"], ("--group", "--public")),
        (["search", "q", "--tenant", "t1", "--group", "security"], ("--group", "--principal")),
        (["search", "q", "--tenant", "t1", "--public", "--as-of", "2024-09-01"], ("--as-of", "--max-age-days")),
        (
            ["search", "q", "--tenant", "t1", "--public", "--server", "http://x", "--store", "s"],
            ("--server", "--store"),
        ),
        (["profiles", "--default", "--check"], ("--default", "--check")),
        (["profiles", "--default", "--file", "p.toml"], ("--default", "--file")),
        (["attach", "--check", "m.toml", "--out", "o.toml"], ("--check", "--out")),
        (["attach", "--check", "m.toml", "--labels", "Issue"], ("--check", "--labels")),
        (["attach", "--check", "m.toml", "--no-weaviate"], ("--check", "--no-weaviate")),
    ],
)
def test_conflicting_flags_are_refused_naming_both(args: list[str], named: tuple[str, str]) -> None:
    """Both flags named; before anything runs (the store and mapping files named here do not exist)."""
    line = _refused(args)
    assert line.startswith("error: ")
    assert all(flag in line for flag in named)


def test_a_principal_with_public_is_refused_before_searching(store: Path) -> None:
    """Not a public search that quietly ignores the principal: nothing is searched."""
    args = ["search", "token", "--tenant", "t1", "--principal", "bob", "--public", "--store", str(store), "--json"]
    result = runner.invoke(app, args)
    assert result.exit_code == 2
    assert result.stdout == ""


def test_a_secured_search_without_a_principal_names_the_flags(store: Path) -> None:
    result = runner.invoke(app, ["search", "token", "--tenant", "t1", "--store", str(store)])
    assert result.exit_code == 3
    assert "--principal" in result.stderr
    assert "--public" in result.stderr
    assert "filter.secured" not in result.stderr


@pytest.mark.parametrize(
    ("field", "flag"),
    [
        ("options.topK", "--top-k"),
        ("options.topK.value", "--top-k"),
        ("context.principal.groups[0]", "--group"),
        ("context.principal.principalId", "--principal"),
        ("filter.tenantIdx", None),
        ("options", None),
    ],
)
def test_flag_of_matches_a_field_or_its_parts_only(field: str, flag: str | None) -> None:
    assert flag_of(field, SEARCH_FLAGS) == flag


def test_an_error_of_a_field_no_flag_sets_is_left_as_it_is() -> None:
    error = InvalidRequestError("options.includeEpisodes", "must be a boolean")
    assert on_the_command_line(error) is error
