"""BLAS threads for the stores' matrix products (one by default), set around each product instead of for
the process.

A scan is a matrix-vector product, mostly memory-bound: a second BLAS thread saves about a millisecond
per 30k rows of 512 dimensions, while OpenBLAS's extra threads spin after every call and take cores
from concurrent searches and from other worker processes. :func:`limited_blas_threads` limits the
BLAS libraries this process had loaded when it was imported (numpy's) to ``BRAIN_GRAPH_SCAN_THREADS``
threads (default 1; more lowers the latency of a lone search on an idle machine) with threadpoolctl
while at least one caller is inside it, and restores the previous limit when the last one leaves,
whichever threads they run on, so overlapping callers never restore a limit under one another.
Other code's BLAS calls made meanwhile run under the same limit.

OpenBLAS's limit (without OpenMP) is process-wide, and threadpoolctl lets only the thread that set
it first change it again; the limit is set and restored here under one lock, so each change is made
as the controlling thread (threadpoolctl's ``clear_controlling_thread``).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy  # noqa: F401  (its BLAS library, loaded before the controller looks for it)
import threadpoolctl
from pydantic import Field
from pydantic_settings import BaseSettings

from brain_graph.core.environment import ENV_CONFIG, read_settings

_lock = threading.Lock()
_inside = 0
_limiter: Any = None
_controller = threadpoolctl.ThreadpoolController()  # the BLAS libraries loaded (numpy's, imported above)
_threads: int | None = None


class ScanThreadSettings(BaseSettings):
    """``BRAIN_GRAPH_SCAN_THREADS``: BLAS threads of each scan (1 to 256, default 1)."""

    model_config = ENV_CONFIG

    scan_threads: int = Field(default=1, ge=1, le=256, validation_alias="BRAIN_GRAPH_SCAN_THREADS")


def scan_threads() -> int:
    """``BRAIN_GRAPH_SCAN_THREADS``, read when first needed."""
    global _threads
    if _threads is None:
        _threads = read_settings(ScanThreadSettings).scan_threads
    return _threads


def _release_control() -> None:
    """Let the next change of OpenBLAS's limit come from any thread (under ``_lock``)."""
    openblas = getattr(threadpoolctl, "OpenBLASController", None)
    clear = getattr(openblas, "clear_controlling_thread", None)
    if clear is not None:
        clear(force=True)


@contextmanager
def limited_blas_threads() -> Iterator[None]:
    """BLAS limited to :func:`scan_threads` threads inside the block (nested and concurrent blocks included)."""
    global _inside, _limiter
    with _lock:
        if _inside == 0:
            _release_control()
            _limiter = _controller.limit(limits=scan_threads(), user_api="blas")
            _release_control()
        _inside += 1
    try:
        yield
    finally:
        with _lock:
            _inside -= 1
            if _inside == 0 and _limiter is not None:
                _release_control()
                _limiter.restore_original_limits()
                _release_control()
                _limiter = None
