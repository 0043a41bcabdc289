"""One BLAS thread for the stores' matrix products, set around each product instead of for the process.

A scan is a matrix-vector product: memory-bound, as fast on one BLAS thread as on several, while
OpenBLAS's extra threads spin after every call and take cores from concurrent searches and from
other worker processes. :func:`single_blas_thread` limits the BLAS libraries this process loaded to
one thread (threadpoolctl) while at least one caller is inside it and restores the previous limit
when the last one leaves, whichever threads they run on, so overlapping callers never restore a
limit under one another. Other code's BLAS calls made meanwhile run on one thread too.

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

_lock = threading.Lock()
_inside = 0
_limiter: Any = None
_controller = threadpoolctl.ThreadpoolController()  # the BLAS libraries loaded (numpy's, imported above)


def _release_control() -> None:
    """Let the next change of OpenBLAS's limit come from any thread (under ``_lock``)."""
    openblas = getattr(threadpoolctl, "OpenBLASController", None)
    clear = getattr(openblas, "clear_controlling_thread", None)
    if clear is not None:
        clear(force=True)


@contextmanager
def single_blas_thread() -> Iterator[None]:
    """BLAS limited to one thread inside the block (nested and concurrent blocks included)."""
    global _inside, _limiter
    with _lock:
        if _inside == 0:
            _release_control()
            _limiter = _controller.limit(limits=1, user_api="blas")
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
