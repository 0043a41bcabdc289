"""brain-graph's HTTP surfaces served without the LangGraph server: :data:`APP` (``/graphql``,
``/graph/...``, ``/brain/mcp``, ``/brain/health``, ``/brain/ready``, ``/brain/metrics``) under uvicorn,
in one process or in N worker processes on one port (``brain-graph serve --workers N``).

Workers share nothing in memory. What must hold across them lives outside: the rate-limit budget in
``BRAIN_GRAPH_RATE_LIMIT_STORAGE`` (``memory://`` is one budget per worker, so N workers admit up to N
times the limit: :func:`rate_limit_note` says so at start), the metrics in ``PROMETHEUS_MULTIPROC_DIR``
(:func:`metrics_directory` makes a fresh one for the run when several workers have none), and the
store (the embedded store's file, or the Neo4j and Weaviate servers).

:func:`serve` checks everything it can before a worker starts, so a bad setting ends the command in
one line instead of crash-looping workers: the flags (:func:`check_options`), the configuration the
server module refuses at import (it is imported here first), and the bearer-token settings.
"""

from __future__ import annotations

import contextlib
import ipaddress
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from brain_graph.core.errors import BackendUnavailableError, ConfigurationError, InvalidRequestError

APP = "brain_graph.serving.server:app"
MAX_WORKERS = 64
LOG_LEVELS = ("critical", "error", "warning", "info", "debug", "trace")
METRICS_VARIABLE = "PROMETHEUS_MULTIPROC_DIR"


@dataclass(frozen=True)
class ServeOptions:
    """Where and how :data:`APP` is served."""

    host: str = "127.0.0.1"
    port: int = 8000
    workers: int = 1
    log_level: str = "info"


def check_options(options: ServeOptions) -> None:
    """:class:`InvalidRequestError` naming the flag of the first bad option: ``--workers`` from 1 to
    :data:`MAX_WORKERS`, ``--port`` from 1 to 65535, ``--host`` an IP address or a host name,
    ``--log-level`` one of :data:`LOG_LEVELS`."""
    if not 1 <= options.workers <= MAX_WORKERS:
        raise InvalidRequestError("--workers", f"must be from 1 to {MAX_WORKERS} (got {options.workers})")
    if not 1 <= options.port <= 65535:
        raise InvalidRequestError("--port", f"must be from 1 to 65535 (got {options.port})")
    if not _is_host(options.host):
        raise InvalidRequestError("--host", f"must be an IP address or a host name (got {options.host[:80]!r})")
    if options.log_level not in LOG_LEVELS:
        raise InvalidRequestError("--log-level", f"must be one of {', '.join(LOG_LEVELS)} (got {options.log_level!r})")


def _is_host(host: str) -> bool:
    with contextlib.suppress(ValueError):
        ipaddress.ip_address(host)
        return True
    labels = host.rstrip(".").split(".")
    return 0 < len(host) <= 253 and all(
        0 < len(label) <= 63 and label.replace("-", "").isalnum() and label.isascii() and not label.startswith("-")
        for label in labels
    )


@contextlib.contextmanager
def metrics_directory(workers: int) -> Iterator[Path | None]:
    """The ``PROMETHEUS_MULTIPROC_DIR`` of the run, set in the environment the workers inherit: the
    one already set (it must be a directory: :class:`ConfigurationError` otherwise), else, for more
    than one worker, a new empty directory removed when the run ends; ``None`` for one worker and no
    setting (the metrics stay in the process)."""
    given = os.environ.get(METRICS_VARIABLE, "").strip()
    if given:
        path = Path(given)
        if not path.is_dir():
            raise ConfigurationError(f"{METRICS_VARIABLE}: {given[:200]!r} is not a directory (create it, empty)")
        yield path
        return
    if workers == 1:
        yield None
        return
    made = Path(tempfile.mkdtemp(prefix="brain-graph-metrics-"))
    os.environ[METRICS_VARIABLE] = str(made)
    try:
        yield made
    finally:
        os.environ.pop(METRICS_VARIABLE, None)
        shutil.rmtree(made, ignore_errors=True)


def rate_limit_note(workers: int) -> str | None:
    """A warning about the rate limit of ``workers`` processes, or ``None``: with ``memory://`` each
    worker counts its own budget; a shared storage that does not answer now refuses every gated
    request (503) until it does. :class:`ConfigurationError` for bad bearer-token or rate-limit
    settings."""
    from brain_graph.auth.gate import default_gate

    limiter = default_gate().limiter
    if limiter is None:
        return None
    if not limiter.shared:
        if workers == 1:
            return None
        return (
            f"BRAIN_GRAPH_RATE_LIMIT_STORAGE is memory://: each of the {workers} workers counts its own budget, "
            f"so a principal may get up to {workers} x {limiter.item.amount} requests per window; set it to a "
            "shared storage (redis://host:6379) for one budget"
        )
    try:
        limiter.check_storage()
    except BackendUnavailableError as error:
        return f"{error}; gated requests are refused with 503 until it answers"
    return None


def serve(options: ServeOptions, warn: Callable[[str], None]) -> None:
    """Serve :data:`APP` with ``options`` until the process is stopped (SIGINT or SIGTERM stops every
    worker); ``warn`` gets each warning line. :class:`InvalidRequestError` and
    :class:`ConfigurationError` before anything starts."""
    check_options(options)
    with metrics_directory(options.workers):
        import uvicorn

        import brain_graph.serving.server  # noqa: F401  - refuses a bad configuration here, in one line

        note = rate_limit_note(options.workers)
        if note is not None:
            warn(note)
        uvicorn.run(
            APP,
            host=options.host,
            port=options.port,
            workers=options.workers,
            log_level=options.log_level,
            timeout_graceful_shutdown=10,
        )
