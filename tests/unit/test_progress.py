"""Progress lines of long writes when the output is not a terminal."""

from __future__ import annotations

import io

from rich.console import Console

from brain_graph.cli.progress import ProgressLines, ProgressReporter


def test_lines_give_count_rate_and_eta_at_most_every_interval() -> None:
    now = [0.0]
    out = io.StringIO()
    lines = ProgressLines("indexing", 1000, out, interval=5.0, clock=lambda: now[0])
    for _ in range(10):
        now[0] += 1.0
        lines.advance(50)
    assert out.getvalue().splitlines() == [
        "indexing: 250/1,000 (25%), 50/s, ETA 15 s, elapsed 5 s",
        "indexing: 500/1,000 (50%), 50/s, ETA 10 s, elapsed 10 s",
    ]


def test_a_reporter_writes_lines_off_a_terminal_and_nothing_when_quiet() -> None:
    out = io.StringIO()
    console = Console(file=out, force_terminal=False)
    with ProgressReporter("loading", 10, console) as progress:
        assert progress._lines is not None
        progress._lines.interval = 0.0
        progress.advance(5)
    assert out.getvalue().startswith("loading: 5/10 (50%)")
    quiet = io.StringIO()
    with ProgressReporter("loading", 10, Console(file=quiet), quiet=True) as progress:
        progress.advance(5)
    assert quiet.getvalue() == ""
