"""The gate's answer to one HTTP request, shared by brain-graph's HTTP surfaces (``/graphql``,
``/graph/...``, ``/brain/mcp``): the request's :class:`~brain_graph.auth.gate.Admission`, or a
:class:`GateRefusal` each surface renders in its own error format; and the rate-limit headers put on
every answer to an admitted request."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from starlette.types import Message, Send

from brain_graph.auth.gate import Admission, Gate
from brain_graph.core.errors import INTERNAL_MESSAGE, AuthenticationError, ConfigurationError, RateLimitedError

INTERNAL_CODE = "INTERNAL_SERVER_ERROR"


@dataclass(frozen=True)
class GateRefusal:
    """Why the gate refused a request: 401 (no or a bad token, ``WWW-Authenticate: Bearer``), 429
    (over the rate limit, ``Retry-After``) or 500 (the gate is misconfigured; the detail is logged,
    the message is :data:`~brain_graph.core.errors.INTERNAL_MESSAGE`)."""

    status: int
    code: str
    message: str
    headers: Mapping[str, str] = field(default_factory=dict)
    retry_after: int | None = None


def admit(gate: Callable[[], Gate], authorization: str | None, log: logging.Logger) -> Admission | GateRefusal:
    """The answer of the gate ``gate()`` returns to a request with this ``Authorization`` header; a
    gate that cannot be built or is misconfigured is logged at ERROR on ``log``."""
    try:
        return gate().admit(authorization)
    except AuthenticationError as error:
        return GateRefusal(401, error.code, str(error), {"WWW-Authenticate": "Bearer"})
    except RateLimitedError as error:
        return GateRefusal(429, error.code, str(error), error.headers, error.retry_after)
    except ConfigurationError as error:
        log.error("refused a request, the gate is misconfigured: %s", error)
        return GateRefusal(500, INTERNAL_CODE, INTERNAL_MESSAGE)


def sending_headers(send: Send, headers: Mapping[str, str]) -> Send:
    """``send`` adding ``headers`` to the response's start."""
    raw = [(name.lower().encode("latin-1"), value.encode("latin-1")) for name, value in headers.items()]

    async def send_with_headers(message: Message) -> None:
        if message["type"] == "http.response.start":
            message = {**message, "headers": [*message.get("headers", []), *raw]}
        await send(message)

    return send_with_headers
