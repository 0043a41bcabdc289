"""Deterministic text bounding for passages."""

from __future__ import annotations

import re

_SPACES = re.compile(r"[ \t]+")
_BLANK_LINES = re.compile(r"\n{3,}")


def normalize(text: str) -> str:
    """Trim lines, fold runs of spaces, keep at most one blank line between paragraphs."""
    lines = [_SPACES.sub(" ", line).strip() for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n")]
    return _BLANK_LINES.sub("\n\n", "\n".join(lines)).strip()


def one_line(text: str | None) -> str:
    """The text on a single line (for titles in markdown)."""
    return " ".join((text or "").split())


def normalize_code(text: str) -> str:
    """Code keeps its indentation: only line endings, trailing spaces and outer blank lines change."""
    lines = [line.rstrip() for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n")]
    return "\n".join(lines).strip("\n")


def excerpt(text: str, limit: int, *, code: bool = False) -> str:
    """At most ``limit`` characters of ``text``, cut at a line or word boundary, with a marker saying
    how much was cut: ``… [truncated: N more characters]``. ``code`` keeps indentation."""
    text = normalize_code(text) if code else normalize(text)
    if len(text) <= limit:
        return text
    marker_room = 40
    cut = max(0, limit - marker_room)
    window = text[:cut]
    boundary = max(window.rfind("\n"), window.rfind(" "))
    if boundary >= cut // 2:
        window = window[:boundary]
    window = window.rstrip()
    return f"{window} … [truncated: {len(text) - len(window)} more characters]"
