"""What a failed tool call tells the agent: one line, ``<CODE>: <message>``, naming the argument when an
argument is at fault, never a traceback (:class:`BrainMCPServer`). Errors of the caller's request keep
their message; a backend outage names the backend only (hosts and paths stay in the server log);
anything else is :data:`~brain_graph.core.errors.INTERNAL_MESSAGE`, logged with its traceback."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.types import CallToolResult, InputRequiredResult
from pydantic import ValidationError

from brain_graph.browse.service import NodeNotFoundError, NodeTooConnectedError, SearchUnsupportedError
from brain_graph.core.errors import (
    INTERNAL_MESSAGE,
    AuthorizationError,
    BackendUnavailableError,
    BrainGraphError,
    CapacityError,
    InternalError,
    InvalidRequestError,
    RateLimitedError,
    one_line_message,
)

logger = logging.getLogger("brain_graph.mcp")

CALLER_ERRORS: tuple[type[BrainGraphError], ...] = (
    InvalidRequestError,
    AuthorizationError,
    RateLimitedError,
    CapacityError,
    NodeNotFoundError,
    NodeTooConnectedError,
    SearchUnsupportedError,
)
"""Errors about the request, whose message the agent gets as it is."""

RENAMED = {"q": "query"}  # graph API parameters the tools call otherwise
REQUEST_PREFIXES = ("filter.", "options.")  # a search request's fields are the brain_search tool's arguments


def argument_name(field: str, renamed: Mapping[str, str]) -> str:
    """The tool argument a service's field name stands for: ``options.topK`` is ``topK``, and a field
    the tool calls otherwise (``renamed``, e.g. ``q``: ``query``) its tool name."""
    for prefix in REQUEST_PREFIXES:
        if field.startswith(prefix):
            field = field[len(prefix) :]
            break
    head, dot, rest = field.partition(".")
    return renamed.get(head, head) + dot + rest


def validation_message(error: ValidationError) -> str:
    """``INVALID_REQUEST: invalid request: <argument>: <problem>`` for the first problem of a tool's
    arguments, with the number of others (pydantic's own text spans lines and may quote the input)."""
    problems = error.errors(include_url=False, include_input=False)
    first = problems[0]
    where = ".".join(str(part) for part in first["loc"]) or "arguments"
    more = f" (and {len(problems) - 1} more problem(s))" if len(problems) > 1 else ""
    return f"{InvalidRequestError.code}: {InvalidRequestError(where, first['msg'] + more)}"


def error_message(error: BaseException, tool: str, renamed: Mapping[str, str] | None = None) -> str:
    """The one-line message of ``error``, raised by ``tool``; logs what the agent is not told."""
    if isinstance(error, InvalidRequestError):
        name = argument_name(error.field, renamed or {})
        return f"{error.code}: {InvalidRequestError(name, error.problem)}"
    if isinstance(error, BackendUnavailableError):
        logger.warning("MCP tool %s: %s", tool, one_line_message(str(error), 500))
        return f"{error.code}: {error.backend} is unavailable; retry later (the server log has the details)"
    if isinstance(error, CALLER_ERRORS):
        return f"{error.code}: {one_line_message(str(error))}"
    logger.error("MCP tool %s failed", tool, exc_info=error)
    return f"{InternalError.code}: {INTERNAL_MESSAGE}"


class BrainMCPServer(MCPServer[Any]):
    """An :class:`MCPServer` whose failed tool calls are one line naming the argument or the refusal
    (:func:`error_message`, :func:`validation_message`), never pydantic's multi-line report nor a traceback."""

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> CallToolResult | InputRequiredResult:
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as failure:
            cause = failure.__cause__
            if cause is None:
                raise  # an unknown tool: the SDK's message names it
            if isinstance(cause, ValidationError) and not isinstance(failure, UnexpectedToolError):
                raise ToolError(validation_message(cause)) from None
            raise ToolError(error_message(cause, name, RENAMED)) from None
