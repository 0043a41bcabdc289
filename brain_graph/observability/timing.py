"""The combined reads of a search, timed: each call of a :class:`~brain_graph.stores.base.SearchReads`
is observed in :data:`~brain_graph.observability.metrics.BACKEND_CALL_SECONDS` and answered as is."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, TypeVar, cast

from brain_graph.observability.metrics import BACKEND_CALL_SECONDS
from brain_graph.stores.base import SearchReads, StorageBackend

T = TypeVar("T")


def timed_call(backend: str, operation: str, call: Callable[[], T]) -> T:
    """``call()``, its time observed under ``backend`` and ``operation`` (outcome ok or error)."""
    started = time.perf_counter()
    outcome = "error"
    try:
        result = call()
        outcome = "ok"
        return result
    finally:
        BACKEND_CALL_SECONDS.labels(backend, operation, outcome).observe(time.perf_counter() - started)


class TimedSearchReads:
    """A :class:`~brain_graph.stores.base.SearchReads` whose calls are timed; answers are the wrapped
    reads' own."""

    def __init__(self, reads: Any, backend: str) -> None:
        self._reads = reads
        self._backend = backend

    def seeds(self, *args: Any, **kwargs: Any) -> Any:
        return timed_call(self._backend, "seeds", lambda: self._reads.seeds(*args, **kwargs))

    def hop(self, *args: Any, **kwargs: Any) -> Any:
        return timed_call(self._backend, "hop", lambda: self._reads.hop(*args, **kwargs))

    def similarity(self, *args: Any, **kwargs: Any) -> Any:
        return timed_call(self._backend, "similarity", lambda: self._reads.similarity(*args, **kwargs))

    def context(self, *args: Any, **kwargs: Any) -> Any:
        return timed_call(self._backend, "context", lambda: self._reads.context(*args, **kwargs))


def timed_reads(backend: StorageBackend) -> SearchReads:
    """``backend.search_reads``, timed under the backend's name."""
    return cast(SearchReads, TimedSearchReads(backend.search_reads, backend.name))
