"""Failed tool calls through the MCP endpoint are one line ``<CODE>: <message>``: the caller's errors
keep their message, a backend outage names only the backend, anything else is the generic internal
message with the details in the server log. A stand-in graph raises each error (the error path of the
MCP layer under test, not the search)."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from brain_graph.auth import Gate, JwtVerifier, TokenIssuer
from brain_graph.core.errors import (
    INTERNAL_MESSAGE,
    BackendUnavailableError,
    CapacityError,
    ConfigurationError,
    InvalidRequestError,
)
from brain_graph.pipeline.services import SearchServices
from brain_graph.serving.mcp import create_mcp_app
from brain_graph.serving.mcp.errors import argument_name
from tests.mcp_client import call, tool_error

SECRET = "mcp-errors-unit-test-secret-0123456789"
SEARCH = {"queryText": "x", "tenantId": "acme"}


class FailingGraph:
    def __init__(self, error: Exception) -> None:
        self.error = error

    async def ainvoke(self, request: dict[str, Any], *, context: Any) -> dict[str, Any]:
        raise self.error


def failing_call(error: Exception) -> str:
    gate = Gate(JwtVerifier(SECRET), None)
    graph = FailingGraph(error)
    app = create_mcp_app(lambda: graph, SearchServices, lambda: gate)
    return tool_error(call(app, TokenIssuer(SECRET).mint("alice", ["acme"]), "brain_search", SEARCH))


@pytest.mark.parametrize(
    ("error", "line"),
    [
        (
            InvalidRequestError("options.maxNodes", "must be at most 1000"),
            "INVALID_REQUEST: invalid request: maxNodes:",
        ),
        (InvalidRequestError("filter.tags", "entry 'a\\nb' bad"), "INVALID_REQUEST: invalid request: tags: entry"),
        (CapacityError("the search needs more memory"), "CAPACITY_EXCEEDED: the search needs more memory"),
    ],
    ids=["option", "filter", "capacity"],
)
def test_the_callers_errors_keep_their_message_under_the_argument_name(error: Exception, line: str) -> None:
    assert failing_call(error).startswith(line)


def test_a_backend_outage_names_the_backend_not_its_address(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="brain_graph.mcp"):
        line = failing_call(BackendUnavailableError("neo4j", "bolt://db-7.internal:7687 refused"))
    assert line == "BACKEND_UNAVAILABLE: neo4j is unavailable; retry later (the server log has the details)"
    assert any("db-7.internal" in record.getMessage() for record in caplog.records)


@pytest.mark.parametrize(
    "error",
    [RuntimeError("/srv/secret/path exploded"), ConfigurationError("BRAIN_GRAPH_X: /srv/secret/path")],
    ids=["bug", "configuration"],
)
def test_anything_else_is_the_generic_internal_error(error: Exception, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.ERROR, logger="brain_graph.mcp"):
        line = failing_call(error)
    assert line == f"INTERNAL_SERVER_ERROR: {INTERNAL_MESSAGE}"
    assert any(record.exc_info and "/srv/secret/path" in str(record.exc_info[1]) for record in caplog.records)


@pytest.mark.parametrize(
    ("field", "argument"),
    [("options.topK", "topK"), ("filter.tenantId", "tenantId"), ("q", "query"), ("cursor", "cursor"), ("a.b", "a.b")],
)
def test_service_fields_are_named_as_the_tools_arguments(field: str, argument: str) -> None:
    assert argument_name(field, {"q": "query"}) == argument
