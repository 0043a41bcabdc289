"""What a passage reads of a node's text fields: each field normalised as passages print it, cut to
:data:`HEAD_CHARS`, with the length and longest backtick run of the whole normalised field. Every text
field has a head (which ones a passage shows is the deployment's choice: the passage fields of its
node types, :mod:`brain_graph.embedding.node_types`).

An excerpt of at most :data:`HEAD_CHARS` characters needs no more (:func:`brain_graph.core.text.cut_excerpt`:
the cut marker counts the characters left out, a code fence is longer than any backtick run of the
code), so a search reads a bounded value however long a stored text is. Both stores keep the encoded
heads (:func:`stored_heads`) next to the text of a node whose text fields together are longer than
:data:`HEAD_CHARS`, and read them instead of the text when the deployment's excerpt limits allow
(:func:`heads_suffice`); a node without them (short texts, or no heads stored) has its heads made from
its text when it is read. The output is the same either way.

Stored heads are trusted, never checked against the text: every process that writes must store
heads, or a long text rewritten on Neo4j keeps its old heads (the upgrade rule and the measurements:
docs/internals/passage-heads.md).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass

from typing_extensions import TypedDict

from brain_graph.core.text import longest_backtick_run, normalize, normalize_code
from brain_graph.core.vocabulary import CODE_FILE, DOC, WORK_ITEM
from brain_graph.core.wire import SourceKind

HEAD_CHARS = 8_192
PASSAGE_FIELDS = ("summary", "description", "body")  # the fields the default node types show
# The stored encoding's version, with the head's length: heads of another are ignored (made from the
# text). Bump HEADS_VERSION whenever what a head holds changes (normalize, normalize_code, the fields,
# the kinds): tests/unit/test_passage_heads.py pins a digest of heads to remind it.
HEADS_VERSION = 2
HEADS_PREFIX = f"heads{HEADS_VERSION}-{HEAD_CHARS}:"
SOURCE_KINDS: dict[str, SourceKind] = {WORK_ITEM: "work", DOC: "doc", CODE_FILE: "code"}


def source_kind(node_type: str) -> SourceKind:
    """``work`` | ``doc`` | ``code`` | ``other`` for a node type."""
    return SOURCE_KINDS.get(node_type, "other")


@dataclass(frozen=True)
class FieldHead:
    """A text field as passages read it: ``text``, the start of the normalised field (all of it when
    ``chars`` is at most its length); ``chars``, the length of the whole normalised field; ``ticks``,
    its longest run of backticks."""

    text: str
    chars: int
    ticks: int


class FieldHeadRow(TypedDict):
    """A :class:`FieldHead` in the graph's state."""

    text: str
    chars: int
    ticks: int


def field_head(value: str, *, code: bool, head_chars: int | None = HEAD_CHARS) -> FieldHead:
    """The head of one field (``code``: indentation kept); ``head_chars`` None keeps it whole."""
    whole = normalize_code(value) if code else normalize(value)
    return FieldHead(whole if head_chars is None else whole[:head_chars], len(whole), longest_backtick_run(whole))


def field_heads(
    node_type: str, text: Mapping[str, str], *, head_chars: int | None = HEAD_CHARS
) -> dict[str, FieldHead]:
    """The heads of a node's text fields, in name order (a code file's body is code)."""
    code = source_kind(node_type) == "code"
    return {
        name: field_head(value, code=code and name == "body", head_chars=head_chars)
        for name, value in sorted(text.items())
        if isinstance(value, str)
    }


def stored_heads(node_type: str, text: Mapping[str, str]) -> str | None:
    """What the stores keep next to a node's text: its encoded heads when its text fields are longer
    than :data:`HEAD_CHARS` together (else None: the text is as short)."""
    if sum(len(value) for value in text.values() if isinstance(value, str)) <= HEAD_CHARS:
        return None
    heads = field_heads(node_type, text)
    encoded = {name: [head.text, head.chars, head.ticks] for name, head in sorted(heads.items())}
    return HEADS_PREFIX + json.dumps(encoded, ensure_ascii=False, separators=(",", ":"))


def decoded_heads(stored: str) -> dict[str, FieldHead] | None:
    """The heads :func:`stored_heads` encoded; None for another version's encoding."""
    if not stored.startswith(HEADS_PREFIX):
        return None
    encoded = json.loads(stored[len(HEADS_PREFIX) :])
    return {name: FieldHead(str(text), int(chars), int(ticks)) for name, (text, chars, ticks) in encoded.items()}


def read_heads(
    node_type: str, stored: str | None, text: str | Mapping[str, str] | None, *, whole: bool = False
) -> dict[str, FieldHead]:
    """The heads of a node as a store read them: the stored heads when usable (never with ``whole``),
    else made from its text (a JSON object, or already decoded), whole with ``whole``."""
    if stored is not None and not whole:
        heads = decoded_heads(stored)
        if heads is not None:
            return heads
    fields = json.loads(text) if isinstance(text, str) else (text or {})
    return field_heads(node_type, fields, head_chars=None if whole else HEAD_CHARS)


def heads_suffice(longest_excerpt_chars: int) -> bool:
    """Whether excerpts of at most this many characters can be cut from heads (else whole fields are read)."""
    return longest_excerpt_chars <= HEAD_CHARS


def head_row(head: FieldHead) -> FieldHeadRow:
    return {"text": head.text, "chars": head.chars, "ticks": head.ticks}


def head_of_row(row: FieldHeadRow) -> FieldHead:
    return FieldHead(row["text"], row["chars"], row["ticks"])
