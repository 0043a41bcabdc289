"""The gate's answer to one HTTP request, shared by brain-graph's HTTP surfaces (``/graphql``,
``/graph/...``, ``/brain/mcp``): the request's :class:`~brain_graph.auth.gate.Admission`, or a
:class:`GateRefusal` each surface renders in its own error format; and the rate-limit headers put on
every answer to an admitted request."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from starlette.concurrency import run_in_threadpool
from starlette.types import Message, Send

from brain_graph.auth.gate import Admission, Gate
from brain_graph.core.errors import (
    INTERNAL_MESSAGE,
    AuthenticationError,
    BackendUnavailableError,
    ConfigurationError,
    RateLimitedError,
)

INTERNAL_CODE = "INTERNAL_SERVER_ERROR"
UNAVAILABLE_RETRY_AFTER_S = 5  # what a refusal for an unreachable rate-limit storage asks callers to wait


@dataclass(frozen=True)
class GateRefusal:
    """Why the gate refused a request: 401 (no or a bad token, ``WWW-Authenticate: Bearer``), 429
    (over the rate limit, ``Retry-After``), 503 ``BACKEND_UNAVAILABLE`` (the shared rate-limit storage
    cannot be reached, so the request cannot be counted; ``Retry-After``; its address is logged, not
    sent) or 500 (the gate is misconfigured; the detail is logged, the message is
    :data:`~brain_graph.core.errors.INTERNAL_MESSAGE`)."""

    status: int
    code: str
    message: str
    headers: Mapping[str, str] = field(default_factory=dict)
    retry_after: int | None = None
    backend: str | None = None  # the service that is unavailable, for a 503


def admit(gate: Callable[[], Gate], authorization: str | None, log: logging.Logger) -> Admission | GateRefusal:
    """The answer of the gate ``gate()`` returns to a request with this ``Authorization`` header; a
    gate that cannot be built or is misconfigured is logged at ERROR on ``log``."""
    try:
        return gate().admit(authorization)
    except AuthenticationError as error:
        return GateRefusal(401, error.code, str(error), {"WWW-Authenticate": "Bearer"})
    except RateLimitedError as error:
        return GateRefusal(429, error.code, str(error), error.headers, error.retry_after)
    except BackendUnavailableError as error:
        log.error("refused a request, its rate limit cannot be counted: %s", error)
        return storage_refusal(error.backend)
    except ConfigurationError as error:
        log.error("refused a request, the gate is misconfigured: %s", error)
        return GateRefusal(500, INTERNAL_CODE, INTERNAL_MESSAGE)


async def admit_in_thread(
    gate: Callable[[], Gate], authorization: str | None, log: logging.Logger
) -> Admission | GateRefusal:
    """:func:`admit` in a worker thread, for async routes: counting a request in a shared storage is
    a network call that must not hold the event loop."""
    return await run_in_threadpool(admit, gate, authorization, log)


def storage_refusal(backend: str) -> GateRefusal:
    """The 503 of a request the gate could not count against its limit because ``backend`` (the
    rate-limit storage) is unavailable."""
    retry = UNAVAILABLE_RETRY_AFTER_S
    message = f"{backend} is unavailable, so the request cannot be counted against its rate limit; retry later"
    return GateRefusal(503, BackendUnavailableError.code, message, {"Retry-After": str(retry)}, retry, backend)


def sending_headers(send: Send, headers: Mapping[str, str]) -> Send:
    """``send`` adding ``headers`` to the response's start."""
    raw = [(name.lower().encode("latin-1"), value.encode("latin-1")) for name, value in headers.items()]

    async def send_with_headers(message: Message) -> None:
        if message["type"] == "http.response.start":
            message = {**message, "headers": [*message.get("headers", []), *raw]}
        await send(message)

    return send_with_headers
