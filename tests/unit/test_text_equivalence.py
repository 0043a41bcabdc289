"""The fast paths of :mod:`brain_graph.core.text` give exactly what the plain definitions give.

The reference functions below are the definitions the fast paths replaced (a frozen copy); every
neutralising function is compared with them on seeded random strings built from the characters that
matter (controls, line and paragraph separators, format and bidi characters, backticks, markdown
punctuation, URL starts, letters and digits of several scripts, spaces of several kinds).
"""

from __future__ import annotations

import random
import re

import pytest

from brain_graph.core import text

_SPACES = re.compile(r"[ \t]+")
_BLANK_LINES = re.compile(r"\n{3,}")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_CONTROL_IN_LINE = re.compile(r"[\x00-\x08\x0a-\x1f\x7f-\x9f]")
_BIDI = re.compile("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_BACKTICKS = re.compile(r"`+")
_ALWAYS_ESCAPED = frozenset("\\`*[]<>#|~&")


def reference_lines(value: str) -> list[str]:
    return [_CONTROL_IN_LINE.sub(" ", line) for line in _BIDI.sub("", value).splitlines()]


def reference_normalize(value: str) -> str:
    lines = [_SPACES.sub(" ", line).strip() for line in reference_lines(value)]
    return _BLANK_LINES.sub("\n\n", "\n".join(lines)).strip()


def reference_one_line(value: str | None) -> str:
    return " ".join(_CONTROL.sub(" ", text._FORMAT.sub("", value or "")).split())


def reference_longest_backtick_run(value: str) -> int:
    return max((len(run) for run in _BACKTICKS.findall(value)), default=0)


def reference_escape_inline(value: str) -> str:
    out = []
    for index, char in enumerate(value):
        intraword = 0 < index < len(value) - 1 and value[index - 1].isalnum() and value[index + 1].isalnum()
        escaped = (
            char in _ALWAYS_ESCAPED
            or (char == "_" and not intraword)
            or (char in ":." and text._starts_link(value, index))
        )
        out.append("\\" + char if escaped else char)
    return "".join(out)


PIECES = [
    *"abcXYZ019 _-.:/\\`*[]<>#|~&\t\n\r",
    "\r\n",
    "\n\n\n",
    "  ",
    "www.",
    "WWW.",
    "https://",
    "``",
    "```",
    "é",
    "ß",
    "漢",
    "٣",
    "²",
    "\x00",
    "\x0b",
    "\x0c",
    "\x1c",
    "\x1e",
    "\x1f",
    "\x7f",
    "\x85",
    "\x9f",
    "\xa0",
    "\xad",
    "\u061c",
    "\u200b",
    "\u200e",
    "\u202e",
    "\u2028",
    "\u2029",
    "\u2066",
    "\u3000",
    "\ufeff",
    "\U000e0041",
]


def random_texts(count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    texts = ["", " ", "\n", "a\n", "a\n\n", "\n\na", "plain words only", "token_refresh.py", "see www.example.com"]
    for _ in range(count):
        texts.append("".join(rng.choice(PIECES) for _ in range(rng.randint(0, 40))))
        # mostly plain text with a rare special character: the fast paths' common case
        words = [rng.choice(["alpha", "beta", "x_y", "v1.2", "a:b"]) for _ in range(rng.randint(1, 12))]
        if rng.random() < 0.5:
            words.insert(rng.randrange(len(words) + 1), rng.choice(PIECES))
        texts.append(rng.choice([" ", "\n", "  ", "\t"]).join(words))
    return texts


TEXTS = random_texts(4000, seed=13)


@pytest.mark.parametrize(
    ("fast", "reference"),
    [
        (text._lines, reference_lines),
        (text.normalize, reference_normalize),
        (text.one_line, reference_one_line),
        (text.longest_backtick_run, reference_longest_backtick_run),
        (text.escape_inline, reference_escape_inline),
    ],
    ids=["lines", "normalize", "one_line", "longest_backtick_run", "escape_inline"],
)
def test_fast_path_equals_the_definition(fast: object, reference: object) -> None:
    assert callable(fast)
    assert callable(reference)
    mismatches = [value for value in TEXTS if fast(value) != reference(value)]
    assert not mismatches, f"{len(mismatches)} differ, first {mismatches[0]!r}"


def test_the_fast_paths_are_taken_and_left() -> None:
    """The random texts exercise both branches of every fast path (else the comparison proves little)."""
    assert any(text._printable_lines(value) for value in TEXTS)
    assert any(not text._printable_lines(value) for value in TEXTS)
    assert any("`" in value for value in TEXTS)
    assert any(value.isprintable() for value in TEXTS)
    assert any(not value.isprintable() for value in TEXTS)
