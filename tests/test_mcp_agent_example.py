"""The example agent of examples/mcp_agent.py, offline: its scripted model and LangGraph loop call the
MCP tools in process (the official client over streamable HTTP) and answer from the pack's citations."""

from __future__ import annotations

import asyncio

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from brain_graph.auth import Gate, JwtVerifier, TokenIssuer
from brain_graph.graphs.search import BrainSearchGraph
from brain_graph.pipeline.services import SearchServices
from brain_graph.serving.mcp import create_mcp_app
from examples.mcp_agent import ScriptedModel, ask
from tests.mcp_client import mcp_session
from tests.platform.cases import SECURED_POSTMORTEM

SECRET = "mcp-example-test-secret-0123456789abcdef"
QUESTION = "token refresh postmortem"


def run(graph: BrainSearchGraph, services: SearchServices, token: str, tenant: str) -> list[BaseMessage]:
    gate = Gate(JwtVerifier(SECRET), None)
    app = create_mcp_app(lambda: graph, lambda: services, lambda: gate)

    async def main() -> list[BaseMessage]:
        async with mcp_session(app, token) as session:
            return await ask(session, ScriptedModel(tenant=tenant), tenant, QUESTION)

    return asyncio.run(main())


def test_the_agent_searches_then_answers_with_the_top_citation(
    example_graph: BrainSearchGraph, example_services: SearchServices
) -> None:
    token = TokenIssuer(SECRET).mint("alice", ["acme"], groups=["security"])
    _, _, call, result, answer = run(example_graph, example_services, token, "acme")
    assert isinstance(call, AIMessage)
    assert [c["name"] for c in call.tool_calls] == ["brain_search"]
    assert isinstance(result, ToolMessage)
    assert result.status == "success"
    assert result.text.startswith("# Brain search context")
    assert answer.text.startswith(
        f"The best source is [1] Postmortem: OAuth token refresh outage ({SECURED_POSTMORTEM})"
    )


def test_a_refused_search_reaches_the_model_as_a_tool_error(
    example_graph: BrainSearchGraph, example_services: SearchServices
) -> None:
    token = TokenIssuer(SECRET).mint("alice", ["acme"])
    *_, result, answer = run(example_graph, example_services, token, "globex")
    assert isinstance(result, ToolMessage)
    assert result.status == "error"
    assert answer.text.startswith("brain-graph refused the search: ")
    assert "FORBIDDEN: principal 'alice' may not read tenant 'globex'" in answer.text
