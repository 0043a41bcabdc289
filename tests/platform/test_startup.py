"""A server whose authentication is not configured does not start: ``langgraph dev``, with reloading
(its default) and without, exits with a non-zero status after one line naming what to set, and no
traceback."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from brain_graph.auth.settings import NOT_CONFIGURED
from tests.platform.devserver import REPO_ROOT, STARTUP_TIMEOUT_S, dev_command, free_port, server_env, stop

pytestmark = pytest.mark.server


@pytest.mark.parametrize("reload", [False, True], ids=["no-reload", "reload"])
def test_langgraph_dev_without_a_secret_exits_saying_what_to_set(tmp_path: Path, reload: bool) -> None:
    command = dev_command(REPO_ROOT / "langgraph.json", free_port(), reload=reload)
    process = subprocess.Popen(
        command,
        cwd=tmp_path,  # no .env there; server_env drops every BRAIN_GRAPH_* variable of this process
        env=server_env({"BRAIN_GRAPH_HOME": str(tmp_path)}),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        stdout, stderr = process.communicate(timeout=STARTUP_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        pytest.fail(f"langgraph dev (reload={reload}) still runs {STARTUP_TIMEOUT_S:.0f} s after it started")
    finally:
        stop(process)  # the whole process group, whatever happened
    output = stdout.decode(errors="replace") + stderr.decode(errors="replace")
    assert process.returncode != 0
    assert [line for line in stderr.decode().splitlines() if "BRAIN_GRAPH_AUTH_SECRET" in line] == [
        f"brain-graph: the server cannot start: {NOT_CONFIGURED}"
    ]
    assert output.count("BRAIN_GRAPH_AUTH_SECRET") == 1
    assert "Traceback" not in output
