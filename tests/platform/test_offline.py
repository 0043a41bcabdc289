"""``langgraph dev`` as the tests run it never reaches the network: no usage ping, no version check,
no tracing, no browser (checked with strace: the server opens no connection off the loopback), and it
starts cleanly: no traceback, no end-of-life or deprecation banner, no warning but brain-graph's own."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import httpx
import pytest

from brain_graph.graphs.search import GRAPH_NAME
from tests.platform.cases import SEARCHES
from tests.platform.devserver import REPO_ROOT, run_dev_server

pytestmark = pytest.mark.server

CONNECT = re.compile(
    r'connect\(\d+, \{sa_family=AF_INET6?, sin6?_port=htons\((\d+)\), .*?inet_(?:addr|pton)\((?:AF_INET6, )?"([^"]+)"'
)
LOOPBACK = {"127.0.0.1", "::1", "::ffff:127.0.0.1"}
ANSI = re.compile(r"\x1b\[[0-9;]*m")
# langgraph-api 0.8 printed "⚠️ [support] langgraph-api 0.8.7 is End of Life." (and "is in Critical support.")
BANNER = re.compile(r"end[ -]of[ -]life|deprecat|\[support\]|critical support", re.IGNORECASE)
LEVEL = re.compile(r"\[(warning|error|critical)\s*\].*?\[([\w.]+)\]")


def _strace_works() -> bool:
    if shutil.which("strace") is None:
        return False
    probe = subprocess.run(
        ["strace", "-f", "-e", "trace=connect", "true"], capture_output=True, timeout=30, check=False
    )
    return probe.returncode == 0


@pytest.mark.skipif(not _strace_works(), reason="strace is not available (or ptrace is not permitted)")
def test_the_dev_server_opens_no_outbound_connection(brain_home: Path, tmp_path: Path) -> None:
    trace = tmp_path / "connect.trace"
    wrapper = ["strace", "-f", "-e", "trace=connect", "-o", str(trace)]
    with run_dev_server(
        REPO_ROOT / "langgraph.json",
        tmp_path,
        {"BRAIN_GRAPH_HOME": str(brain_home), "BRAIN_GRAPH_AUTH": "insecure"},  # runs without a token
        wrapper=wrapper,
    ) as server:
        request, _ = SEARCHES["public"]
        response = httpx.post(
            f"{server.url}/runs/wait", json={"assistant_id": GRAPH_NAME, "input": request}, timeout=60
        )
        assert response.status_code == 200
        assert response.json()["hits"]
    outbound = [
        f"{address}:{port}"
        for port, address in CONNECT.findall(trace.read_text(encoding="utf-8"))
        if address not in LOOPBACK
    ]
    assert outbound == []
    assert "Opening Studio in your browser" not in server.log()


@pytest.mark.parametrize(
    "env",
    [
        pytest.param({"BRAIN_GRAPH_AUTH": "insecure"}, id="insecure-dev-mode"),
        pytest.param({"BRAIN_GRAPH_AUTH_SECRET": "s" * 48}, id="bearer-tokens"),
    ],
)
def test_the_server_starts_without_tracebacks_or_banners(brain_home: Path, tmp_path: Path, env: dict[str, str]) -> None:
    with run_dev_server(REPO_ROOT / "langgraph.json", tmp_path, {"BRAIN_GRAPH_HOME": str(brain_home), **env}) as server:
        startup = ANSI.sub("", server.log())  # everything printed until it answered /ok
    assert "Application started up" in startup
    assert "Traceback" not in startup
    assert BANNER.findall(startup) == []
    assert "Warning:" not in startup  # no Python warning (UserWarning, DeprecationWarning, ...)
    loggers = {logger for _, logger in LEVEL.findall(startup)}
    assert {logger for logger in loggers if not logger.startswith("brain_graph")} == set()
    if "BRAIN_GRAPH_AUTH_SECRET" in env:
        assert loggers == set()
