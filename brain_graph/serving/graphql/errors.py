"""GraphQL errors with stable ``extensions.code`` values and one-line, actionable messages.

Codes: ``TENANT_REQUIRED`` (no or an empty ``filter.tenantId``), ``BAD_USER_INPUT`` (any other invalid
argument or query document), ``UNAUTHENTICATED`` (no valid token, or a secured search without a
principal), ``FORBIDDEN`` (a tenant or scope the token does not grant), ``RATE_LIMITED``,
``CAPACITY_EXCEEDED`` (a search too large for a server's limits), ``BACKEND_UNAVAILABLE`` and
``INTERNAL_SERVER_ERROR`` (anything else: the message is generic, the
details go to the server log). Never a stack trace.

Each code has one HTTP status (:data:`HTTP_STATUS`), the status of a response without data whose
errors have it (:func:`http_status`) and of a refusal before execution. A response with data is 200
whatever its errors, as GraphQL over HTTP has it.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

from graphql import GraphQLError, ObjectFieldNode, Visitor, parse, visit

from brain_graph.core.errors import (
    INTERNAL_MESSAGE,
    AuthenticationError,
    AuthorizationError,
    BackendUnavailableError,
    CapacityError,
    ForbiddenError,
    InvalidRequestError,
    RateLimitedError,
    one_line_message,
)

logger = logging.getLogger("brain_graph.graphql")

TENANT_REQUIRED = "TENANT_REQUIRED"
BAD_USER_INPUT = "BAD_USER_INPUT"
UNAUTHENTICATED = "UNAUTHENTICATED"
FORBIDDEN = "FORBIDDEN"
RATE_LIMITED = "RATE_LIMITED"
BACKEND_UNAVAILABLE = "BACKEND_UNAVAILABLE"
CAPACITY_EXCEEDED = CapacityError.code
INTERNAL_SERVER_ERROR = "INTERNAL_SERVER_ERROR"
CODES = (
    TENANT_REQUIRED,
    BAD_USER_INPUT,
    UNAUTHENTICATED,
    FORBIDDEN,
    RATE_LIMITED,
    BACKEND_UNAVAILABLE,
    CAPACITY_EXCEEDED,
    INTERNAL_SERVER_ERROR,
)
HTTP_STATUS: dict[str, int] = {
    TENANT_REQUIRED: 400,
    BAD_USER_INPUT: 400,
    CAPACITY_EXCEEDED: 400,  # the caller can ask for less (a smaller topK, expandDepth or maxNodes)
    UNAUTHENTICATED: 401,
    FORBIDDEN: 403,
    RATE_LIMITED: 429,
    INTERNAL_SERVER_ERROR: 500,
    BACKEND_UNAVAILABLE: 503,
}
"""The HTTP status of each code."""
UNKNOWN_CODE_STATUS = 400  # ariadne's own status for a response without data


def http_status(codes: Iterable[str]) -> int:
    """The HTTP status of a response without data whose errors have ``codes``: the most severe (the
    highest) of their statuses, so a refusal that may be retried (429, 503) is never reported as one
    that may not (400)."""
    return max((HTTP_STATUS.get(code, UNKNOWN_CODE_STATUS) for code in codes), default=UNKNOWN_CODE_STATUS)


def code_of(error: BaseException) -> str:
    """The ``extensions.code`` of an error raised while resolving ``brainSearch``."""
    if isinstance(error, InvalidRequestError):
        return BAD_USER_INPUT
    if isinstance(error, ForbiddenError):
        return FORBIDDEN
    if isinstance(error, AuthenticationError | AuthorizationError):
        return UNAUTHENTICATED
    if isinstance(error, RateLimitedError):
        return RATE_LIMITED
    if isinstance(error, BackendUnavailableError):
        return BACKEND_UNAVAILABLE
    if isinstance(error, CapacityError):
        return CAPACITY_EXCEEDED
    return INTERNAL_SERVER_ERROR


def error_body(code: str, message: str, **extensions: Any) -> dict[str, Any]:
    """A GraphQL response holding one error (for refusals before execution: 401, 429)."""
    error = {"message": one_line_message(message), "extensions": {"code": code, **extensions}}
    return {"data": None, "errors": [error]}


def _validation_code(error: GraphQLError) -> str:
    """A query-document error (parse, validation, variable or argument coercion): a missing or null
    ``tenantId`` is ``TENANT_REQUIRED``, the rest ``BAD_USER_INPUT``."""
    message = error.message
    if "tenantId" in message and any(word in message for word in ("required", "null", "None")):
        return TENANT_REQUIRED
    return TENANT_REQUIRED if _is_null_tenant_literal(error) else BAD_USER_INPUT


def _is_null_tenant_literal(error: GraphQLError) -> bool:
    """Whether the error points at the ``null`` of a ``tenantId: null`` literal in the document."""
    if error.source is None or not error.positions or "not to be None" not in error.message:
        return False
    try:
        document = parse(error.source)
    except GraphQLError:
        return False
    found: list[bool] = []

    class TenantNull(Visitor):
        def enter_object_field(self, node: ObjectFieldNode, *_args: Any) -> None:
            if node.name.value == "tenantId" and node.value.loc is not None:
                found.append(node.value.loc.start in (error.positions or ()))

    visit(document, TenantNull())
    return any(found)


def format_error(error: GraphQLError, debug: bool = False) -> dict[str, Any]:
    """Ariadne's error formatter: every error gets a code; unexpected errors a generic message."""
    formatted: dict[str, Any] = dict(error.formatted)
    original = error.original_error
    extensions = dict(formatted.get("extensions") or {})
    if original is None or (isinstance(original, GraphQLError) and "code" not in (original.extensions or {})):
        extensions.setdefault("code", _validation_code(error))  # the outer message names the variable's field
    elif isinstance(original, GraphQLError):
        return format_error(original, debug)
    else:
        code = code_of(original)
        extensions["code"] = code
        if code == INTERNAL_SERVER_ERROR:
            formatted["message"] = INTERNAL_MESSAGE  # the traceback is in the server log (ServerErrorLog)
        elif isinstance(original, BackendUnavailableError):  # hosts and paths stay in the server log
            logger.warning("brainSearch: %s", one_line_message(str(original), 500))
            formatted["message"] = f"{original.backend} is unavailable; retry later (the server log has the details)"
        else:
            formatted["message"] = one_line_message(str(original))
        if isinstance(original, InvalidRequestError):
            extensions["field"] = original.field
        if isinstance(original, BackendUnavailableError):
            extensions["backend"] = original.backend
        if isinstance(original, RateLimitedError):
            extensions["retryAfter"] = original.retry_after
    formatted["extensions"] = extensions
    return formatted


class ServerErrorLog(logging.LoggerAdapter[logging.Logger]):
    """Ariadne's error log with the caller's errors at INFO: a refused token, a tenant outside the
    token or an invalid argument is an answer, not a server fault, and is one line with its code,
    without a traceback; server faults stay at ERROR with theirs."""

    def log(self, level: int, msg: object, *args: Any, **kwargs: Any) -> None:
        if isinstance(msg, GraphQLError) and not _is_server_fault(msg):
            original = msg.original_error
            code = (msg.extensions or {}).get("code") or (code_of(original) if original is not None else BAD_USER_INPUT)
            super().log(logging.INFO, "request refused: %s: %s", code, one_line_message(msg.message, 500))
            return
        super().log(level, msg, *args, **kwargs)


def _is_server_fault(error: GraphQLError) -> bool:
    """Whether an error is the server's: an unexpected exception (not a document error, nor one of
    brain-graph's caller errors, nor a GraphQL error the resolver raised with a code)."""
    original = error.original_error
    if original is None:
        return False
    if isinstance(original, GraphQLError):
        return "code" not in (original.extensions or {}) and _is_server_fault(original)
    return code_of(original) == INTERNAL_SERVER_ERROR
