"""The HTTP side of ``/graphql`` around ariadne: a POST body must be a JSON object of at most
:data:`~brain_graph.serving.graphql.limits.MAX_BODY_BYTES` (else a GraphQL error, HTTP 415, 413 or 400, before
anything is parsed), and a response without data answers with the HTTP status of its errors' codes
(:data:`~brain_graph.serving.graphql.errors.HTTP_STATUS`: a backend that is down is 503, a refused token 401)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any

from ariadne.asgi.handlers import GraphQLHTTPHandler
from ariadne.constants import DATA_TYPE_JSON
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.types import Message, Receive

from brain_graph.serving.graphql.errors import http_status
from brain_graph.serving.graphql.limits import MAX_BODY_BYTES


@dataclass(frozen=True)
class Refusal:
    """Why a request body is not passed on: the HTTP status and a one-line message."""

    status: int
    message: str


TOO_LARGE = Refusal(413, f"the request body exceeds {MAX_BODY_BYTES} bytes; send a smaller query")
NOT_JSON = Refusal(415, f"send the request as {DATA_TYPE_JSON}: a JSON object with query, variables and operationName")
BAD_JSON = Refusal(400, "the request body is not valid JSON: send a JSON object with query and variables")


async def read_body(request: Request) -> bytes | Refusal:
    """The body of a POST, read up to :data:`MAX_BODY_BYTES`, or why it is refused (no multipart: the
    schema takes no uploads)."""
    if request.headers.get("content-type", "").split(";")[0] != DATA_TYPE_JSON:  # ariadne's own test
        return NOT_JSON
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > MAX_BODY_BYTES:
        return TOO_LARGE
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_BODY_BYTES:
            return TOO_LARGE
    try:
        json.loads(body)
    except (ValueError, RecursionError):  # RecursionError: nesting deeper than the JSON decoder goes
        return BAD_JSON
    return bytes(body)


def replay(body: bytes, receive: Receive) -> Receive:
    """An ASGI ``receive`` that yields ``body`` once, then waits on the connection (disconnects)."""
    pending = [body]

    async def receive_body() -> Message:
        if pending:
            return {"type": "http.request", "body": pending.pop(), "more_body": False}
        return await receive()

    return receive_body


class GraphQLHandler(GraphQLHTTPHandler):
    """Ariadne's HTTP handler with the status of the errors' codes (:func:`http_status`) for a response
    without data (ariadne answers every one 400), and the headers that go with it: ``WWW-Authenticate``
    with 401, ``Retry-After`` with 429. A response with data is 200, as ariadne has it."""

    async def create_json_response(self, request: Request, result: dict[str, Any], success: bool) -> Response:
        errors = result.get("errors") or ()
        if success or result.get("data") is not None or not errors:
            return await super().create_json_response(request, result, success)
        status = http_status(str((error.get("extensions") or {}).get("code")) for error in errors)
        return JSONResponse(result, status, headers=response_headers(status, errors))


def response_headers(status: int, errors: Iterable[dict[str, Any]]) -> dict[str, str]:
    """The headers a refusal with ``status`` carries: ``WWW-Authenticate: Bearer`` with 401,
    ``Retry-After`` with 429 (the longest ``extensions.retryAfter`` of the errors, when they give one)."""
    if status == HTTPStatus.UNAUTHORIZED:
        return {"WWW-Authenticate": "Bearer"}
    if status == HTTPStatus.TOO_MANY_REQUESTS:
        waits = [(error.get("extensions") or {}).get("retryAfter") for error in errors]
        seconds = [wait for wait in waits if isinstance(wait, int)]
        return {"Retry-After": str(max(seconds))} if seconds else {}
    return {}
