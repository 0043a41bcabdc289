"""The ``/brain/mcp`` endpoint: brain-graph's MCP tools over streamable HTTP, behind the server's gate.

Every HTTP request passes :class:`~brain_graph.auth.gate.Gate` first: no or a bad bearer token is 401
with ``WWW-Authenticate: Bearer``, a principal over its rate limit 429 with ``Retry-After`` (each HTTP
request counts, as on ``/graphql``), and every answer carries the rate-limit headers. The MCP transport
is stateless with JSON responses: no session lives on a server process, so any replica can answer any
request. The session manager needs a running task group: serve :meth:`BrainMCP.lifespan` as (part of)
the Starlette app's lifespan.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from functools import cache
from typing import Any

from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.types import Receive, Scope, Send

from brain_graph.auth.gate import Gate, default_gate
from brain_graph.core.errors import INTERNAL_MESSAGE
from brain_graph.graphs.search import build_graph
from brain_graph.pipeline.config import default_services
from brain_graph.serving.admission import GateRefusal, admit_in_thread, sending_headers
from brain_graph.serving.mcp.caller import ADMISSION_KEY
from brain_graph.serving.mcp.tools import GraphProvider, ServicesProvider, build_mcp_server

logger = logging.getLogger("brain_graph.mcp")
MCP_PATH = "/brain/mcp"

GateProvider = Callable[[], Gate]  # called per request: a misconfiguration is a 500, not an import failure


@cache
def _default_graph() -> Any:
    """The ``brain_search`` graph over the services of the environment, compiled once per process."""
    return build_graph()


def _refusal(code: str, message: str, status: int, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"error": {"code": code, "message": message}}, status, headers=headers)


class BrainMCP:
    """ASGI app serving the MCP tools of :func:`~brain_graph.serving.mcp.tools.build_mcp_server` over
    ``graph`` and ``services``, admitting requests through ``gate()``."""

    def __init__(self, graph: GraphProvider, services: ServicesProvider, gate: GateProvider = default_gate) -> None:
        self.server = build_mcp_server(graph, services)
        self._gate = gate
        self._sessions: StreamableHTTPSessionManager | None = None

    @asynccontextmanager
    async def lifespan(self, app: Any = None) -> AsyncIterator[None]:
        """Runs a new MCP session manager (one cannot be restarted) while the app serves."""
        # Building the SDK's Starlette app is how the server gets a new session manager (the app itself
        # is not served: requests come in through __call__). No DNS-rebinding (Host/Origin) check:
        # every request needs a bearer token a browser page cannot attach, and a deployment's host
        # names are not known here.
        self.server.streamable_http_app(
            stateless_http=True,
            json_response=True,
            transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        )
        sessions = self.server.session_manager
        async with sessions.run():
            self._sessions = sessions
            try:
                yield
            finally:
                self._sessions = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        request = Request(scope, receive)
        admission = await admit_in_thread(self._gate, request.headers.get("authorization"), logger)
        if isinstance(admission, GateRefusal):
            refusal = _refusal(admission.code, admission.message, admission.status, dict(admission.headers))
            await refusal(scope, receive, send)
            return
        scope[ADMISSION_KEY] = admission
        send_with_headers = sending_headers(send, admission.headers())

        if self._sessions is None:
            logger.error("MCP request before the app's lifespan started (serve BrainMCP.lifespan)")
            await _refusal("INTERNAL_SERVER_ERROR", INTERNAL_MESSAGE, 500)(scope, receive, send_with_headers)
            return
        await self._sessions.handle_request(scope, receive, send_with_headers)


def create_mcp_app(
    graph: GraphProvider = _default_graph,
    services: ServicesProvider = default_services,
    gate: GateProvider = default_gate,
) -> BrainMCP:
    """An MCP endpoint over ``graph`` (a provider of the compiled brain_search graph; default: one over
    the environment's services, compiled once per process), ``services`` (default: the environment's) and ``gate``
    (default: the process's, from the environment)."""
    return BrainMCP(graph, services, gate)
