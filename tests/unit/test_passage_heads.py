"""Passages cut from a field's head are the passages cut from the whole field: for every excerpt limit
up to ``HEAD_CHARS``, prose and code, on seeded random texts around the head's length (long runs of
white space, which normalisation folds, backtick runs, line breaks of several kinds)."""

from __future__ import annotations

import hashlib
import random

import pytest

from brain_graph.core.passage_heads import (
    HEAD_CHARS,
    HEADS_PREFIX,
    HEADS_VERSION,
    decoded_heads,
    field_head,
    field_heads,
    read_heads,
    stored_heads,
)
from brain_graph.core.text import cut_excerpt, excerpt, fence_overhead, normalize_code
from brain_graph.core.vocabulary import CODE_FILE, DOC, WORK_ITEM
from brain_graph.nodes.assemble_passages import field_part, fit_passage
from brain_graph.pipeline.services import SearchLimits
from brain_graph.stores.base import NodeRecord

PIECES = ["word", "refresh", " ", "  ", "\t", "\n", "\n\n\n", " \n ", "`", "```", "\r\n", "\u2028", "é", "\x0b"]


def long_text(rng: random.Random, chars: int) -> str:
    text = "".join(rng.choice(PIECES) for _ in range(chars // 3))
    if rng.random() < 0.3:
        text = " " * rng.randint(0, 2 * HEAD_CHARS) + text  # folded away: the head starts after it
    return text


TEXTS = [long_text(random.Random(seed), chars) for seed, chars in enumerate([10, 900, HEAD_CHARS, 3 * HEAD_CHARS] * 6)]
PINNED_DIGEST = "fd2da38fff0e3ca4"  # see test_what_a_head_holds_is_pinned_to_its_version
LIMITS = [0, 1, 39, 40, 41, 100, 1_500, HEAD_CHARS - 1, HEAD_CHARS]


@pytest.mark.parametrize("code", [False, True], ids=["prose", "code"])
def test_an_excerpt_of_the_head_is_the_excerpt_of_the_whole_field(code: bool) -> None:
    for text in TEXTS:
        head = field_head(text, code=code)
        assert len(head.text) <= HEAD_CHARS
        for limit in LIMITS:
            assert cut_excerpt(head.text, head.chars, limit) == excerpt(text, limit, code=code), (len(text), limit)
        if code:  # the room a code block leaves for its fence: the fence of the whole code
            assert field_part(head, 100, language="py").fence_chars == fence_overhead(normalize_code(text))


def test_a_passage_from_stored_heads_is_the_passage_from_the_text() -> None:
    limits = SearchLimits()
    small = SearchLimits(doc_excerpt_chars=60, summary_excerpt_chars=45, code_excerpt_chars=80, max_passage_chars=200)
    rng = random.Random(7)
    for node_type in (DOC, WORK_ITEM, CODE_FILE, "signal.instance"):
        for _ in range(8):
            fields = {"summary": long_text(rng, 3 * HEAD_CHARS), "description": long_text(rng, 900)}
            fields["body"] = long_text(rng, rng.choice([100, 3 * HEAD_CHARS]))
            node = NodeRecord("t", "n", node_type, None, "a title", None, text=fields, properties={"language": "py"})
            stored = stored_heads(node_type, fields)
            assert stored is not None
            heads = read_heads(node_type, stored, None)
            for budget in (30_000, 500, 120):
                for chosen in (limits, small):
                    assert fit_passage(node, chosen, budget, heads) == fit_passage(node, chosen, budget)


def test_short_texts_store_no_heads_and_are_read_from_the_text() -> None:
    assert stored_heads(DOC, {"body": "x" * (HEAD_CHARS - 10), "other": "y" * 10}) is None
    # a long field that passages do not show still makes the text long to read: heads are stored
    transcript = {"summary": "s", "transcript": "y" * (HEAD_CHARS + 1)}
    assert decoded_heads(stored_heads(WORK_ITEM, transcript) or "") == field_heads(WORK_ITEM, transcript)
    assert read_heads(DOC, None, '{"body": "a  b"}') == {"body": field_head("a  b", code=False)}


def test_heads_of_another_encoding_are_not_read() -> None:
    fields = {"body": "long " * HEAD_CHARS}
    stored = stored_heads(DOC, fields)
    assert stored is not None
    assert stored.startswith(HEADS_PREFIX)
    assert decoded_heads(stored) == field_heads(DOC, fields)
    other = "heads0:" + stored[len(HEADS_PREFIX) :]
    assert decoded_heads(other) is None
    assert read_heads(DOC, other, {"body": "short"}) == field_heads(DOC, {"body": "short"})


def test_whole_reads_ignore_the_heads() -> None:
    fields = {"body": "long " * HEAD_CHARS}
    whole = read_heads(DOC, stored_heads(DOC, fields), fields, whole=True)
    assert whole["body"].text == field_head(fields["body"], code=False, head_chars=None).text
    assert len(whole["body"].text) == whole["body"].chars > HEAD_CHARS


def test_what_a_head_holds_is_pinned_to_its_version() -> None:
    """Stored heads are trusted by their version: a change to what a head holds (normalisation, the
    fields, the kinds, the cut) changes this digest, and must bump HEADS_VERSION with it."""
    rng = random.Random(11)
    fields = {name: long_text(rng, 2 * HEAD_CHARS) for name in ("summary", "description", "body", "other")}
    stored = [stored_heads(node_type, fields) for node_type in (DOC, WORK_ITEM, CODE_FILE, "signal.instance")]
    digest = hashlib.sha256("\n".join(value or "" for value in stored).encode()).hexdigest()
    assert (HEADS_VERSION, digest[:16]) == (2, PINNED_DIGEST)
