"""Progress of long writes (loading, indexing) on stderr: a bar on a terminal, otherwise one line every
:data:`LINE_INTERVAL_S` seconds (count, rate, ETA) so logs of CI jobs and containers show it too;
nothing when quiet."""

from __future__ import annotations

import time
from collections.abc import Callable
from types import TracebackType
from typing import IO

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeRemainingColumn

LINE_INTERVAL_S = 5.0


def _duration(seconds: float) -> str:
    seconds = max(0, round(seconds))
    if seconds < 60:
        return f"{seconds} s"
    minutes, seconds = divmod(seconds, 60)
    return f"{minutes} min {seconds:02d} s"


class ProgressLines:
    """Periodic one-line progress for output that is not a terminal."""

    def __init__(
        self,
        label: str,
        total: int,
        stream: IO[str],
        *,
        interval: float = LINE_INTERVAL_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.label, self.total, self.stream, self.interval, self.clock = label, total, stream, interval, clock
        self.done = 0
        self.started = self.last = clock()

    def line(self) -> str:
        """``label: done/total (percent), rate/s, ETA``."""
        elapsed = max(self.clock() - self.started, 1e-9)
        rate = self.done / elapsed
        percent = 100.0 * self.done / self.total if self.total else 100.0
        eta = (self.total - self.done) / rate if rate > 0 else 0.0
        return (
            f"{self.label}: {self.done:,}/{self.total:,} ({percent:.0f}%), {rate:,.0f}/s, "
            f"ETA {_duration(eta)}, elapsed {_duration(elapsed)}"
        )

    def advance(self, count: int) -> None:
        self.done += count
        now = self.clock()
        if now - self.last >= self.interval:
            self.last = now
            self.stream.write(self.line() + "\n")
            self.stream.flush()


class ProgressReporter:
    """A context manager giving ``advance(count)`` for a job of ``total`` steps (see the module docstring)."""

    def __init__(self, label: str, total: int, console: Console, *, quiet: bool = False) -> None:
        self.label, self.total, self.console, self.quiet = label, total, console, quiet
        self._bar: Progress | None = None
        self._lines: ProgressLines | None = None
        self._task: TaskID | None = None

    def __enter__(self) -> ProgressReporter:
        if self.quiet or self.total <= 0:
            return self
        if self.console.is_terminal:
            self._bar = Progress(
                TextColumn(self.label),
                BarColumn(),
                MofNCompleteColumn(),
                TimeRemainingColumn(),
                console=self.console,
                transient=True,
            )
            self._bar.__enter__()
            self._task = self._bar.add_task(self.label, total=self.total)
        else:
            self._lines = ProgressLines(self.label, self.total, self.console.file)
        return self

    def advance(self, count: int) -> None:
        if self._bar is not None and self._task is not None:
            self._bar.advance(self._task, count)
        elif self._lines is not None:
            self._lines.advance(count)

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        if self._bar is not None:
            self._bar.__exit__(kind, error, trace)
