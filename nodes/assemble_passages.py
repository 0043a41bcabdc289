"""Step 5: bounded text passages from the best candidates, within a total character budget."""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping, Sequence
from typing import Any, Literal, NamedTuple, TypedDict

from brain_graph.core.passage_heads import (
    FieldHead,
    field_heads,
    head_of_row,
    source_kind,
)
from brain_graph.core.text import clip, cut_excerpt, fence_for, fence_overhead, fence_overhead_of_run, one_line
from brain_graph.core.wire import NodeMeta, RagPassage
from brain_graph.embedding.node_types import DEFAULT_NODE_TYPES, PassageField, passage_fields
from brain_graph.pipeline.binding import StepDeps
from brain_graph.pipeline.search_plan import passage_count
from brain_graph.pipeline.services import SearchLimits
from brain_graph.pipeline.state import BrainSearchState
from brain_graph.stores.base import NodeRecord

SEPARATOR = "\n\n"
MIN_PART_CHARS = 40  # a field that would be cut shorter than this is left out, with the fields after it
MAX_LANGUAGE_CHARS = 32
_NOT_LANGUAGE = re.compile(r"[^A-Za-z0-9_+#.-]")


class Part(NamedTuple):
    """One field of a passage: its text (a title raw; other fields normalised, from their
    :class:`~brain_graph.core.passage_heads.FieldHead`), its own limit, how it renders, and for code its
    language and the fence overhead of the whole code."""

    text: str
    limit: int
    form: Literal["title", "prose", "code"] = "prose"
    language: str = ""
    chars: int = 0
    fence_chars: int = 0


def field_part(head: FieldHead | None, limit: int, *, language: str | None = None) -> Part:
    """The part of a field (``language`` not None: code)."""
    if head is None:
        head = FieldHead("", 0, 0)
    if language is None:
        return Part(head.text, limit, chars=head.chars)
    return Part(head.text, limit, "code", language, head.chars, fence_overhead_of_run(head.ticks))


def code_language(value: Any) -> str:
    """The fence info string for a code language: letters, digits and ``_+#.-`` only, bounded."""
    return _NOT_LANGUAGE.sub("", one_line(str(value or "")))[:MAX_LANGUAGE_CHARS]


def excerpt_limit(field: PassageField, limits: SearchLimits, *, code: bool) -> int:
    """A passage field's excerpt bound: its own, else the deployment's for its name (``body``: a doc's
    or, as code, a code file's; ``description``; any other field: a summary's)."""
    if field.max_chars is not None:
        return field.max_chars
    if code:
        return limits.code_excerpt_chars
    if field.name == "body":
        return limits.doc_excerpt_chars
    if field.name == "description":
        return limits.description_excerpt_chars
    return limits.summary_excerpt_chars


def passage_parts(
    node: NodeRecord,
    limits: SearchLimits,
    heads: Mapping[str, FieldHead] | None = None,
    fields: Sequence[PassageField] | None = None,
) -> list[Part]:
    """The title (a code file's: its path), then the node type's passage ``fields`` in order (default:
    those of the shipped node types: work item summary and description, doc body, code file summary
    and code; any other type its summary), each with its excerpt limit (:func:`excerpt_limit`); a code
    file's body is code. ``heads``: the node's :class:`~brain_graph.core.passage_heads.FieldHead`
    (else made whole from ``node.text``)."""
    read = heads if heads is not None else field_heads(node.node_type, node.text, head_chars=None)
    shown = fields if fields is not None else passage_fields(DEFAULT_NODE_TYPES, node.node_type)
    parts = [Part(node.title or "", limits.max_title_chars, "title")]
    is_code = source_kind(node.node_type) == "code"
    for field in shown:
        code = is_code and field.name == "body"
        language = code_language(node.properties.get("language")) if code else None
        parts.append(field_part(read.get(field.name), excerpt_limit(field, limits, code=code), language=language))
    return parts


def code_block(part: Part, room: int) -> str:
    """A fenced excerpt of at most the part's limit of code (indentation kept), at most ``room``
    characters with its fence, which is longer than any backtick run of the code. Empty if no code
    fits."""
    code_room = min(part.limit, room - part.fence_chars - len(part.language))
    body = cut_excerpt(part.text, part.chars, code_room) if code_room > 0 else ""
    if not body:
        return ""
    fence = fence_for(body)
    return f"{fence}{part.language}\n{body}\n{fence}"


def render_part(part: Part, room: int) -> str:
    """A field as it appears in the passage: within its own limit, at most ``room`` characters."""
    if part.form == "code":
        return code_block(part, room)
    limit = min(part.limit, room)
    if part.form == "title":
        return clip(one_line(part.text), limit)
    return cut_excerpt(part.text, part.chars, limit)


def joined_parts(parts: Sequence[Part], max_chars: int) -> str:
    """The passage of ``parts``, at most ``max_chars`` characters: the fields in order, separated by
    a blank line, each within its own limit and the room left; a field that would be cut to fewer
    than ``MIN_PART_CHARS`` characters by the room left is left out, and so are the fields after it."""
    pieces: list[str] = []
    used = 0
    for part in parts:
        gap = len(SEPARATOR) if pieces else 0
        room = max_chars - used - gap
        if room < MIN_PART_CHARS and len(render_part(part, sys.maxsize)) > room:
            break
        piece = render_part(part, room)
        if piece:
            pieces.append(piece)
            used += gap + len(piece)
    return SEPARATOR.join(pieces)


def passage_text(
    node: NodeRecord, limits: SearchLimits, max_chars: int, fields: Sequence[PassageField] | None = None
) -> str:
    """The passage of a node, at most ``max_chars`` characters (see :func:`joined_parts`)."""
    return joined_parts(passage_parts(node, limits, fields=fields), max_chars)


def fit_passage(
    node: NodeRecord,
    limits: SearchLimits,
    remaining: int,
    heads: Mapping[str, FieldHead] | None = None,
    fields: Sequence[PassageField] | None = None,
) -> str | None:
    """The passage of a node if it fits in ``remaining`` characters of budget, counted with the
    fence the prompt pack adds; else the passage cut to fit, or ``None`` if that would leave less
    than ``min_passage_chars``. A cut passage has no longer backtick run, so no longer fence."""
    parts = passage_parts(node, limits, heads, fields)
    text = joined_parts(parts, limits.max_passage_chars)
    overhead = fence_overhead(text)
    if len(text) + overhead <= remaining:
        return text
    room = remaining - overhead
    if room < limits.min_passage_chars:
        return None
    return joined_parts(parts, room)


class PassagesUpdate(TypedDict):
    passages: list[RagPassage]


def passage_record(node_id: str, tenant_id: str, meta: NodeMeta, text: Mapping[str, str]) -> NodeRecord:
    """A node as passages read it: the metadata read earlier in the run plus its text fields."""
    return NodeRecord(
        tenant_id=tenant_id,
        node_id=node_id,
        node_type=meta["nodeType"],
        project_key=meta["projectKey"],
        title=meta["title"],
        url=meta["url"],
        text=text,
        properties=meta["properties"],
    )


def assemble_passages(state: BrainSearchState, deps: StepDeps) -> PassagesUpdate:
    """Write ``passages``: one per cited candidate (the first ``max_passages`` of the
    :func:`~brain_graph.pipeline.ranking.pack_size` best ``candidates``, hits and expanded nodes alike) in
    rank order, from the texts ``expand`` read for them (``passageTexts``) and ``nodeRecords``. Each passage is at
    most ``max_passage_chars`` (2,000 by default) and all of them, fences of the pack included, at
    most the passage budget (30,000 by default): the last passage that does not fit is cut, and
    passages after it are left out. A candidate with neither title nor text gets no passage. The fields
    of a passage are its node type's (:meth:`~brain_graph.embedding.profiles.ProfileRegistry.passage_fields`)."""
    limits = deps.services.limits
    registry = deps.services.profiles
    ranked = state["candidates"][: passage_count(state["request"], limits)]
    if not ranked:
        return {"passages": []}
    scope = deps.scope(state["request"])
    records = state["nodeRecords"]
    read = state["passageTexts"]  # read by ``expand`` for these candidates
    heads: Mapping[str, Mapping[str, FieldHead]] = {
        node_id: {name: head_of_row(row) for name, row in fields.items()} for node_id, fields in read["texts"].items()
    }
    passages: list[RagPassage] = []
    remaining = limits.passage_budget_chars
    for item in ranked:
        node_id = item["nodeId"]
        if node_id not in heads or node_id not in records:
            continue
        node = passage_record(node_id, scope.tenant_id, records[node_id], {})
        text = fit_passage(node, limits, remaining, heads[node_id], registry.passage_fields(node.node_type))
        if text is None:
            break
        if not text.strip():
            continue  # nothing to show (no title, no text): cited, without a passage
        passages.append(
            {"sourceNodeId": node_id, "sourceKind": source_kind(node.node_type), "text": text, "url": node.url}
        )
        remaining -= len(text) + fence_overhead(text)
    return {"passages": passages}
