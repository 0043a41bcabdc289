"""Running ``brain-graph serve`` (the HTTP surfaces without the LangGraph server) for tests: this
checkout's code, offline, on a free loopback port, in its own process group; ready once every worker
has finished its start-up."""

from __future__ import annotations

import contextlib
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from pathlib import Path

from tests.platform.devserver import DevServer, free_port, server_env, stop

STARTUP_TIMEOUT_S = 90.0
WORKER_STARTED = "Application startup complete."  # uvicorn logs it once per worker


def serve_command(port: int, workers: int) -> list[str]:
    """``brain-graph serve`` of the running interpreter on ``127.0.0.1:port`` with ``workers``."""
    cli = [sys.executable, "-m", "brain_graph.cli.main", "serve"]
    return [*cli, "--host", "127.0.0.1", "--port", str(port), "--workers", str(workers)]


@contextlib.contextmanager
def run_serve(
    workdir: Path, env: Mapping[str, str], *, workers: int = 1, timeout: float = STARTUP_TIMEOUT_S
) -> Iterator[DevServer]:
    """Start ``brain-graph serve --workers <workers>`` in ``workdir``, wait until each worker has
    started, yield it, and always stop its whole process group."""
    port = free_port()
    log_path = workdir / f"serve-{port}.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            serve_command(port, workers),
            cwd=workdir,
            env=server_env(env),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            _wait_started(process, log_path, workers, timeout)
            yield DevServer(url=f"http://127.0.0.1:{port}", log_path=log_path, process=process)
        finally:
            stop(process)


def _wait_started(process: subprocess.Popen[bytes], log_path: Path, workers: int, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        text = log_path.read_text(encoding="utf-8", errors="replace")
        if process.poll() is not None:
            raise RuntimeError(f"brain-graph serve exited with {process.returncode}:\n{text[-4000:]}")
        if text.count(WORKER_STARTED) >= workers:
            return
        time.sleep(0.2)
    raise TimeoutError(f"brain-graph serve: {workers} worker(s) not started after {timeout:.0f}s")
