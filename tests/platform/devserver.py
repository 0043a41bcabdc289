"""Running a real ``langgraph dev`` server for tests: offline, on a free loopback port, in its own
process group so it and any child it spawns are stopped together."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

REPO_ROOT = Path(__file__).resolve().parents[2]
STARTUP_TIMEOUT_S = 90.0
STOP_TIMEOUT_S = 15.0

# Variables that must not leak from the developer's shell into the server: credentials and tracing
# (nothing may phone home), and brain-graph or backend settings (the test decides the store).
_DROPPED_PREFIXES = ("LANGSMITH_", "LANGCHAIN_", "LANGGRAPH_", "BRAIN_GRAPH_", "NEO4J_", "WEAVIATE_", "OTEL_")
_OFFLINE = {
    "LANGSMITH_TRACING": "false",
    "LANGCHAIN_TRACING_V2": "false",
    "LANGGRAPH_CLI_NO_ANALYTICS": "1",  # the CLI's usage ping
    "LANGGRAPH_NO_VERSION_CHECK": "true",  # the server's PyPI version check
    "PYTHONUNBUFFERED": "1",
}


@dataclass(frozen=True)
class DevServer:
    """A running server: its base URL and its combined stdout/stderr log."""

    url: str
    log_path: Path
    process: subprocess.Popen[bytes]

    def log(self) -> str:
        """Everything the server printed so far."""
        return self.log_path.read_text(encoding="utf-8", errors="replace")


def free_port() -> int:
    """A loopback port nobody listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def langgraph_executable() -> str:
    """The ``langgraph`` CLI of the running interpreter's environment."""
    candidate = Path(sys.executable).parent / "langgraph"
    if candidate.exists():
        return str(candidate)
    found = shutil.which("langgraph")
    if found is None:  # pragma: no cover - dev dependencies missing
        raise RuntimeError("the langgraph CLI is not installed (pip install 'langgraph-cli[inmem]')")
    return found


def dev_command(config: Path, port: int, *, reload: bool = False) -> list[str]:
    """``langgraph dev`` with ``config`` on ``127.0.0.1:port``, no browser, reloading only if asked."""
    command = [langgraph_executable(), "dev", "--config", str(config), "--host", "127.0.0.1", "--port", str(port)]
    return [*command, "--no-browser", *(() if reload else ("--no-reload",))]


def server_env(extra: Mapping[str, str]) -> dict[str, str]:
    """The environment of a test server: the current one without credentials or settings, offline."""
    env = {key: value for key, value in os.environ.items() if not key.startswith(_DROPPED_PREFIXES)}
    env.update(_OFFLINE)
    env["BRAIN_GRAPH_BACKEND"] = "embedded"
    env.update(extra)
    return env


def stop(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM the process group, then SIGKILL it if it is still there after a bounded wait."""
    for sig, wait in ((signal.SIGTERM, STOP_TIMEOUT_S), (signal.SIGKILL, STOP_TIMEOUT_S)):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, sig)
        try:
            process.wait(timeout=wait)
            break
        except subprocess.TimeoutExpired:
            continue
    with contextlib.suppress(ProcessLookupError):  # children that outlived the leader
        os.killpg(process.pid, signal.SIGKILL)


def _wait_ready(url: str, process: subprocess.Popen[bytes], log_path: Path, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    with httpx.Client(timeout=2.0) as client:
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise RuntimeError(f"langgraph dev exited with {process.returncode}:\n{_tail(log_path)}")
            with contextlib.suppress(httpx.HTTPError):
                if client.get(f"{url}/ok").status_code == 200:
                    return
            time.sleep(0.2)
    raise TimeoutError(f"langgraph dev not ready at {url} after {timeout:.0f}s:\n{_tail(log_path)}")


def _tail(path: Path, lines: int = 60) -> str:
    return "\n".join(path.read_text(encoding="utf-8", errors="replace").splitlines()[-lines:])


@contextlib.contextmanager
def run_dev_server(
    config: Path,
    workdir: Path,
    env: Mapping[str, str],
    *,
    timeout: float = STARTUP_TIMEOUT_S,
    wrapper: Sequence[str] = (),
) -> Iterator[DevServer]:
    """Start ``langgraph dev --config <config>`` in ``workdir`` (its in-memory persistence lands there),
    optionally under a ``wrapper`` command (e.g. strace), wait until ``/ok`` answers, yield it, and
    always stop its whole process group."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    command = [*wrapper, *dev_command(config, port)]
    log_path = workdir / "langgraph-dev.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            command,
            cwd=workdir,
            env=server_env(env),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            _wait_ready(url, process, log_path, timeout)
            yield DevServer(url=url, log_path=log_path, process=process)
        finally:
            stop(process)


def sse_events(text: str) -> list[tuple[str, Any]]:
    """The ``(event, data)`` pairs of a server-sent events body (``data`` decoded from JSON)."""
    events: list[tuple[str, Any]] = []
    for block in text.replace("\r\n", "\n").split("\n\n"):
        lines = block.splitlines()
        event = next((line.removeprefix("event:").strip() for line in lines if line.startswith("event:")), None)
        data = "\n".join(line.removeprefix("data:").strip() for line in lines if line.startswith("data:"))
        if event is not None:
            events.append((event, json.loads(data) if data else None))
    return events
