"""The read-only graph API over HTTP (``/graph/...``), mounted on the server's custom app.

- ``GET /graph/nodes/{nodeId}``: the node and its relationships (``relationships=outgoing|incoming|all``,
  ``limit`` per direction).
- ``GET /graph/nodes/{nodeId}/neighbours``: one page of its relationships (``direction``, ``limit``,
  ``cursor`` from the previous page).
- ``GET /graph/search``: nodes by words (``q``, ``limit``).

Every route takes ``tenantId`` and ``secured`` (default true) and sees exactly what a search with them
sees (:mod:`brain_graph.browse.service`). Requests pass the same gate as ``/graphql`` (bearer token,
reader scope, the token's tenants, the principal's rate limit, shared with the other reader routes);
every admitted response carries the rate-limit headers. Errors are ``{"detail", "error_code"}`` with
the status of :data:`STATUS`. There is no raw Cypher route: see docs/graph-api.md.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from brain_graph.auth.credentials import READER
from brain_graph.auth.gate import Admission, Gate, default_gate
from brain_graph.browse.service import (
    NEIGHBOUR_LIMIT_DEFAULT,
    NODE_LIMIT_DEFAULT,
    SEARCH_LIMIT_DEFAULT,
    browse_scope,
    neighbour_page,
    node_search,
    node_view,
)
from brain_graph.core.errors import (
    INTERNAL_MESSAGE,
    AuthorizationError,
    BackendUnavailableError,
    BrainGraphError,
    ForbiddenError,
    InvalidRequestError,
)
from brain_graph.pipeline.config import default_services
from brain_graph.pipeline.services import SearchServices
from brain_graph.serving.admission import GateRefusal, admit

logger = logging.getLogger("brain_graph.graph_api")

INVALID_PARAMETER = "GRAPH_INVALID_PARAMETER"
INTERNAL = "INTERNAL_SERVER_ERROR"
STATUS: dict[str, int] = {
    INVALID_PARAMETER: 400,
    "GRAPH_NODE_TOO_CONNECTED": 400,
    "GRAPH_SEARCH_UNSUPPORTED": 400,
    "UNAUTHENTICATED": 401,
    "UNAUTHORIZED": 403,
    "FORBIDDEN": 403,
    "GRAPH_NODE_NOT_FOUND": 404,
    "RATE_LIMITED": 429,
    INTERNAL: 500,
    "BACKEND_UNAVAILABLE": 503,
}
"""The HTTP status of each ``error_code``."""

ServicesProvider = Callable[[], SearchServices]
GateProvider = Callable[[], Gate]


def error_code(error: BrainGraphError) -> str:
    """The ``error_code`` of a brain-graph error: its own code, :data:`INVALID_PARAMETER` for a bad
    parameter, :data:`INTERNAL` for a code the graph API does not answer with."""
    if isinstance(error, InvalidRequestError):
        return INVALID_PARAMETER
    return error.code if error.code in STATUS else INTERNAL


def error_response(code: str, detail: str, headers: dict[str, str] | None = None) -> JSONResponse:
    """``{"detail", "error_code"}`` with the code's status."""
    return JSONResponse({"detail": detail, "error_code": code}, STATUS[code], headers=headers)


def int_parameter(request: Request, name: str, default: int) -> int:
    """An integer query parameter (``default`` when absent)."""
    raw = request.query_params.get(name)
    if raw is None:
        return default
    try:
        return int(raw, 10)
    except ValueError:
        raise InvalidRequestError(name, f"must be an integer (got {raw[:40]!r})") from None


def bool_parameter(request: Request, name: str, default: bool) -> bool:
    """A ``true``/``false`` query parameter (``default`` when absent)."""
    raw = request.query_params.get(name)
    if raw is None:
        return default
    if raw.lower() in {"true", "false"}:
        return raw.lower() == "true"
    raise InvalidRequestError(name, f"must be true or false (got {raw[:40]!r})")


def text_parameter(request: Request, name: str, default: str | None = None) -> str | None:
    """A text query parameter, given once at most."""
    values = request.query_params.getlist(name)
    if len(values) > 1:
        raise InvalidRequestError(name, "must be given once")
    return values[0] if values else default


class GraphApi:
    """The graph API's routes over ``services`` (default: the search services of the environment)
    and ``gate`` (default: the server's)."""

    def __init__(self, services: ServicesProvider = default_services, gate: GateProvider = default_gate) -> None:
        self._services = services
        self._gate = gate

    def routes(self) -> list[Route]:
        return [
            Route("/graph/nodes/{nodeId:path}/neighbours", self._endpoint(self.neighbours), methods=["GET"]),
            Route("/graph/nodes/{nodeId:path}", self._endpoint(self.node), methods=["GET"]),
            Route("/graph/search", self._endpoint(self.search), methods=["GET"]),
        ]

    def _admit(self, request: Request) -> Admission | GateRefusal:
        admission = admit(self._gate, request.headers.get("authorization"), logger)
        if isinstance(admission, Admission) and admission.credentials is not None:
            admission.credentials.require(READER, "reading the graph")
        return admission

    def _scope_args(self, services: SearchServices, request: Request, admission: Admission) -> Any:
        principal = admission.credentials.principal if admission.credentials is not None else None
        return browse_scope(
            services,
            text_parameter(request, "tenantId") or "",
            secured=bool_parameter(request, "secured", True),
            principal=principal,
        )

    def node(self, services: SearchServices, request: Request, admission: Admission) -> dict[str, Any]:
        scope = self._scope_args(services, request, admission)
        return node_view(
            services,
            scope,
            request.path_params["nodeId"],
            relationships=text_parameter(request, "relationships") or "outgoing",
            limit=int_parameter(request, "limit", NODE_LIMIT_DEFAULT),
        )

    def neighbours(self, services: SearchServices, request: Request, admission: Admission) -> dict[str, Any]:
        scope = self._scope_args(services, request, admission)
        return neighbour_page(
            services,
            scope,
            request.path_params["nodeId"],
            direction=text_parameter(request, "direction") or "all",
            limit=int_parameter(request, "limit", NEIGHBOUR_LIMIT_DEFAULT),
            cursor=text_parameter(request, "cursor"),
        )

    def search(self, services: SearchServices, request: Request, admission: Admission) -> dict[str, Any]:
        scope = self._scope_args(services, request, admission)
        return node_search(
            services,
            scope,
            text_parameter(request, "q") or "",
            limit=int_parameter(request, "limit", SEARCH_LIMIT_DEFAULT),
        )

    def _endpoint(
        self, operation: Callable[[SearchServices, Request, Admission], dict[str, Any]]
    ) -> Callable[[Request], Any]:
        async def endpoint(request: Request) -> JSONResponse:
            try:
                admission = await run_in_threadpool(self._admit, request)
            except ForbiddenError as error:
                return error_response("FORBIDDEN", str(error))
            if isinstance(admission, GateRefusal):
                return error_response(admission.code, admission.message, dict(admission.headers))
            headers = admission.headers()
            try:
                services = await run_in_threadpool(self._services)
                body = await run_in_threadpool(operation, services, request, admission)
            except (InvalidRequestError, AuthorizationError) as error:
                logger.info("graph API %s: %s: %s", request.url.path, error.code, error)
                return error_response(error_code(error), str(error), headers)
            except BackendUnavailableError as error:
                logger.warning("graph API %s: %s", request.url.path, error)
                return error_response("BACKEND_UNAVAILABLE", str(error), headers)
            except BrainGraphError as error:
                code = error_code(error)
                if code == INTERNAL:
                    logger.error("graph API %s failed: %s", request.url.path, error)
                    return error_response(INTERNAL, INTERNAL_MESSAGE, headers)
                logger.info("graph API %s: %s: %s", request.url.path, code, error)
                return error_response(code, str(error), headers)
            return JSONResponse(body, headers={**headers, "Cache-Control": "no-store"})

        return endpoint


def graph_api_routes(services: ServicesProvider | None = None, gate: GateProvider | None = None) -> list[Route]:
    """The graph API's routes (see the module's docstring)."""
    return GraphApi(services or default_services, gate or default_gate).routes()
