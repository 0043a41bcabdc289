"""The results of the MCP tools: deterministic text for the agent plus structured content.

``brain_search`` answers with the prompt pack's markdown (sources numbered ``[n]``, passages), then one
line of JSON with the citations and warnings; its structured content is :class:`BrainSearchToolOutput`.
The graph API tools answer with their result as compact JSON, and the same result as structured
content. Same result in, byte-identical text out: JSON keys keep the services' (deterministic) order.
"""

from __future__ import annotations

import json
from typing import Any

from mcp.types import CallToolResult, TextContent
from pydantic import Field

from brain_graph.core.contracts import BrainCitation, BrainSearchWarning, NodeId, WireModel


class SearchHitSummary(WireModel):
    """A node retrieval found, in rank order of retrieval (the pack's order is the citations')."""

    node_id: NodeId
    node_type: str
    title: str | None = None
    url: str | None = None
    score: float = Field(description="Retrieval score (similarity plus its lexical term).")


class BrainSearchToolOutput(WireModel):
    """The structured content of ``brain_search``: the pack and what it cites."""

    context_markdown: str = Field(description="The prompt pack: sources numbered [n], graph facts, passages.")
    citations: list[BrainCitation] = Field(description="The pack's sources, [1] first.")
    hits: list[SearchHitSummary] = Field(description="What retrieval found before graph expansion.")
    warnings: list[BrainSearchWarning] = Field(description="Conditions that narrowed the result.")


def compact_json(value: Any) -> str:
    """``value`` as one line of JSON, keys in their given order, non-ASCII text kept."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def search_output(result: dict[str, Any]) -> BrainSearchToolOutput:
    """The structured content of a search's result (the graph's output, camelCase)."""
    pack = result["promptPack"]
    return BrainSearchToolOutput(
        context_markdown=pack["contextMarkdown"],
        citations=[BrainCitation.model_validate(citation) for citation in pack["citations"]],
        hits=[SearchHitSummary.model_validate(hit, extra="ignore") for hit in result["hits"]],
        warnings=[BrainSearchWarning.model_validate(warning) for warning in result.get("warnings", [])],
    )


def search_result(result: dict[str, Any]) -> CallToolResult:
    """The ``brain_search`` tool result of a search's result: the markdown, then the citations and
    warnings as one JSON line; the whole :class:`BrainSearchToolOutput` as structured content."""
    output = search_output(result).to_wire()
    sources = compact_json({"citations": output["citations"], "warnings": output["warnings"]})
    return CallToolResult(
        content=[TextContent(text=output["contextMarkdown"]), TextContent(text=sources)],
        structured_content=output,
    )


def json_result(result: dict[str, Any]) -> CallToolResult:
    """A graph API result as one JSON text block and as structured content."""
    return CallToolResult(content=[TextContent(text=compact_json(result))], structured_content=result)
