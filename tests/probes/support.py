"""Shared helpers of the adversarial regression tests (public API only, so core refactors do not break
them): searching through the compiled graph, the ids a result exposes, the invisible characters every
name and identifier refuses, and a CommonMark parse of the pack."""

from __future__ import annotations

import copy
from typing import Any

from markdown_it import MarkdownIt

from brain_graph import BrainSearchContext, BrainSearchResult, SearchServices, build_graph
from tests.helpers import SMALL_GRAPH, edge, make_store, node, request
from tests.unit.hostile_graph import outside_fences

__all__ = [
    "BIDI",
    "BIDI_AND_INVISIBLE",
    "SMALL_GRAPH",
    "edge",
    "ids_in_result",
    "make_store",
    "node",
    "outside_fences",
    "parse_markdown",
    "request",
    "search",
    "small_graph",
]

# Bidi embeddings/overrides/isolates/marks: they reorder how the text around them is displayed.
BIDI = (
    "\u202a\u202b\u202c\u202d\u202e"  # LRE RLE PDF LRO RLO
    "\u2066\u2067\u2068\u2069"  # LRI RLI FSI PDI
    "\u200e\u200f\u061c"  # LRM RLM ALM
)
# ... plus zero-width characters, BOM, soft hyphen, word joiner (all Unicode category Cf).
BIDI_AND_INVISIBLE = BIDI + "\u200b\u200c\u200d\u2060\ufeff\u00ad"  # ZWSP ZWNJ ZWJ WJ BOM SHY


def small_graph() -> dict[str, Any]:
    """A deep copy of the helpers' small graph (tests mutate it)."""
    return copy.deepcopy(SMALL_GRAPH)


def search(
    services: SearchServices,
    raw: Any,
    principal: Any = None,
    *,
    config: dict[str, Any] | None = None,
) -> BrainSearchResult:
    """One search through the public graph API, result normalised to the wire contract."""
    context = BrainSearchContext(principal=principal)
    output = build_graph(services).invoke(raw, config, context=context)  # type: ignore[arg-type]
    return BrainSearchResult.model_validate(output)


def ids_in_result(result: BrainSearchResult) -> dict[str, set[str]]:
    """Every node id the result exposes, by where it appears."""
    return {
        "hits": {h.node_id for h in result.hits},
        "graphNodes": {n.node_id for n in result.graph_nodes},
        "graphEdges": {e.from_node_id for e in result.graph_edges} | {e.to_node_id for e in result.graph_edges},
        "episodes": {e.cluster_node_id for e in result.episodes},
        "episodeMembers": {m for e in result.episodes for m in e.member_node_ids},
        "passages": {p.source_node_id for p in result.passages},
        "citations": {c.source_node_id for c in result.prompt_pack.citations},
    }


def parse_markdown(markdown: str) -> list[Any]:
    """CommonMark (plus GFM tables and strikethrough) block tokens."""
    return MarkdownIt("commonmark").enable(["table", "strikethrough"]).parse(markdown)
