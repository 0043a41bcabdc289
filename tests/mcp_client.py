"""The official MCP client over streamable HTTP, for tests: in process (an ASGI app through httpx2's
ASGI transport, its lifespan running) or against a running server's URL."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from typing import TypeVar

import httpx2
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CallToolResult, TextContent

from brain_graph.serving.mcp import MCP_PATH, BrainMCP

ASGI_BASE = "http://brain-graph.test"
T = TypeVar("T")


def bearer_headers(token: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"} if token is not None else {}


@asynccontextmanager
async def mcp_session(target: str | BrainMCP, token: str | None) -> AsyncIterator[ClientSession]:
    """An initialised client session sending ``token``, with the server at base URL ``target`` or with
    the in-process endpoint ``target`` (its lifespan run for the session)."""
    async with AsyncExitStack() as stack:
        if isinstance(target, BrainMCP):
            await stack.enter_async_context(target.lifespan())
            transport, base = httpx2.ASGITransport(app=target), ASGI_BASE
        else:
            transport, base = None, target
        http = await stack.enter_async_context(
            httpx2.AsyncClient(transport=transport, headers=bearer_headers(token), timeout=60)
        )
        read, write = await stack.enter_async_context(streamable_http_client(base + MCP_PATH, http_client=http))
        session = await stack.enter_async_context(ClientSession(read, write))
        await session.initialize()
        yield session


def with_session(target: str | BrainMCP, token: str | None, use: Callable[[ClientSession], Awaitable[T]]) -> T:
    """``use`` run on one session (:func:`mcp_session`)."""

    async def main() -> T:
        async with mcp_session(target, token) as session:
            return await use(session)

    return asyncio.run(main())


def call(target: str | BrainMCP, token: str | None, tool: str, arguments: dict[str, object]) -> CallToolResult:
    """One tool call on a new session."""
    return with_session(target, token, lambda session: session.call_tool(tool, arguments))


def texts(result: CallToolResult) -> list[str]:
    """The text blocks of a result (every block of brain-graph's tools is text)."""
    assert all(isinstance(block, TextContent) for block in result.content)
    return [block.text for block in result.content if isinstance(block, TextContent)]


def tool_error(result: CallToolResult) -> str:
    """The one line of a failed call."""
    assert result.is_error, texts(result)
    [line] = texts(result)
    assert "\n" not in line
    assert "Traceback" not in line
    return line
