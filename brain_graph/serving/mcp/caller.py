"""Who calls a tool: the credentials the HTTP layer (:class:`~brain_graph.serving.mcp.app.BrainMCP`)
found on the request, read back from the request a tool call came in on."""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver import Context

from brain_graph.auth.credentials import READER
from brain_graph.auth.gate import Admission
from brain_graph.core.errors import AuthenticationError
from brain_graph.core.security import Principal

ADMISSION_KEY = "brain_graph.mcp.admission"  # where the HTTP layer leaves the request's Admission


def caller(context: Context[Any, Any]) -> Principal | None:
    """The principal of the HTTP request behind a tool call, which must carry the reader scope; None
    in insecure mode without a token. :class:`AuthenticationError` when the request did not pass the
    gate (fail closed), :class:`~brain_graph.core.errors.ForbiddenError` without the reader scope."""
    request = context.request_context.request
    admission = request.scope.get(ADMISSION_KEY) if request is not None else None
    if not isinstance(admission, Admission):
        raise AuthenticationError("missing bearer token: send 'Authorization: Bearer <token>'")
    if admission.credentials is None:
        return None
    admission.credentials.require(READER, "the brain-graph MCP tools")
    return admission.credentials.principal
