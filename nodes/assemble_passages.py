"""Step 5: bounded text passages from the hits, within a total character budget."""

from __future__ import annotations

from typing import Any

from brain_graph.contracts import BrainRagPassage, BrainSearchHit, SourceKind
from brain_graph.profiles import CODE_FILE, DOC, WORK_ITEM
from brain_graph.requests import access_scope, read_list, read_request
from brain_graph.services import SearchLimits
from brain_graph.state import BrainSearchState
from brain_graph.steps import StepDeps
from brain_graph.stores.base import NodeRecord
from brain_graph.text import excerpt, normalize, one_line

SOURCE_KINDS: dict[str, SourceKind] = {WORK_ITEM: "work", DOC: "doc", CODE_FILE: "code"}
MIN_PASSAGE_CHARS = 200


def source_kind(node_type: str) -> SourceKind:
    """``work`` | ``doc`` | ``code`` | ``other`` for a node type."""
    return SOURCE_KINDS.get(node_type, "other")


def passage_text(node: NodeRecord, limits: SearchLimits) -> str:
    """Work item: title, summary, description excerpt. Doc: title, body excerpt. Code: path, summary,
    fenced code excerpt (indentation kept). Anything else: title and summary."""
    text = node.text
    parts = [one_line(node.title)]
    kind = source_kind(node.node_type)
    if kind == "work":
        parts += [
            normalize(text.get("summary", "")),
            excerpt(text.get("description", ""), limits.description_excerpt_chars),
        ]
    elif kind == "doc":
        parts.append(excerpt(text.get("body", ""), limits.doc_excerpt_chars))
    elif kind == "code":
        parts.append(normalize(text.get("summary", "")))
        code = excerpt(text.get("body", ""), limits.code_excerpt_chars, code=True)
        if code:
            language = str(node.properties.get("language", ""))
            parts.append(f"```{language}\n{code}\n```")
    else:
        parts.append(normalize(text.get("summary", "")))
    return "\n\n".join(part for part in parts if part)


def assemble_passages(state: BrainSearchState, deps: StepDeps) -> dict[str, Any]:
    """Write ``passages``: one per hit in rank order, texts fetched in one call, the total bounded by
    the passage budget (30,000 characters by default): the last passage that does not fit is cut,
    and passages after it are left out."""
    services = deps.services
    request = read_request(state, services)
    scope = access_scope(request, deps.principal, services)
    limits = services.limits
    hits = read_list(state, "hits", BrainSearchHit)[: limits.max_passages]
    if not hits:
        return {"passages": []}
    texts = services.backend.passage_source.get_texts([hit.node_id for hit in hits], scope=scope)
    passages: list[BrainRagPassage] = []
    remaining = limits.passage_budget_chars
    for hit in hits:
        node = texts.get(hit.node_id)
        if node is None:
            continue
        text = passage_text(node, limits)
        if len(text) > remaining:
            if remaining < MIN_PASSAGE_CHARS:
                break
            text = excerpt(text, remaining)
        passages.append(
            BrainRagPassage(
                source_node_id=node.node_id, source_kind=source_kind(node.node_type), text=text, url=node.url
            )
        )
        remaining -= len(text)
    return {"passages": passages}
