"""The HTTP side of ``/graphql`` around ariadne: a POST body must be a JSON object of at most
:data:`~brain_graph.graphql.limits.MAX_BODY_BYTES` (else a GraphQL error, HTTP 415, 413 or 400, before
anything is parsed), and a search refused for its credentials answers 401 or 403, not 400."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from ariadne.asgi.handlers import GraphQLHTTPHandler
from ariadne.constants import DATA_TYPE_JSON
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.types import Message, Receive

from brain_graph.graphql.errors import HTTP_STATUS, UNAUTHENTICATED
from brain_graph.graphql.limits import MAX_BODY_BYTES


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
    """Ariadne's HTTP handler with HTTP statuses for credential refusals: a result without data whose
    errors all have one code of :data:`HTTP_STATUS` (``UNAUTHENTICATED``: 401, ``FORBIDDEN``: 403)."""

    async def create_json_response(self, request: Request, result: dict[str, Any], success: bool) -> Response:
        codes = {str((error.get("extensions") or {}).get("code")) for error in result.get("errors") or ()}
        status = HTTP_STATUS.get(codes.pop()) if len(codes) == 1 and result.get("data") is None else None
        if success or status is None:
            return await super().create_json_response(request, result, success)
        headers = {"WWW-Authenticate": "Bearer"} if status == HTTP_STATUS[UNAUTHENTICATED] else None
        return JSONResponse(result, status, headers=headers)
