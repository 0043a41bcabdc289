"""Entry points for the LangGraph server (``langgraph dev`` / LangSmith Deployment), named in ``langgraph.json``.

- ``make_index_graph``: the ``brain_index`` graph (the incremental indexer, :mod:`brain_graph.graphs.index`).
- ``make_graph``: the ``brain_search`` graph factory. It returns one compiled graph per process, built
  without touching any store; services come from the environment (``BRAIN_GRAPH_*``, see
  :mod:`brain_graph.pipeline.config`) the first time a node runs, in a worker thread, never on the event loop.
- ``app``: custom HTTP routes mounted on the same server: ``GET /brain/health`` (liveness: the process
  answers; touches no store), ``GET /brain/ready`` (readiness: each service of the configured backend,
  each provider embedder and a shared rate-limit storage answer within :data:`READY_TIMEOUT_S`, else
  503 naming the ones that do not), ``GET /brain/metrics`` (Prometheus, :mod:`brain_graph.observability`),
  ``/graphql`` (the ``brainSearch`` query, with its own bearer-token check:
  :mod:`brain_graph.serving.graphql.app`), the read-only graph API ``/graph/...``
  (:mod:`brain_graph.serving.graph_api`) and ``/brain/mcp`` (the MCP tools, behind the same check:
  :mod:`brain_graph.serving.mcp`). The same ``app`` also runs alone, in N worker processes:
  :mod:`brain_graph.serving.standalone` (``brain-graph serve``).

Every response carries ``X-Request-ID`` (the caller's, when safe, else a new one), also on every log
record of the request; requests to the routes above are counted and timed by route.

A profiles file (``BRAIN_GRAPH_PROFILES``) that cannot be used stops the server at import, with one
line naming the key (:func:`~brain_graph.serving.startup.refuse_to_start`).

Principal: when the server authenticates requests (custom auth, ``auth`` in ``langgraph.json``:
:mod:`brain_graph.serving.langgraph_auth`) the principal of a search is the authenticated user (identity,
groups from a ``groups`` claim and ``group:<name>`` permissions, tenants from a ``tenants`` claim) and
the run context cannot override it; an unauthenticated user has none, so secured searches fail
closed. Without auth, or in the insecure development mode, the run context's ``principal``
``{principalId, groups}`` is used. See :func:`brain_graph.pipeline.binding.resolve_deps`.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Callable
from functools import lru_cache
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from brain_graph.auth.gate import Gate, default_gate
from brain_graph.core.errors import BrainGraphError, ConfigurationError
from brain_graph.embedding.hosted import embedder_checks
from brain_graph.graphs.index import build_index_graph
from brain_graph.graphs.search import GRAPH_NAME, NODE_NAMES, BrainSearchGraph, build_graph
from brain_graph.observability.logs import FORMAT_VARIABLE, configure_logging
from brain_graph.observability.metrics import exposition
from brain_graph.observability.requests import RequestContextMiddleware, route_templates
from brain_graph.pipeline.config import (
    ProfilesSettingError,
    configured_profiles_file,
    default_services,
    load_settings,
)
from brain_graph.pipeline.services import SearchServices
from brain_graph.serving.graph_api import graph_api_routes
from brain_graph.serving.graphql.app import create_graphql_app
from brain_graph.serving.mcp import MCP_PATH, create_mcp_app
from brain_graph.serving.startup import refuse_to_start
from brain_graph.stores.readiness import ServiceStatus, backend_checks, check_services

__all__ = ["READY_TIMEOUT_S", "app", "make_graph", "make_index_graph", "readiness_endpoint"]

logger = logging.getLogger("brain_graph.server")
READY_TIMEOUT_S = 3.0  # how long /brain/ready waits for the backend's services, all checked at once


def configure_server_logging() -> None:
    """Request ids on log records and ``BRAIN_GRAPH_LOG_FORMAT`` (:mod:`brain_graph.observability.logs`);
    an unknown format stops the server in one line."""
    try:
        configure_logging(os.environ.get(FORMAT_VARIABLE, "").strip() or None)
    except ValueError as error:
        refuse_to_start(str(error))


def check_profiles() -> None:
    """End the server (one line naming the key) when the environment's profiles file cannot be used."""
    try:
        settings = load_settings()
    except BrainGraphError:
        return  # another setting: the search and readiness answers say which
    try:
        configured_profiles_file(settings)
    except ProfilesSettingError as error:
        refuse_to_start(str(error))


check_profiles()
configure_server_logging()


@lru_cache(maxsize=1)
def _compiled() -> BrainSearchGraph:
    return build_graph()  # services resolved lazily from the environment, once per process


def make_graph() -> BrainSearchGraph:
    """Graph factory for ``langgraph.json`` (graph id ``brain_search``); cheap, called per request."""
    return _compiled()


@lru_cache(maxsize=1)
def _compiled_index() -> Any:
    return build_index_graph()  # services resolved from the environment when a run starts


def make_index_graph() -> Any:
    """Graph factory for ``langgraph.json`` (graph id ``brain_index``)."""
    return _compiled_index()


def _package_version() -> str:
    try:
        return version("brain-graph")
    except PackageNotFoundError:  # pragma: no cover - running from a source tree without metadata
        return "unknown"


def health(request: Request) -> JSONResponse:
    """Liveness and configuration summary; does not touch the store (no secrets, no paths). Sync, so
    Starlette runs it in a thread (reading settings may read a ``.env`` file)."""
    settings = load_settings()
    return JSONResponse(
        {
            "status": "ok",
            "graph": GRAPH_NAME,
            "nodes": list(NODE_NAMES),
            "backend": settings.backend,
            "version": _package_version(),
        }
    )


def backend_statuses(
    services: Callable[[], SearchServices], timeout_s: float, gate: Callable[[], Gate] | None = None
) -> list[ServiceStatus]:
    """Each service of the backend of ``services()``, each provider embedder its profiles use
    (:func:`~brain_graph.embedding.hosted.embedder_checks`) and, with ``gate``, its shared rate-limit
    storage (:meth:`~brain_graph.auth.gate.Gate.readiness_checks`), all checked at once
    (:func:`~brain_graph.stores.readiness.check_services`); services that cannot be built (their
    configuration) are one service ``configuration`` not ready."""
    try:
        built = services()
    except BrainGraphError as error:
        return [ServiceStatus("configuration", str(error))]
    checks = {**backend_checks(built.backend), **embedder_checks(built.profiles.embedders.values())}
    if gate is not None:
        # A gate that cannot be built answers for itself: 500 on every gated request, logged.
        with contextlib.suppress(ConfigurationError):
            checks.update(gate().readiness_checks())
    return check_services(checks, timeout_s)


def readiness_body(statuses: list[ServiceStatus]) -> tuple[int, dict[str, Any]]:
    """The status code and JSON of a readiness answer: 200 ``{"status": "ready", "backends": {name:
    "ready"}}``, or 503 ``{"status": "unavailable", "backends": {name: "ready" | "unavailable"},
    "unavailable": [names]}``. Only the services' names: why one is down (hosts, paths) is logged."""
    down = [status.name for status in statuses if not status.ready]
    backends = {status.name: "ready" if status.ready else "unavailable" for status in statuses}
    if not down:
        return 200, {"status": "ready", "backends": backends}
    return 503, {"status": "unavailable", "backends": backends, "unavailable": down}


def readiness_endpoint(
    services: Callable[[], SearchServices] = default_services,
    timeout_s: float = READY_TIMEOUT_S,
    gate: Callable[[], Gate] | None = None,
) -> Callable[[Request], JSONResponse]:
    """``GET /brain/ready`` over ``services`` (default: the services searches use, from the
    environment) and the shared rate-limit storage of ``gate``, if any: answers within about
    ``timeout_s`` seconds whatever the servers do. Sync, so Starlette runs it in a thread."""

    def ready(request: Request) -> JSONResponse:
        statuses = backend_statuses(services, timeout_s, gate)
        for status in statuses:
            if not status.ready:
                logger.warning("/brain/ready: %s is not ready: %s", status.name, status.problem)
        code, body = readiness_body(statuses)
        return JSONResponse(body, code, headers={"Cache-Control": "no-store"})

    return ready


def metrics(request: Request) -> Response:
    """Prometheus metrics of brain-graph (GET /brain/metrics, :mod:`brain_graph.observability.metrics`)."""
    body, content_type = exposition()
    return Response(body, headers={"Content-Type": content_type, "Cache-Control": "no-store"})


brain_mcp = create_mcp_app(make_graph)
ROUTES = [
    Route("/brain/health", health, methods=["GET"]),
    Route("/brain/ready", readiness_endpoint(gate=default_gate), methods=["GET"]),
    Route("/brain/metrics", metrics, methods=["GET"]),
    Route("/graphql", create_graphql_app(make_graph), methods=["GET", "POST"]),
    *graph_api_routes(),
    Route(MCP_PATH, brain_mcp, methods=["GET", "POST", "DELETE"]),
]
app = Starlette(
    routes=ROUTES,
    middleware=[Middleware(RequestContextMiddleware, routes=route_templates(ROUTES))],
    lifespan=brain_mcp.lifespan,
)
