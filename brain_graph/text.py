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


def excerpt(text: str, limit: int) -> str:
    """At most ``limit`` characters of ``text``, cut at a line or word boundary, with a marker saying
    how much was cut: ``… [truncated: N more characters]``."""
    text = normalize(text)
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
