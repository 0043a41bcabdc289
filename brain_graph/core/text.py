"""Deterministic text bounding for passages, and the neutralisation of text written into markdown.

Neutralisation rule of the prompt pack (``brain_graph.nodes.build_pack``): text from data or from
the request can never open, close or forge a section of the pack.

- Block text (a passage) is :func:`fenced` with a backtick fence longer than any backtick run inside
  it (at least three), so nothing inside can end the fence or be read as a heading, list, link or
  HTML; line breaks inside are normalised to ``\\n``, other control characters become spaces, and
  bidi controls (embeddings, overrides, isolates, marks: they reorder how the text around them is
  displayed) are removed; other text is kept as it is.
- Inline text (titles, labels, query, kinds, node types, episode project keys, citation titles) is
  :func:`inline`: put on one line (every run of whitespace or control characters, ``\\r``, U+0085,
  U+2028 and U+2029 included, becomes one space; format characters, category Cf: bidi controls,
  zero-width characters, BOM, soft hyphen, are removed), cut to its limit with ``…``, and every
  character markdown could act on is backslash-escaped: ``\\ ` * [ ] < > # | ~ &``, and ``_`` unless it
  stands between two letters or digits (where CommonMark never reads it as emphasis, so
  ``token_refresh.py`` stays readable). Bare URLs do not become links in GFM renderers (GitHub, chat
  UIs), which link ``scheme://...`` and ``www....`` in plain text: the ``:`` of every ``://`` and the
  ``.`` of a ``www.`` that starts a word are escaped too (``https\\://``, ``www\\.``), which renders
  as the same text.
- Identifiers (node ids, the tenant id and project key of the scope line) are one-lined (format
  characters removed), cut, and printed as a :func:`code_span` delimited by a backtick run longer
  than any inside.
- URLs are printed only as ``<url>`` autolinks, and only when :func:`safe_url` accepts them (absolute
  ``http(s)`` URLs of printable ASCII without spaces, quotes, backslashes, backticks or angle
  brackets, within a length limit); any other URL is left out of the markdown.

Every function here is a pure function of its arguments.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache, wraps

_SPACES = re.compile(r"[ \t]+")
_BLANK_LINES = re.compile(r"\n{3,}")
_PRINTABLE_ASCII_LINES = bytes(range(0x20, 0x7F)) + b"\n\t"  # what makes an ASCII text _printable_lines
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")  # Unicode category Cc
_CONTROL_IN_LINE = re.compile(r"[\x00-\x08\x0a-\x1f\x7f-\x9f]")  # Cc except the tab
# Bidi controls: ALM, LRM, RLM, the embeddings and overrides LRE RLE PDF LRO RLO, the isolates LRI RLI FSI PDI.
_BIDI = re.compile("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
# Unicode category Cf, format characters: invisible, they make text print like other text or reorder it.
# Unicode 14.0 (Python 3.11's database) plus U+13439..U+1343F (Unicode 15.0); a regex, not a per-character
# unicodedata lookup, because every inline field passes here. tests/unit/test_pack_safety.py checks it
# against the running Python's unicodedata.
_FORMAT = re.compile(
    "[\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e\u200b-\u200f\u202a-\u202e"
    "\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\U000110bd\U000110cd\U00013430-\U0001343f"
    "\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f]"
)
_BACKTICKS = re.compile(r"`+")
# Absolute http(s) URL of printable ASCII without space " ' < > \ ` (the ranges skip exactly those).
_SAFE_URL = re.compile(r"https?://[!#-&(-;=?-\[\]-_a-~]+", re.IGNORECASE | re.ASCII)
# Characters escape_inline may escape: always \\ ` * [ ] < > # | ~ &, and _ : . depending on their neighbours.
_MAY_ESCAPE = re.compile(r"[\\`*\[\]<>#|~&_:.]")

ELLIPSIS = "…"
MEMO_SIZE = 4096  # inline fields remembered (:func:`inline`, :func:`code_span`): types, ids and titles recur
MEMO_MAX_CHARS = 512  # longer values are rendered every time (bounds what is remembered)
MARKER_ROOM = 40  # room kept for the cut marker of an excerpt (more if its count needs it)


def _lines(text: str) -> list[str]:
    """The lines of ``text`` split at every Unicode line boundary, other control characters (but
    tabs) replaced by spaces, bidi controls removed."""
    if _printable_lines(text):  # nothing to replace or remove, and ``\n`` the only line boundary
        lines = text.split("\n")
        if not lines[-1]:
            lines.pop()  # as str.splitlines: no empty line after a final line break
        return lines
    return [_CONTROL_IN_LINE.sub(" ", line) for line in _BIDI.sub("", text).splitlines()]


def _printable_lines(text: str) -> bool:
    """Whether every character of ``text`` is printable (no control, format or separator character
    but the space), a line break or a tab: then no line boundary but ``\n`` can be in it. ASCII text
    is checked as bytes, in one pass in C (cheaper than ``str.isprintable``; docs/internals/embedding.md)."""
    if text.isascii():
        return not text.encode("ascii").translate(None, _PRINTABLE_ASCII_LINES)
    return text.isprintable() or text.replace("\n", "").replace("\t", "").isprintable()


def clean_block(text: str) -> str:
    """``text`` with every line boundary (``\\r\\n``, ``\\r``, U+0085, U+2028, ...) as ``\\n``,
    other control characters but tabs as spaces and bidi controls removed; never longer than
    ``text``."""
    return "\n".join(_lines(text))


def normalize(text: str) -> str:
    """Trim lines, fold runs of spaces, keep at most one blank line between paragraphs."""
    lines = [(_SPACES.sub(" ", line) if "  " in line or "\t" in line else line).strip() for line in _lines(text)]
    joined = "\n".join(lines)
    return (_BLANK_LINES.sub("\n\n", joined) if "\n\n\n" in joined else joined).strip()


def one_line(text: str | None) -> str:
    """The text on a single line: every run of whitespace or control characters becomes one space,
    format characters (category Cf) are removed."""
    text = text or ""
    if text.isprintable():  # no control or format character to replace or remove
        return " ".join(text.split())
    return " ".join(_CONTROL.sub(" ", _FORMAT.sub("", text)).split())


def normalize_code(text: str) -> str:
    """Code keeps its indentation: only line endings, trailing spaces and outer blank lines change."""
    return "\n".join(line.rstrip() for line in _lines(text)).strip("\n")


def clip(text: str, limit: int) -> str:
    """At most ``limit`` characters of ``text``; a cut text ends with ``…``."""
    if len(text) <= limit:
        return text
    if limit <= 0:
        return ""
    return text[: limit - 1].rstrip() + ELLIPSIS


def _marker(count: int) -> str:
    return f" … [truncated: {count} more characters]"


def excerpt(text: str, limit: int, *, code: bool = False) -> str:
    """At most ``limit`` characters of ``text``, cut at a line or word boundary, with a marker saying
    how much was cut: ``… [truncated: N more characters]``. ``code`` keeps indentation. A limit too
    small for the marker gives a plain :func:`clip`."""
    normalized = normalize_code(text) if code else normalize(text)
    return cut_excerpt(normalized, len(normalized), limit)


def cut_excerpt(head: str, chars: int, limit: int) -> str:
    """:func:`excerpt` of a normalised text of ``chars`` characters that starts with ``head`` (at least
    its first ``limit`` characters, or all of it): what it shows depends on no character after those."""
    if chars <= limit:
        return head
    marker_room = max(MARKER_ROOM, len(_marker(chars)))
    if limit < marker_room:
        return head[: limit - 1].rstrip() + ELLIPSIS if limit > 0 else ""  # clip() of the whole text
    cut = limit - marker_room
    window = head[:cut]
    boundary = max(window.rfind("\n"), window.rfind(" "))
    if boundary >= cut // 2:
        window = window[:boundary]
    window = window.rstrip()
    return window + _marker(chars - len(window))


def longest_backtick_run(text: str) -> int:
    """Length of the longest run of backticks in ``text`` (0 if none)."""
    if "`" not in text:
        return 0
    return max(map(len, _BACKTICKS.findall(text)))


def fence_for(text: str) -> str:
    """A backtick fence longer than any backtick run in ``text``, at least three backticks."""
    return "`" * max(3, longest_backtick_run(text) + 1)


def fenced(text: str, info: str = "") -> str:
    """``text`` as a fenced block: no line of ``text`` can close the fence."""
    fence = fence_for(text)
    return f"{fence}{info}\n{text}\n{fence}"


def fence_overhead(text: str) -> int:
    """Characters :func:`fenced` adds around ``text`` (without an info string)."""
    return fence_overhead_of_run(longest_backtick_run(text))


def fence_overhead_of_run(run: int) -> int:
    """:func:`fence_overhead` of a text whose longest backtick run is ``run``."""
    return 2 * max(3, run + 1) + 2


def _starts_link(text: str, index: int) -> bool:
    """Whether ``text[index]`` is the ``:`` of a ``://`` or the ``.`` of a ``www.`` starting a word:
    where GFM renderers start a link in plain text."""
    if text[index] == ":":
        return text.startswith("//", index + 1)
    if text[index] == "." and index >= 3 and text[index - 3 : index].lower() == "www":
        return index == 3 or not text[index - 4].isalnum()
    return False


def escape_inline(text: str) -> str:
    """Backslash-escape the characters markdown could act on in one-line text (see the module doc)."""

    def escape(match: re.Match[str]) -> str:
        char, index = match.group(), match.start()
        if char == "_":
            escaped = not (0 < index < len(text) - 1 and text[index - 1].isalnum() and text[index + 1].isalnum())
        elif char in ":.":
            escaped = _starts_link(text, index)
        else:
            escaped = True
        return "\\" + char if escaped else char

    return _MAY_ESCAPE.sub(escape, text)


def code_span_of(text: str) -> str:
    """``text`` as a code span delimited by a backtick run longer than any inside."""
    delimiter = "`" * (longest_backtick_run(text) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{delimiter}{pad}{text}{pad}{delimiter}"


def _fit(text: str, limit: int, render: Callable[[str], str]) -> str:
    """``render(text)`` if it has at most ``limit`` characters, else the render of the longest
    prefix of ``text`` plus ``…`` that does (rendered length grows with the prefix: binary search)."""
    if len(text) <= limit:
        whole = render(text)
        if len(whole) <= limit:
            return whole
    low, high = 0, min(len(text), limit) - 1  # a render is never shorter than what it shows
    while low < high:
        middle = (low + high + 1) // 2
        if len(render(text[:middle] + ELLIPSIS)) <= limit:
            low = middle
        else:
            high = middle - 1
    return render(text[:low].rstrip() + ELLIPSIS)


def _remembered(render: Callable[[str | None, int], str]) -> Callable[[str | None, int], str]:
    """``render`` with its results for values of at most :data:`MEMO_MAX_CHARS` characters kept in an
    LRU cache of :data:`MEMO_SIZE` entries (a pack renders the same titles, ids and types several times)."""
    cached = lru_cache(maxsize=MEMO_SIZE)(render)

    @wraps(render)
    def remembered(value: str | None, limit: int) -> str:
        return cached(value, limit) if value is None or len(value) <= MEMO_MAX_CHARS else render(value, limit)

    return remembered


@_remembered
def inline(value: str | None, limit: int) -> str:
    """``value`` one-lined and escaped for inline markdown, at most ``limit`` characters as printed
    (cut with ``…``); ``-`` when empty."""
    return _fit(one_line(value) or "-", limit, escape_inline)


@_remembered
def code_span(value: str | None, limit: int) -> str:
    """``value`` one-lined as a code span of at most ``limit`` characters (cut with ``…``); ``-``
    when empty."""
    return _fit(one_line(value) or "-", limit, code_span_of)


def safe_url(url: str | None, limit: int) -> str | None:
    """``url`` if it can be printed as a ``<url>`` autolink (see the module doc), else ``None``."""
    if url and len(url) <= limit and _SAFE_URL.fullmatch(url):
        return url
    return None
