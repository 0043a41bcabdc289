"""The official MCP client over streamable HTTP, for tests: in process (an ASGI app through httpx2's
ASGI transport) or against a running server's URL."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx2
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

ASGI_BASE = "http://brain-graph.test"


def bearer_headers(token: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"} if token is not None else {}


@asynccontextmanager
async def mcp_session(url: str, token: str | None, *, app: Any = None) -> AsyncIterator[ClientSession]:
    """An initialised client session with the MCP endpoint at ``url``, sending ``token``; through
    ``app`` in process when given (``url`` then starts with :data:`ASGI_BASE`)."""
    transport = httpx2.ASGITransport(app=app) if app is not None else None
    async with (
        httpx2.AsyncClient(transport=transport, headers=bearer_headers(token), timeout=60) as http,
        streamable_http_client(url, http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session
