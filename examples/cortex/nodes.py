"""The cortex's nodes: rule-based, deterministic, no LLM unless one is configured for ``generate``."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, Literal

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, SystemMessage
from langchain_core.runnables import RunnableConfig

from brain_graph import BrainSearchGraph, BrainSearchInput, PromptPack, SearchHit
from examples.cortex.state import CortexState, Intent

IDENTITY_ANSWER = (
    "I am the brain-graph cortex example: I answer questions from your knowledge graph with cited "
    "sources, and I never make up a source."
)
NO_QUESTION_ANSWER = "I did not get a question."
NO_RESULTS_ANSWER = 'I found nothing about "{query}" in this scope. Try other words, or a wider project filter.'
NEEDS_MODEL_ANSWER = "I need a chat model to {intent}; none is configured, so here is your text back:\n\n{query}"
SYSTEM_PROMPT = (
    "Answer the user's question using only the context below. Cite sources with their [n] numbers. "
    "If the context does not answer the question, say so.\n\n{context}"
)
MAX_LISTED_SOURCES = 5
EMPTY_RESULTS: dict[str, Any] = {
    "hits": [],
    "episodes": [],
    "graphNodes": [],
    "graphEdges": [],
    "passages": [],
    "promptPack": None,
    "citations": [],
}

_RULES: tuple[tuple[Intent, re.Pattern[str]], ...] = (
    (
        "identity",
        re.compile(
            r"\b(who are you|what are you|what can you do|tell me about yourself|are you (an? )?(ai|bot|human))\b"
        ),
    ),
    (
        "translate",
        re.compile(r"^\s*translate\b|\btranslate (this|that|it)\b|\bin(to)? (english|french|german|spanish)\b"),
    ),
    ("summarize", re.compile(r"^\s*(summari[sz]e|tl;?dr)\b|\bsummary of\b")),
    ("rewrite", re.compile(r"^\s*(rewrite|rephrase|proofread|reword)\b")),
)


def latest_human_text(messages: list[AnyMessage]) -> str:
    """The text of the latest :class:`HumanMessage`, or an empty string."""
    for message in reversed(messages):
        if isinstance(message, HumanMessage):
            return message.text.strip()
    return ""


def extract_query(state: CortexState) -> dict[str, Any]:
    """Read the latest human message into ``user_query`` (and brain-graph's ``queryText``); reset the
    per-turn keys so a new question never reuses the previous turn's results."""
    query = latest_human_text(state.get("messages") or [])
    return {
        "user_query": query,
        "queryText": query,
        "intent": "rag",
        "should_retrieve": bool(query),
        **EMPTY_RESULTS,
    }


def classify(query: str) -> Intent:
    """Rule-based intent: identity, translate, summarize or rewrite when a rule matches, else rag."""
    text = query.lower()
    for intent, pattern in _RULES:
        if pattern.search(text):
            return intent
    return "rag"


def detect_intent(state: CortexState) -> dict[str, Any]:
    """Write ``intent``; only ``rag`` questions retrieve."""
    intent = classify(state.get("user_query", ""))
    return {"intent": intent, "should_retrieve": bool(state.get("should_retrieve")) and intent == "rag"}


def should_retrieve(state: CortexState) -> Literal["retrieve", "generate"]:
    """Route to ``retrieve`` for a rag question without results yet, else straight to ``generate``."""
    if state.get("intent") == "rag" and state.get("should_retrieve") and not state.get("hits"):
        return "retrieve"
    return "generate"


def make_mapped_retrieve(brain: BrainSearchGraph) -> Callable[..., dict[str, Any]]:
    """Pattern "mapped": a node that calls brain_search with an input mapped from the cortex state and
    copies back only what the cortex uses. The node's config (and so the parent's runtime context,
    callbacks and stream) reaches the subgraph, which runs under this node's namespace."""

    def retrieve(state: CortexState, config: RunnableConfig) -> dict[str, Any]:
        request: BrainSearchInput = {
            "queryText": state.get("user_query", ""),
            "filter": state.get("filter") or {},  # type: ignore[typeddict-item]  # validated by embed
            "options": state.get("options") or {},  # type: ignore[typeddict-item]
        }
        result = brain.invoke(request, config)
        return {"hits": result["hits"], "passages": result["passages"], "promptPack": result["promptPack"]}

    return retrieve


def render_answer(query: str, hits: list[SearchHit], pack: PromptPack) -> str:
    """The deterministic answer: the best sources, each with its citation number from the pack."""
    numbers = {citation["sourceNodeId"]: index for index, citation in enumerate(pack["citations"], 1)}
    lines = [f'Here is what the knowledge graph holds about "{query}":', ""]
    for hit in hits[:MAX_LISTED_SOURCES]:
        link = f" <{hit['url']}>" if hit["url"] else ""
        number = f"[{numbers[hit['nodeId']]}] " if hit["nodeId"] in numbers else ""
        lines.append(f"- {number}{hit['title'] or hit['nodeId']} ({hit['nodeType']}){link}")
    if len(hits) > MAX_LISTED_SOURCES:
        lines.append(f"- and {len(hits) - MAX_LISTED_SOURCES} more.")
    return "\n".join(lines)


def make_generate(chat_model: BaseChatModel | None = None) -> Callable[..., dict[str, Any]]:
    """The final node: a deterministic template by default; with ``chat_model``, the model answers
    from the prompt pack (or, for translate/summarize/rewrite, from the user's text alone)."""

    def generate(state: CortexState) -> dict[str, Any]:
        query = state.get("user_query", "")
        intent = state.get("intent", "rag")
        pack = state.get("promptPack")
        hits = state.get("hits") or []
        citations = [dict(citation) for citation in pack["citations"]] if pack is not None else []
        if not query:
            answer = NO_QUESTION_ANSWER
        elif intent == "identity":
            answer = IDENTITY_ANSWER
        elif intent != "rag":
            if chat_model is None:
                answer = NEEDS_MODEL_ANSWER.format(intent=intent, query=query)
            else:
                answer = chat_model.invoke(list(state.get("messages") or [])).text
        elif pack is None or not hits:
            answer = NO_RESULTS_ANSWER.format(query=query)
        elif chat_model is None:
            answer = render_answer(query, hits, pack)
        else:
            prompt = [SystemMessage(SYSTEM_PROMPT.format(context=pack["contextMarkdown"])), HumanMessage(query)]
            answer = chat_model.invoke(prompt).text
        return {"answer": answer, "citations": citations, "messages": [AIMessage(answer)]}

    return generate
