"""An agent that uses brain-graph through MCP: a LangGraph tool-calling loop (model -> tools -> model)
whose tools are the ``/brain/mcp`` tools of a brain-graph server, listed and called with the official
MCP client over streamable HTTP.

    # a server (see docs/mcp.md) and a token for tenant acme
    export BRAIN_GRAPH_TOKEN=$(brain-graph token --subject alice --tenant acme --group security)
    python examples/mcp_agent.py --url http://127.0.0.1:2024 --tenant acme "What caused the token refresh outage?"

By default the model is :class:`ScriptedModel`, which needs no LLM: it calls ``brain_search`` with the
question, then answers with the pack's top citation. ``--model openai`` uses ``ChatOpenAI``
(``OPENAI_API_KEY``), which picks the tools itself from their descriptions.
"""

from __future__ import annotations

import argparse
import asyncio
import os
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any

import httpx2
from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool, StructuredTool, ToolException
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.types import TextContent

MCP_PATH = "/brain/mcp"
SYSTEM = (
    "You answer questions about the {tenant} tenant's work, documents and code with the brain-graph tools "
    "(tenantId {tenant}). Start with brain_search and cite its sources as [n]."
)


def mcp_tools(session: ClientSession, tools: Sequence[Any]) -> list[BaseTool]:
    """LangChain tools calling the MCP ``tools`` (from ``list_tools``) on ``session``: their name,
    description and input schema as listed; the text as the tool message's content and the structured
    result as its artifact. A failed call is a tool error the model reads (its one line)."""

    def as_tool(name: str, description: str, schema: dict[str, Any]) -> BaseTool:
        async def run(**arguments: Any) -> tuple[str, Any]:
            result = await session.call_tool(name, arguments)
            text = "\n\n".join(block.text for block in result.content if isinstance(block, TextContent))
            if result.is_error:
                raise ToolException(text)
            return text, result.structured_content

        return StructuredTool.from_function(
            coroutine=run,
            name=name,
            description=description,
            args_schema=schema,
            response_format="content_and_artifact",
            handle_tool_error=True,
        )

    return [as_tool(tool.name, tool.description or "", tool.input_schema) for tool in tools]


def build_agent(model: BaseChatModel, tools: Sequence[BaseTool]) -> Any:
    """The agent graph: ``agent`` (the model with the tools bound) and ``tools`` (a ToolNode), looping
    while the model calls tools."""
    bound: Runnable[LanguageModelInput, BaseMessage] = model.bind_tools(tools)

    async def agent(state: MessagesState) -> dict[str, list[BaseMessage]]:
        return {"messages": [await bound.ainvoke(state["messages"])]}

    graph = StateGraph(MessagesState)
    graph.add_node("agent", agent)
    graph.add_node("tools", ToolNode(tools))
    graph.add_edge(START, "agent")
    graph.add_conditional_edges("agent", tools_condition)
    graph.add_edge("tools", "agent")
    return graph.compile()


class ScriptedModel(BaseChatModel):
    """A chat model without an LLM, for running the example offline: asked a question, it calls
    ``brain_search`` for it in ``tenant``; shown the result, it answers with the top citation."""

    tenant: str
    top_k: int = 3

    @property
    def _llm_type(self) -> str:
        return "brain-graph-scripted"

    def bind_tools(self, tools: Any, **kwargs: Any) -> Runnable[LanguageModelInput, BaseMessage]:
        return self

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        last = messages[-1]
        if isinstance(last, ToolMessage):
            message = AIMessage(content=self.answer(last))
        else:
            question = next(m.text for m in reversed(messages) if isinstance(m, HumanMessage))
            arguments = {"queryText": question, "tenantId": self.tenant, "topK": self.top_k}
            call = {"name": "brain_search", "args": arguments, "id": "call-1", "type": "tool_call"}
            message = AIMessage(content="", tool_calls=[call])
        return ChatResult(generations=[ChatGeneration(message=message)])

    @staticmethod
    def answer(result: ToolMessage) -> str:
        if result.status == "error":
            return f"brain-graph refused the search: {result.text}"
        citations = (result.artifact or {}).get("citations", [])
        if not citations:
            return "brain-graph found nothing on that."
        top = citations[0]
        return f"The best source is [1] {top['title']} ({top['sourceNodeId']}): {top['url']}"


async def ask(session: ClientSession, model: BaseChatModel, tenant: str, question: str) -> list[BaseMessage]:
    """The agent's messages for ``question``, with the tools of ``session``."""
    listed = await session.list_tools()
    agent = build_agent(model, mcp_tools(session, listed.tools))
    state = await agent.ainvoke({"messages": [SystemMessage(SYSTEM.format(tenant=tenant)), HumanMessage(question)]})
    messages: list[BaseMessage] = state["messages"]
    return messages


@asynccontextmanager
async def connect(url: str, token: str | None) -> AsyncIterator[ClientSession]:
    """A session with the MCP endpoint of the brain-graph server at ``url``, sending ``token``."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=120) as http,
        streamable_http_client(url.rstrip("/") + MCP_PATH, http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session


def chat_model(name: str, tenant: str) -> BaseChatModel:
    if name == "openai":
        from langchain_openai import ChatOpenAI  # imported only with --model openai

        return ChatOpenAI(model=os.environ.get("OPENAI_MODEL", "gpt-4o-mini"), temperature=0)
    return ScriptedModel(tenant=tenant)


async def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("question")
    parser.add_argument("--url", default="http://127.0.0.1:2024", help="the brain-graph (LangGraph) server")
    parser.add_argument("--tenant", default="acme")
    parser.add_argument("--model", choices=("scripted", "openai"), default="scripted")
    args = parser.parse_args(argv)
    async with connect(args.url, os.environ.get("BRAIN_GRAPH_TOKEN")) as session:
        messages = await ask(session, chat_model(args.model, args.tenant), args.tenant, args.question)
    for message in messages[1:]:
        calls = getattr(message, "tool_calls", None)
        shown = f"calls {[(c['name'], c['args']) for c in calls]}" if calls else message.text[:400]
        print(f"{message.type}: {shown}")


if __name__ == "__main__":
    asyncio.run(main())
