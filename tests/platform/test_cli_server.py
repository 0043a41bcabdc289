"""``brain-graph search --server URL`` on a real ``langgraph dev`` server (insecure development mode)
over the same store as a local search: the same pack byte for byte, the principal honoured, the
server's refusals reported in the CLI's terms."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from brain_graph.auth.settings import load_auth_settings
from brain_graph.cli.main import app
from brain_graph.stores.embedded import STORE_FILE_NAME
from tests.platform.cases import SECURED_POSTMORTEM
from tests.platform.devserver import DevServer, free_port

pytestmark = pytest.mark.server
runner = CliRunner()
QUERY = ["search", "token refresh postmortem", "--tenant", "acme"]


@pytest.fixture(autouse=True)
def no_signing_key(monkeypatch: pytest.MonkeyPatch) -> None:
    """This machine has no server key: the principal travels in the run context (insecure mode)."""
    monkeypatch.delenv("BRAIN_GRAPH_AUTH_SECRET", raising=False)
    load_auth_settings.cache_clear()


def _ok(args: list[str]) -> str:
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    return result.stdout


def _hit_ids(stdout: str) -> set[str]:
    return {hit["nodeId"] for hit in json.loads(stdout)["hits"]}


@pytest.mark.parametrize("who", [["--public"], ["--principal", "alice", "--group", "security"]])
def test_the_server_prints_what_the_local_search_prints(
    dev_server: DevServer, brain_home: Path, who: list[str]
) -> None:
    local = _ok([*QUERY, *who, "--store", str(brain_home / STORE_FILE_NAME)])
    remote = _ok([*QUERY, *who, "--server", dev_server.url])
    assert remote == local
    assert "token" in remote.lower()


def test_the_principal_decides_what_the_server_returns(dev_server: DevServer) -> None:
    alice = _ok([*QUERY, "--principal", "alice", "--group", "security", "--server", dev_server.url, "--json"])
    bob = _ok([*QUERY, "--principal", "bob", "--server", dev_server.url, "--json"])
    assert SECURED_POSTMORTEM in _hit_ids(alice)
    assert SECURED_POSTMORTEM not in _hit_ids(bob)


def test_a_bad_flag_is_named_whoever_searches(dev_server: DevServer) -> None:
    result = runner.invoke(app, [*QUERY, "--public", "--top-k", "0", "--server", dev_server.url])
    assert result.exit_code == 2
    assert result.stderr.startswith("error: invalid request: --top-k: ")
    assert result.stderr.count("\n") == 1


def test_a_server_that_is_not_there_is_one_line(unused_url: str) -> None:
    result = runner.invoke(app, [*QUERY, "--public", "--server", unused_url])
    assert result.exit_code == 1
    assert result.stderr.startswith("error: ")
    assert "brain_search server" in result.stderr
    assert result.stderr.count("\n") == 1


@pytest.fixture
def unused_url() -> str:
    return f"http://127.0.0.1:{free_port()}"
