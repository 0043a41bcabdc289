"""Attack class: bad input and bad configuration at the command line (arguments that are not valid
UTF-8, malformed principals, bad ``BRAIN_GRAPH_*``/``NEO4J_URI`` values, a ``.env`` that is not UTF-8,
store paths that are not a store). Each is one ``error:`` line on stderr with exit code 2 (3 when not
authorised), never a traceback, a silent empty result or a change to the file named."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from brain_graph.cli.main import app
from tests.probes.support import SMALL_GRAPH

BASE_ENV = {
    "BRAIN_GRAPH_BACKEND": "embedded",
    "BRAIN_GRAPH_STORE_PATH": None,
    "BRAIN_GRAPH_SERVICE_PRINCIPAL": None,
    "BRAIN_GRAPH_MAX_EXPAND_DEPTH": None,
    "BRAIN_GRAPH_SAFE_EDGE_TYPES": None,
}
NOT_A_DATABASE = "not a database\n" * 50


def _run(args: list[str], tmp_path: Path, **env: str | None) -> Any:
    return CliRunner().invoke(app, args, env={**BASE_ENV, "BRAIN_GRAPH_HOME": str(tmp_path / "home"), **env})


def _assert_clean_failure(result: Any, code: int) -> str:
    """The command failed with ``code`` and one ``error:`` line; returns that line."""
    raised = result.exception
    assert raised is None or isinstance(raised, SystemExit), f"raw {type(raised).__name__}: {raised}"
    assert result.exit_code == code, (result.exit_code, result.stderr[-500:])
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr[-500:]
    assert lines[0].startswith("error: "), result.stderr[-500:]
    return lines[0]


def _dataset(tmp_path: Path) -> Path:
    data = tmp_path / "small.json"
    data.write_text(json.dumps(SMALL_GRAPH), encoding="utf-8")
    return data


@pytest.fixture
def loaded_store(tmp_path: Path) -> Path:
    store = tmp_path / "store.sqlite3"
    result = _run(["load", str(_dataset(tmp_path)), "--store", str(store)], tmp_path)
    assert result.exit_code == 0, result.stderr
    return store


@pytest.mark.parametrize("json_output", [False, True], ids=["markdown", "json"])
def test_query_with_invalid_utf8_argument_is_bad_input(tmp_path: Path, loaded_store: Path, json_output: bool) -> None:
    """A shell argument with an invalid UTF-8 byte arrives as a lone surrogate (surrogateescape); the
    pack then held it and writing it to a UTF-8 stdout raised UnicodeEncodeError."""
    args = ["search", "token \udcff refresh", "--tenant", "t1", "--public", "--store", str(loaded_store)]
    _assert_clean_failure(_run([*args, "--json"] if json_output else args, tmp_path), 2)


# -- store paths that are not a store: search and load alike ---------------------------------------


def test_store_file_that_is_not_a_database(tmp_path: Path) -> None:
    bogus = tmp_path / "notes.txt"
    bogus.write_text(NOT_A_DATABASE, encoding="utf-8")
    search = _run(["search", "token", "--tenant", "t1", "--public", "--store", str(bogus)], tmp_path)
    assert str(bogus) in _assert_clean_failure(search, 2)
    load = _run(["load", str(_dataset(tmp_path)), "--store", str(bogus)], tmp_path)
    assert "is not a SQLite database" in _assert_clean_failure(load, 2)
    assert bogus.read_text(encoding="utf-8") == NOT_A_DATABASE


def test_empty_file_is_not_a_store_to_search(tmp_path: Path) -> None:
    empty = tmp_path / "empty.sqlite3"
    empty.write_bytes(b"")
    search = _run(["search", "token", "--tenant", "t1", "--public", "--store", str(empty)], tmp_path)
    assert f"{empty} is not a brain-graph store" in _assert_clean_failure(search, 2)


def test_store_path_that_is_a_directory(tmp_path: Path) -> None:
    folder = tmp_path / "folder"
    folder.mkdir()
    load = _run(["load", str(_dataset(tmp_path)), "--store", str(folder)], tmp_path)
    assert f"{folder} is a directory" in _assert_clean_failure(load, 2)
    search = _run(["search", "token", "--tenant", "t1", "--public", "--store", str(folder)], tmp_path)
    assert f"{folder} is a directory" in _assert_clean_failure(search, 2)


def test_brain_graph_home_that_is_a_file(tmp_path: Path) -> None:
    home = tmp_path / "home-file"
    home.write_text("x", encoding="utf-8")
    load = _run(["load", str(_dataset(tmp_path))], tmp_path, BRAIN_GRAPH_HOME=str(home))
    assert f"{home} is not a folder" in _assert_clean_failure(load, 2)
    search = _run(["search", "token", "--tenant", "t1", "--public"], tmp_path, BRAIN_GRAPH_HOME=str(home))
    assert f"{home} is not a folder" in _assert_clean_failure(search, 2)
    assert home.read_text(encoding="utf-8") == "x"


@pytest.mark.parametrize("how", ["--store", "BRAIN_GRAPH_STORE_PATH"])
def test_explicit_store_path_that_does_not_exist_is_reported(tmp_path: Path, loaded_store: Path, how: str) -> None:
    """A typo in ``--store`` (or BRAIN_GRAPH_STORE_PATH) silently searched an empty store and printed
    an empty pack with exit 0: the careless user believed the data had no match."""
    typo = loaded_store.with_name("stroe.sqlite3")
    args = ["search", "token refresh", "--tenant", "t1", "--public"]
    if how == "--store":
        result = _run([*args, "--store", str(typo)], tmp_path)
    else:
        result = _run(args, tmp_path, BRAIN_GRAPH_STORE_PATH=str(typo))
    line = _assert_clean_failure(result, 2)
    assert f"{typo} does not exist" in line
    assert "brain-graph load" in line
    assert not typo.exists()


def test_default_store_that_was_never_loaded_is_an_empty_result(tmp_path: Path) -> None:
    """Without an explicit path, a store nobody loaded yet is an empty result, not an error."""
    result = _run(["search", "token refresh", "--tenant", "t1", "--public"], tmp_path)
    assert result.exit_code == 0, result.stderr
    assert "_No sources._" in result.stdout
    assert result.stderr == (
        "note: tenant 't1' holds no data in the embedded backend; "
        "fill it with: brain-graph load PATH (or brain-graph load --example)\n"
    )


# -- configuration ------------------------------------------------------------------------------


def test_env_file_not_utf8_is_a_configuration_error(
    tmp_path: Path, loaded_store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """brain-graph reads ``.env`` itself; one saved in latin-1 raised a raw UnicodeDecodeError."""
    work = tmp_path / "cwd"
    work.mkdir()
    (work / ".env").write_bytes("BRAIN_GRAPH_MAX_EXPAND_DEPTH=2 # d\xe9faut\n".encode("latin-1"))
    monkeypatch.chdir(work)
    result = _run(["search", "token", "--tenant", "t1", "--public", "--store", str(loaded_store)], tmp_path)
    line = _assert_clean_failure(result, 2)
    assert f"{work / '.env'}: not UTF-8" in line


@pytest.mark.parametrize(
    ("variable", "value", "backend"),
    [
        ("BRAIN_GRAPH_SERVICE_PRINCIPAL", "ture", "embedded"),
        ("BRAIN_GRAPH_MAX_EXPAND_DEPTH", "-1", "embedded"),
        ("BRAIN_GRAPH_SAFE_EDGE_TYPES", "references,ASSIGNED-TO", "embedded"),
        ("BRAIN_GRAPH_BACKEND_TIMEOUT", "nan", "neo4j-weaviate"),
        ("WEAVIATE_HTTP_PORT", "80a", "neo4j-weaviate"),
    ],
)
def test_bad_configuration_is_one_line_exit_2(tmp_path: Path, variable: str, value: str, backend: str) -> None:
    """README: a bad ``BRAIN_GRAPH_*`` value is one line naming the variable and what it allows, exit 2."""
    env = {"BRAIN_GRAPH_BACKEND": backend, variable: value}
    result = _run(["search", "token", "--tenant", "probe-none", "--public"], tmp_path, **env)
    assert _assert_clean_failure(result, 2).startswith(f"error: {variable}: ")


@pytest.mark.parametrize(
    "uri",
    [
        "http://127.0.0.1:7474",
        "bolt://127.0.0.1:notaport",
        "bolt://127.0.0.1:99999",
        "localhost:7687",
        "bolt://",
        "bolt://exa..mple:7687",
        "bolt://127.0.0.1:7687?policy=x",  # passes the check, refused by the driver when it connects
    ],
)
def test_malformed_neo4j_uri_is_a_configuration_error(tmp_path: Path, uri: str) -> None:
    """A NEO4J_URI with the wrong scheme or port gave a raw ModuleNotFoundError (aiohttp, for the
    driver's HTTP preview) or ValueError traceback, or 'neo4j unavailable' with exit 1; it is a
    configuration error naming NEO4J_URI (no server is contacted)."""
    result = _run(
        ["search", "token", "--tenant", "probe-none", "--public"],
        tmp_path,
        BRAIN_GRAPH_BACKEND="neo4j-weaviate",
        NEO4J_URI=uri,
        WEAVIATE_HOST="127.0.0.1",
        WEAVIATE_HTTP_PORT="1",
        WEAVIATE_GRPC_PORT="2",
    )
    assert "NEO4J_URI" in _assert_clean_failure(result, 2)


# -- principals ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (["--principal", "bob", "--group", "user:carol"], 2),
        (["--principal", "bob\u202e"], 2),
        (["--principal", "bob", "--group", "secu\u200brity"], 2),
        (["--group", "security"], 2),  # a group without --principal is refused as a usage error
    ],
)
def test_cli_principals(tmp_path: Path, loaded_store: Path, args: list[str], code: int) -> None:
    result = _run(["search", "postmortem", "--tenant", "t1", "--store", str(loaded_store), *args], tmp_path)
    _assert_clean_failure(result, code)
