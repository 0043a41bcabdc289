"""``--help`` of every command reads well at 80 columns: nothing wider, the command list truncates no
summary, and each description paragraph is filled (no line broken before it had to be)."""

from __future__ import annotations

import inspect
import itertools
import os
import subprocess
import sys
from functools import cache

import pytest
from typer.main import get_command

from brain_graph.cli.main import app

WIDTH = 80
WRAP = WIDTH - 2  # click's formatter wraps text two columns short of its width
COMMANDS = sorted(get_command(app).commands)  # type: ignore[attr-defined]


@cache
def _help(*command: str) -> str:
    """The help the installed command prints in an 80-column terminal (a real process: typer's test
    runner renders help differently)."""
    env = {**os.environ, "COLUMNS": str(WIDTH)}
    args = [sys.executable, "-m", "brain_graph.cli.main", *command, "--help"]
    completed = subprocess.run(args, capture_output=True, text=True, check=True, env=env)
    return completed.stdout


def _description(text: str) -> list[list[str]]:
    """The paragraphs (lists of lines) between the usage line and the first section heading."""
    body = text.split("\n\n", 1)[1]
    head = body.split("\nArguments:", 1)[0].split("\nOptions:", 1)[0]
    return [paragraph.splitlines() for paragraph in head.strip("\n").split("\n\n")]


@pytest.mark.parametrize("command", [[], *([name] for name in COMMANDS)])
def test_no_help_line_is_wider_than_80_columns(command: list[str]) -> None:
    wide = [line for line in _help(*command).splitlines() if len(line) > WIDTH]
    assert wide == []


@pytest.mark.parametrize("command", COMMANDS)
def test_each_description_paragraph_is_filled(command: str) -> None:
    for paragraph in _description(_help(command)):
        for line, following in itertools.pairwise(paragraph):
            assert len(line) + 1 + len(following.split()[0]) > WRAP, f"{line!r} broken before {following!r}"
        assert not any(line.rstrip().endswith("-") for line in paragraph), paragraph  # no word split at a hyphen


def test_the_command_list_shows_every_summary_whole() -> None:
    listing = _help().split("Commands:", 1)[1]
    for name, command in get_command(app).commands.items():  # type: ignore[attr-defined]
        summary = inspect.cleandoc(command.help or "").split("\n\n", 1)[0]
        assert f"  {name}  " in listing
        assert summary in listing


def test_flags_show_no_value_placeholder() -> None:
    """``--version`` and the other flags take no value, and their help says so (no ``<bool>``)."""
    assert "<bool>" not in _help()
    assert all("<bool>" not in _help(name) for name in COMMANDS)
