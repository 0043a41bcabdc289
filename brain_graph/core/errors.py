"""Typed errors of brain-graph. Every message is one bounded line a caller can act on."""

from __future__ import annotations

import unicodedata

MAX_MESSAGE_CHARS = 1_000
_ESCAPED_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})


def one_line_message(text: str, limit: int = MAX_MESSAGE_CHARS) -> str:
    """``text`` as one line: control, format and line-separator characters escaped (``\\n``,
    ``\\u2028``), cut to ``limit`` characters with the number of characters left out."""
    line = "".join(
        char.encode("unicode_escape").decode("ascii") if unicodedata.category(char) in _ESCAPED_CATEGORIES else char
        for char in text
    )
    if len(line) <= limit:
        return line
    return f"{line[: limit - 40]}… ({len(line) - limit + 40} more characters)"


def shown(value: object, limit: int = 80) -> str:
    """A bounded repr of a value an error quotes (a one-line error never echoes a huge input)."""
    text = repr(value)
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text)} characters)"


class BrainGraphError(RuntimeError):
    """Base class of every error brain-graph raises on purpose; its message is one bounded line
    whatever data it quotes, written for the caller.

    It is a :class:`RuntimeError` so the LangGraph server shows its type and message to HTTP clients
    and in Studio (``langgraph_api`` passes the messages of built-in error kinds through and hides
    the rest as "An internal error occurred").
    """

    code = "BRAIN_GRAPH_ERROR"

    def __init__(self, *args: object) -> None:
        if len(args) == 1 and isinstance(args[0], str):
            args = (one_line_message(args[0]),)
        super().__init__(*args)


class InvalidRequestError(BrainGraphError, ValueError):
    """A request field is missing, malformed or out of its allowed range."""

    code = "INVALID_REQUEST"

    def __init__(self, field: str, problem: str) -> None:
        self.field = one_line_message(field, 200)
        self.problem = one_line_message(problem)
        super().__init__(f"invalid request: {self.field}: {self.problem}")


class AuthorizationError(BrainGraphError, PermissionError):
    """The caller may not run this search (e.g. secured mode without a principal)."""

    code = "UNAUTHORIZED"


class AuthenticationError(AuthorizationError):
    """The credentials are missing, malformed, badly signed or expired."""

    code = "UNAUTHENTICATED"


class ForbiddenError(AuthorizationError):
    """The caller is known but may not do this: a tenant it may not read, a scope it lacks."""

    code = "FORBIDDEN"


class RateLimitedError(BrainGraphError):
    """The caller sent more requests than its rate limit allows; ``retry_after`` seconds until the next."""

    code = "RATE_LIMITED"

    def __init__(self, message: str, retry_after: int, headers: dict[str, str] | None = None) -> None:
        self.retry_after = retry_after
        self.headers = {**(headers or {}), "Retry-After": str(retry_after)}
        super().__init__(message)


class BackendUnavailableError(BrainGraphError, ConnectionError):
    """A storage backend is down, unreachable or timed out."""

    code = "BACKEND_UNAVAILABLE"

    def __init__(self, backend: str, detail: str) -> None:
        self.backend = backend
        self.detail = detail
        super().__init__(f"{backend} unavailable: {detail}")


class CapacityError(BrainGraphError):
    """A request or a write needs more than a server's configured limit allows (e.g. the memory Neo4j
    grants one transaction); what it tried to write was rolled back. Send less at once, or raise the
    server's limit."""

    code = "CAPACITY_EXCEEDED"


INTERNAL_MESSAGE = "internal error; the server log has the details"


class InternalError(BrainGraphError):
    """What a caller of a server run gets for a failure that is not about its request (a bug, the
    server's configuration): :data:`INTERNAL_MESSAGE`; the failure itself is in the server log."""

    code = "INTERNAL_SERVER_ERROR"

    def __init__(self) -> None:
        super().__init__(INTERNAL_MESSAGE)


class ConfigurationError(BrainGraphError):
    """The configuration (environment, profiles, stores) is inconsistent."""

    code = "CONFIGURATION_ERROR"


class DatasetError(BrainGraphError, ValueError):
    """A dataset to load is malformed; nothing was written."""

    code = "INVALID_DATASET"
