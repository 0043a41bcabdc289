"""Metrics of whole searches: a run's event stream, counted and timed as it is consumed."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

from brain_graph.core.errors import BrainGraphError
from brain_graph.observability.metrics import SEARCH_ERRORS, SEARCH_SECONDS, SEARCHES

INTERNAL_CODE = "INTERNAL_SERVER_ERROR"


def error_code(error: BaseException) -> str:
    """The code a failed search is counted under."""
    return error.code if isinstance(error, BrainGraphError) else INTERNAL_CODE


def _observe(started: float, error: BaseException | None) -> None:
    SEARCH_SECONDS.observe(time.perf_counter() - started)
    SEARCHES.labels("ok" if error is None else "error").inc()
    if error is not None:
        SEARCH_ERRORS.labels(error_code(error)).inc()


def measured(events: Iterator[Any]) -> Iterator[Any]:
    """``events`` unchanged; the run is counted once it ends (ok, or its error), not when abandoned."""
    started = time.perf_counter()
    try:
        yield from events
    except Exception as error:
        _observe(started, error)
        raise
    _observe(started, None)


async def ameasured(events: AsyncIterator[Any]) -> AsyncIterator[Any]:
    """:func:`measured` of an async stream."""
    started = time.perf_counter()
    try:
        async for event in events:
            yield event
    except Exception as error:
        _observe(started, error)
        raise
    _observe(started, None)
