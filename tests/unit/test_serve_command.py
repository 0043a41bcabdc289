"""``brain-graph serve``: bad flags and settings end it in one line (exit 2) before any worker
starts; the metrics directory of several workers; the warning about a budget per worker."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from brain_graph.cli.main import app
from brain_graph.core.errors import InvalidRequestError
from brain_graph.serving.standalone import METRICS_VARIABLE, ServeOptions, check_options, metrics_directory
from brain_graph.serving.standalone import rate_limit_note as note
from tests.platform.devserver import free_port
from tests.unit.auth_plugin import SECRET, clean_auth_environment, configure, forget_auth_settings

runner = CliRunner()


@pytest.fixture(autouse=True)
def _clean_auth(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    clean_auth_environment(monkeypatch, tmp_path)
    monkeypatch.delenv(METRICS_VARIABLE, raising=False)
    yield
    forget_auth_settings()


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (["--workers", "0"], "error: invalid request: --workers: must be from 1 to 64 (got 0)"),
        (["--workers", "65"], "error: invalid request: --workers: must be from 1 to 64 (got 65)"),
        (["--port", "0"], "error: invalid request: --port: must be from 1 to 65535 (got 0)"),
        (["--port", "70000"], "error: invalid request: --port: must be from 1 to 65535 (got 70000)"),
        (["--host", "not a host"], "error: invalid request: --host: must be an IP address or a host name"),
        (["--log-level", "loud"], "error: invalid request: --log-level: must be one of critical, error,"),
    ],
)
def test_a_bad_flag_is_one_line(args: list[str], line: str) -> None:
    result = runner.invoke(app, ["serve", *args])
    assert result.exit_code == 2
    [printed] = result.stderr.splitlines()
    assert printed.startswith(line)


def test_without_authentication_it_does_not_start() -> None:
    result = runner.invoke(app, ["serve", "--workers", "2"])
    assert result.exit_code == 2
    [printed] = result.stderr.splitlines()
    assert printed.startswith("error: bearer-token authentication is not configured")


def test_a_metrics_directory_that_is_not_one_does_not_start(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(METRICS_VARIABLE, str(tmp_path / "missing"))
    result = runner.invoke(app, ["serve", "--workers", "2"])
    assert result.exit_code == 2
    assert result.stderr.startswith(f"error: {METRICS_VARIABLE}: ")


def test_good_options_pass() -> None:
    for options in (
        ServeOptions(),
        ServeOptions("0.0.0.0", 80, 64, "debug"),
        ServeOptions("::1"),
        ServeOptions("a.b-c"),
    ):
        check_options(options)
    with pytest.raises(InvalidRequestError):
        check_options(ServeOptions(host="-bad"))


def test_several_workers_get_a_metrics_directory_for_the_run() -> None:
    with metrics_directory(1) as none:
        assert none is None
        assert METRICS_VARIABLE not in os.environ
    with metrics_directory(2) as made:
        assert made is not None
        assert made.is_dir()
        assert os.environ[METRICS_VARIABLE] == str(made)
        (made / "counter_1.db").write_bytes(b"")
    assert not made.exists()
    assert METRICS_VARIABLE not in os.environ


def test_a_metrics_directory_given_is_kept(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(METRICS_VARIABLE, str(tmp_path))
    with metrics_directory(4) as given:
        assert given == tmp_path
    assert tmp_path.is_dir()


def test_memory_storage_warns_of_a_budget_per_worker(monkeypatch: pytest.MonkeyPatch) -> None:
    configure(monkeypatch, BRAIN_GRAPH_AUTH_SECRET=SECRET, BRAIN_GRAPH_RATE_LIMIT="5 per hour")
    assert note(1) is None
    forget_auth_settings()
    warning = note(3)
    assert warning is not None
    assert "each of the 3 workers counts its own budget" in warning
    assert "3 x 5 requests" in warning


def test_an_unreachable_storage_is_a_warning(monkeypatch: pytest.MonkeyPatch) -> None:
    storage = f"redis://127.0.0.1:{free_port()}"
    configure(monkeypatch, BRAIN_GRAPH_AUTH_SECRET=SECRET, BRAIN_GRAPH_RATE_LIMIT_STORAGE=storage)
    warning = note(2)
    assert warning is not None
    assert warning.startswith("rate-limit storage unavailable: ")
    assert warning.endswith("gated requests are refused with 503 until it answers")


def test_no_limit_no_warning(monkeypatch: pytest.MonkeyPatch) -> None:
    configure(monkeypatch, BRAIN_GRAPH_AUTH_SECRET=SECRET, BRAIN_GRAPH_RATE_LIMIT="off")
    assert note(8) is None
