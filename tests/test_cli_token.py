"""``brain-graph token``: prints only a signed token the server's verifier accepts; errors are one line."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import jwt
import pytest
from typer.testing import CliRunner, Result

from brain_graph.auth import JwtVerifier, load_auth_settings
from brain_graph.cli.main import app
from brain_graph.core.security import Principal
from tests.unit.auth_plugin import SECRET, clean_auth_environment, configure, forget_auth_settings

runner = CliRunner()


@pytest.fixture(autouse=True)
def _clean_auth(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    clean_auth_environment(monkeypatch, tmp_path)
    yield
    forget_auth_settings()


@pytest.fixture
def secret(monkeypatch: pytest.MonkeyPatch) -> str:
    configure(monkeypatch, BRAIN_GRAPH_AUTH_SECRET=SECRET)
    return SECRET


def token(*args: str) -> Result:
    forget_auth_settings()  # the command reads the settings of the environment at the time
    return runner.invoke(app, ["token", *args])


def minted(result: Result) -> str:
    assert result.exit_code == 0, result.output
    assert result.stderr == ""
    assert result.stdout.endswith("\n")
    assert result.stdout.count("\n") == 1  # only the token
    return result.stdout.strip()


def test_the_token_verifies_with_the_same_secret(secret: str) -> None:
    before = int(time.time())
    printed = minted(token("--subject", "alice", "--tenant", "acme", "--tenant", "beta", "--group", "ops"))
    credentials = JwtVerifier(secret).verify(printed)
    assert credentials.principal == Principal("alice", ("ops",), ("acme", "beta"))
    assert credentials.scopes == frozenset({"reader"})  # the default scope
    assert credentials.expires_at is not None
    assert before + 3600 <= credentials.expires_at <= int(time.time()) + 3600  # the default lifetime
    verifier = load_auth_settings().build_verifier()  # what a server with this environment checks with
    assert verifier is not None
    assert verifier.verify(printed).principal.principal_id == "alice"


def test_scopes_lifetime_and_short_subject_option(secret: str) -> None:
    printed = minted(token("-s", "bob", "--tenant", "acme", "--scope", "maintainer", "--ttl", "60"))
    credentials = JwtVerifier(secret).verify(printed)
    assert credentials.principal.principal_id == "bob"
    assert credentials.scopes == frozenset({"maintainer", "reader"})
    claims = jwt.decode(printed, options={"verify_signature": False})
    assert claims["exp"] - claims["iat"] == 60
    assert claims["scope"] == "maintainer"


def test_the_token_follows_the_configured_issuer_and_audience(monkeypatch: pytest.MonkeyPatch, secret: str) -> None:
    configure(monkeypatch, BRAIN_GRAPH_AUTH_ISSUER="acme-idp", BRAIN_GRAPH_AUTH_AUDIENCE="acme-brain")
    printed = minted(token("-s", "alice", "--tenant", "acme"))
    claims = jwt.decode(printed, secret, algorithms=["HS256"], audience="acme-brain", issuer="acme-idp")
    assert claims["sub"] == "alice"


def test_a_token_signed_with_another_secret_does_not_verify(secret: str) -> None:
    printed = minted(token("-s", "alice", "--tenant", "acme"))
    with pytest.raises(jwt.InvalidSignatureError):
        jwt.decode(printed, "x" * 40, algorithms=["HS256"], audience="brain-graph")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--tenant", "acme", "--scope", "admin"], "error: invalid request: --scope: unknown scope(s) ['admin']"),
        (["--tenant", "acme", "--ttl", "0"], "error: invalid request: --ttl: must be between 1 and"),
        (["--tenant", "acme", "--ttl", "-5"], "error: invalid request: --ttl: must be between 1 and"),
        (["--tenant", "acme", "--ttl", "99999999999"], "error: invalid request: --ttl: must be between 1 and"),
        ([], "error: invalid request: --tenant: a token needs a principal id and at least one tenant"),
        (["--tenant", ""], "error: invalid request: --tenant: must be a tenant id"),
        (["--tenant", "a\nb"], "error: invalid request: --tenant: must not contain control"),
        (["--tenant", "acme", "--group", "group:x"], "error: invalid request: --group: "),
    ],
)
def test_bad_arguments_are_one_line_with_exit_code_2(secret: str, args: list[str], message: str) -> None:
    result = token("-s", "alice", *args)
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr.startswith(message)
    assert result.stderr.count("\n") == 1
    assert "Traceback" not in result.output


def test_an_empty_subject_is_refused(secret: str) -> None:
    result = token("-s", "", "--tenant", "acme")
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr.startswith("error: invalid request: --subject: a token needs a principal id")
    assert result.stderr.count("\n") == 1


def test_the_subject_is_required(secret: str) -> None:
    result = token("--tenant", "acme")
    assert result.exit_code == 2
    assert result.stdout == ""
    assert "Missing option '--subject'" in result.stderr


def test_without_a_secret_it_says_what_to_set() -> None:
    result = token("-s", "alice", "--tenant", "acme")
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr == "error: minting a token needs BRAIN_GRAPH_AUTH_SECRET (the key the server verifies with)\n"


def test_a_short_secret_is_one_line_and_not_echoed(monkeypatch: pytest.MonkeyPatch) -> None:
    short = "too-short-to-sign"
    configure(monkeypatch, BRAIN_GRAPH_AUTH_SECRET=short)
    result = token("-s", "alice", "--tenant", "acme")
    assert result.exit_code == 2
    assert result.stderr.startswith("error: BRAIN_GRAPH_AUTH_SECRET: must be at least 32 characters")
    assert result.stderr.count("\n") == 1
    assert short not in result.output


def test_the_installed_command_prints_a_token_a_shell_can_capture(tmp_path: Path) -> None:
    env = {**os.environ, "BRAIN_GRAPH_AUTH_SECRET": SECRET}
    script = f'TOKEN=$("{sys.executable}" -m brain_graph.cli.main token -s alice --tenant acme) && printf %s "$TOKEN"'
    completed = subprocess.run(["sh", "-c", script], capture_output=True, text=True, check=False, env=env, cwd=tmp_path)
    assert completed.returncode == 0, completed.stderr
    assert completed.stderr == ""
    assert JwtVerifier(SECRET).verify(completed.stdout).principal.tenants == frozenset({"acme"})
    env.pop("BRAIN_GRAPH_AUTH_SECRET")
    failed = subprocess.run(["sh", "-c", script], capture_output=True, text=True, check=False, env=env, cwd=tmp_path)
    assert failed.returncode == 2
    assert failed.stdout == ""
    assert failed.stderr.startswith("error: minting a token needs BRAIN_GRAPH_AUTH_SECRET")
    assert "Traceback" not in failed.stderr


def test_a_subject_that_reads_as_a_group_is_named_as_the_flag(secret: str) -> None:
    result = token("-s", "group:admins", "--tenant", "acme")
    assert result.exit_code == 2
    assert result.stderr.startswith("error: invalid request: --subject: must not start with 'user:' or 'group:'")
