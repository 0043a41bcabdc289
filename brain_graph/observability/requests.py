"""One id per HTTP request: the caller's ``X-Request-ID`` when it is a safe token, else a new one; it
is returned in the response's ``X-Request-ID`` header, set in :data:`REQUEST_ID` for the request's
log records (:mod:`.logs`), and each request to a brain-graph route is counted and timed by route
template (:data:`~brain_graph.observability.metrics.HTTP_REQUESTS`)."""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import Sequence
from contextvars import ContextVar

from starlette.routing import BaseRoute, Mount
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from brain_graph.observability.metrics import HTTP_REQUESTS, HTTP_SECONDS

HEADER = "X-Request-ID"
REQUEST_ID: ContextVar[str | None] = ContextVar("brain_graph_request_id", default=None)
_SAFE_ID = re.compile(r"[A-Za-z0-9._:-]{1,128}")
OTHER_ROUTE = "other"  # requests to the LangGraph server's own routes (runs, threads, ...)
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
OTHER_METHOD = "other"  # any other method a caller sends: the label's values stay bounded


def request_id(header: str | None) -> str:
    """The id of a request: ``header`` when it is 1 to 128 characters of letters, digits and
    ``._:-``, else a new random one (32 hex digits)."""
    if header is not None and _SAFE_ID.fullmatch(header):
        return header
    return uuid.uuid4().hex


def method_label(method: str) -> str:
    """``method`` when it is one of :data:`METHODS`, else :data:`OTHER_METHOD`."""
    return method if method in METHODS else OTHER_METHOD


def route_template(path: str, templates: Sequence[tuple[str, re.Pattern[str]]]) -> str:
    """The template of the first of ``templates`` matching ``path``, else :data:`OTHER_ROUTE`."""
    for template, pattern in templates:
        if pattern.fullmatch(path):
            return template
    return OTHER_ROUTE


def compile_templates(templates: Sequence[str]) -> list[tuple[str, re.Pattern[str]]]:
    """Route templates (``/graph/nodes/{nodeId}``; ``/brain/mcp/*`` for a mount: the path and all
    below it) with the patterns matching their paths; a parameter matches any non-empty text,
    slashes included, so longer templates go first."""
    ordered = sorted(templates, key=lambda template: (-template.count("/"), -len(template), template))
    compiled = []
    for template in ordered:
        mount = template.endswith("/*")
        pattern = re.sub(r"\\\{[^}]+?\\\}", ".+", re.escape(template.removesuffix("/*")))
        compiled.append((template, re.compile(pattern + ("(/.*)?" if mount else ""))))
    return compiled


def route_templates(routes: Sequence[BaseRoute]) -> list[str]:
    """The templates of Starlette ``routes``: a route's path without converters
    (``{nodeId:path}`` is ``{nodeId}``), a mount's path with ``/*``."""
    templates = []
    for route in routes:
        path = getattr(route, "path", None)
        if isinstance(path, str):
            path = re.sub(r"\{(\w+):\w+\}", r"{\1}", path)
            templates.append(f"{path}/*" if isinstance(route, Mount) else path)
    return templates


class RequestContextMiddleware:
    """ASGI middleware: the request id (see the module's docstring) for every HTTP request, and the
    metrics of the requests whose path matches one of ``routes`` (templates)."""

    def __init__(self, app: ASGIApp, routes: Sequence[str]) -> None:
        self.app = app
        self.templates = compile_templates(routes)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        incoming = next((value.decode("latin-1") for name, value in scope["headers"] if name == b"x-request-id"), None)
        current = request_id(incoming)
        token = REQUEST_ID.set(current)
        route = route_template(scope["path"], self.templates)
        started = time.perf_counter()
        status = 500

        async def send_with_id(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
                headers = [(n, v) for n, v in message.get("headers", []) if n.lower() != b"x-request-id"]
                message = {**message, "headers": [*headers, (b"x-request-id", current.encode("ascii"))]}
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        finally:
            REQUEST_ID.reset(token)
            if route != OTHER_ROUTE:
                HTTP_REQUESTS.labels(route, method_label(scope["method"]), str(status)).inc()
                HTTP_SECONDS.labels(route).observe(time.perf_counter() - started)
