"""The ``/graphql`` ASGI app: bearer token and rate limit first (401 / 429 with ``Retry-After`` and
``X-RateLimit-*`` headers, as GraphQL errors), then the body's bounds (:mod:`.transport`, 413 / 415 /
400), then ariadne parses and validates the document within :mod:`.limits` and runs ``brainSearch``
with the caller's principal in the graph's runtime context; a failed search answers with the HTTP
status of its error's code (:data:`~brain_graph.serving.graphql.errors.HTTP_STATUS`). Every response carries
the rate-limit headers.

Standalone: ``uvicorn brain_graph.serving.graphql.app:app`` (settings from the environment, like the server).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from functools import cache
from typing import Any

from ariadne.asgi import GraphQL
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.types import Receive, Scope, Send

from brain_graph.auth.gate import Admission, Gate, default_gate
from brain_graph.graphs.search import build_graph
from brain_graph.serving.admission import GateRefusal, admit_in_thread, sending_headers
from brain_graph.serving.graphql.errors import (
    BAD_USER_INPUT,
    ServerErrorLog,
    error_body,
    format_error,
)
from brain_graph.serving.graphql.limits import parse_query, validate_query
from brain_graph.serving.graphql.schema import CREDENTIALS_KEY, GRAPH_KEY, INSECURE_KEY, build_schema, configured_docs
from brain_graph.serving.graphql.transport import GraphQLHandler, Refusal, read_body, replay

logger = logging.getLogger("brain_graph.graphql")
ADMISSION_KEY = "brain_graph.admission"

GraphProvider = Callable[[], Any]
GateProvider = Callable[[], Gate]


@cache
def _default_graph() -> Any:
    """The ``brain_search`` graph over the services of the environment, compiled once per process."""
    return build_graph()


class GraphQLApp:
    """ASGI app serving ``brainSearch``. ``graph`` returns the compiled graph to invoke (default: the
    server's ``brain_search``); ``gate`` the credentials check (default: from the environment, built
    on the first request so a misconfiguration is an error response, not an import failure). The
    schema describes the profile kinds and node types of the environment's profiles file."""

    def __init__(self, graph: GraphProvider = _default_graph, gate: GateProvider = default_gate) -> None:
        self._graph = graph
        self._gate = gate
        self._ariadne = GraphQL(
            build_schema(configured_docs()),
            context_value=self._context,
            error_formatter=format_error,
            debug=False,
            logger=ServerErrorLog(logger),
            query_parser=parse_query,
            query_validator=validate_query,
            http_handler=GraphQLHandler(),
        )

    def _context(self, request: Any, data: Any) -> dict[str, Any]:
        admission: Admission | None = request.scope.get(ADMISSION_KEY)
        return {
            "request": request,
            GRAPH_KEY: self._graph(),
            CREDENTIALS_KEY: admission.credentials if admission is not None else None,
            INSECURE_KEY: self._gate().insecure,
        }

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket":  # no subscriptions, and no way around the token check
            await send({"type": "websocket.close", "code": 1008})
            return
        if scope["type"] != "http":  # lifespan
            await self._ariadne(scope, receive, send)
            return
        request = Request(scope, receive)
        if request.method != "POST":  # GET: the GraphiQL explorer page; queries need POST and a token
            await self._ariadne(scope, receive, send)
            return
        admission = await admit_in_thread(self._gate, request.headers.get("authorization"), logger)
        if isinstance(admission, GateRefusal):
            extensions: dict[str, Any] = {}
            if admission.retry_after is not None:
                extensions["retryAfter"] = admission.retry_after
            if admission.backend is not None:
                extensions["backend"] = admission.backend
            body = error_body(admission.code, admission.message, **extensions)
            await JSONResponse(body, admission.status, headers=dict(admission.headers))(scope, receive, send)
            return
        scope[ADMISSION_KEY] = admission
        send_with_headers = sending_headers(send, admission.headers())

        payload = await read_body(request)
        if isinstance(payload, Refusal):
            response = JSONResponse(error_body(BAD_USER_INPUT, payload.message), payload.status)
            await response(scope, receive, send_with_headers)
            return
        await self._ariadne(scope, replay(payload, receive), send_with_headers)


def create_graphql_app(graph: GraphProvider | None = None, gate: GateProvider | None = None) -> GraphQLApp:
    """A ``/graphql`` app over ``graph`` (a provider of a compiled brain_search graph) and ``gate``."""
    return GraphQLApp(graph or _default_graph, gate or default_gate)


app = create_graphql_app()
