"""The standalone /graphql ASGI app without a server: no websocket way around the token check, a
request without credentials never reaches the graph (unless insecure mode is on), and each error code
answers with its HTTP status."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from starlette.testclient import TestClient
from starlette.websockets import WebSocketDisconnect

from brain_graph.auth import Gate, JwtVerifier, TokenIssuer
from brain_graph.core.errors import (
    INTERNAL_MESSAGE,
    AuthorizationError,
    BackendUnavailableError,
    CapacityError,
    ConfigurationError,
    ForbiddenError,
    InvalidRequestError,
    RateLimitedError,
)
from brain_graph.serving.graphql import create_graphql_app
from brain_graph.serving.graphql.errors import CODES, HTTP_STATUS, http_status

SECRET = "unit-test-secret-of-at-least-32-chars"
QUERY = '{ brainSearch(queryText: "x", filter: {tenantId: "acme", secured: null}) { hits { nodeId } } }'


class RecordingGraph:
    """A stand-in graph recording what the resolver sends (pure logic under test: the HTTP layer)."""

    def __init__(self) -> None:
        self.calls: list[tuple[dict[str, Any], Any]] = []

    async def ainvoke(self, request: dict[str, Any], *, context: Any) -> dict[str, Any]:
        self.calls.append((request, context))
        return {"hits": []}


def client(graph: RecordingGraph, *, insecure: bool = False) -> TestClient:
    gate = Gate(JwtVerifier(SECRET), None, insecure=insecure)
    return TestClient(create_graphql_app(lambda: graph, lambda: gate))


def test_websockets_are_closed() -> None:
    graph = RecordingGraph()
    with pytest.raises(WebSocketDisconnect) as closed:  # noqa: SIM117 - connecting is what is refused
        with client(graph).websocket_connect("/", subprotocols=["graphql-ws"]) as ws:
            ws.send_json({"type": "connection_init"})
    assert closed.value.code == 1008
    assert graph.calls == []


def test_a_request_without_a_token_never_reaches_the_graph() -> None:
    graph = RecordingGraph()
    response = client(graph).post("/", json={"query": QUERY})
    assert response.status_code == 401
    assert response.json()["errors"][0]["extensions"]["code"] == "UNAUTHENTICATED"
    assert graph.calls == []


def test_nulls_mean_not_given_so_defaults_apply() -> None:
    graph = RecordingGraph()
    bearer = TokenIssuer(SECRET).mint("alice", ["acme"])
    response = client(graph).post("/", json={"query": QUERY}, headers={"Authorization": f"Bearer {bearer}"})
    assert response.status_code == 200, response.text
    request, context = graph.calls[0]
    assert request["filter"] == {"tenantId": "acme"}  # secured: null dropped, the graph applies true
    assert context.principal.principal_id == "alice"


def test_insecure_mode_runs_without_a_principal() -> None:
    graph = RecordingGraph()
    assert client(graph, insecure=True).post("/", json={"query": QUERY}).status_code == 200
    assert graph.calls[0][1].principal is None


VARIABLE_QUERY = 'query($f: BrainSearchFilterInput!) { brainSearch(queryText: "x", filter: $f) { hits { nodeId } } }'


@pytest.mark.parametrize(
    ("body", "code"),
    [
        ({"query": VARIABLE_QUERY, "variables": {"f": {"tenantId": None}}}, "TENANT_REQUIRED"),
        ({"query": VARIABLE_QUERY, "variables": {"f": {}}}, "TENANT_REQUIRED"),
        ({"query": '{ brainSearch(queryText: "x", filter: {tenantId: null}) { hits { nodeId } } }'}, "TENANT_REQUIRED"),
        ({"query": '{ brainSearch(queryText: "x", filter: {}) { hits { nodeId } } }'}, "TENANT_REQUIRED"),
        ({"query": '{ brainSearch(queryText: "x", filter: {tenantId: ""}) { hits { nodeId } } }'}, "TENANT_REQUIRED"),
        ({"query": VARIABLE_QUERY, "variables": {"f": {"tenantId": "acme", "secured": "yes"}}}, "BAD_USER_INPUT"),
        ({"query": '{ brainSearch(queryText: null, filter: {tenantId: "a"}) { hits { nodeId } } }'}, "BAD_USER_INPUT"),
        ({"query": "{ brainSearch("}, "BAD_USER_INPUT"),
    ],
    ids=["null-var", "missing-var", "null-literal", "missing-literal", "empty", "bad-bool", "null-query", "syntax"],
)
def test_document_errors_have_stable_codes(body: dict[str, Any], code: str) -> None:
    graph = RecordingGraph()
    bearer = TokenIssuer(SECRET).mint("alice", ["acme"])
    response = client(graph).post("/", json=body, headers={"Authorization": f"Bearer {bearer}"})
    errors = response.json()["errors"]
    assert [error["extensions"]["code"] for error in errors] == [code]
    assert graph.calls == []


def test_a_misconfigured_gate_is_a_generic_500_with_the_detail_in_the_log(caplog: pytest.LogCaptureFixture) -> None:
    secret_path = "/etc/brain-graph/keys/public.pem"

    def broken_gate() -> Gate:
        raise ConfigurationError(f"BRAIN_GRAPH_AUTH_PUBLIC_KEY_FILE: cannot read {secret_path}")

    graph = RecordingGraph()
    app = TestClient(create_graphql_app(lambda: graph, broken_gate))
    with caplog.at_level(logging.ERROR, logger="brain_graph.graphql"):
        response = app.post("/", json={"query": QUERY})
    assert response.status_code == 500
    error = response.json()["errors"][0]
    assert (error["message"], error["extensions"]["code"]) == (INTERNAL_MESSAGE, "INTERNAL_SERVER_ERROR")
    assert secret_path not in response.text
    assert any(secret_path in record.getMessage() for record in caplog.records)
    assert graph.calls == []


class FailingGraph:
    """A stand-in graph failing with ``error`` (the HTTP layer under test, not the search)."""

    def __init__(self, error: Exception) -> None:
        self.error = error

    async def ainvoke(self, request: dict[str, Any], *, context: Any) -> dict[str, Any]:
        raise self.error


@pytest.mark.parametrize(
    ("error", "code", "status"),
    [
        (InvalidRequestError("options.topK", "must be at most 100"), "BAD_USER_INPUT", 400),
        (CapacityError("the search needs more memory than Neo4j grants one transaction"), "CAPACITY_EXCEEDED", 400),
        (AuthorizationError("a secured search needs a principal"), "UNAUTHENTICATED", 401),
        (ForbiddenError("the token does not name tenant 'globex'"), "FORBIDDEN", 403),
        (RateLimitedError("rate limit of 3 requests per 60 s reached", retry_after=7), "RATE_LIMITED", 429),
        (RuntimeError("a bug"), "INTERNAL_SERVER_ERROR", 500),
        (BackendUnavailableError("neo4j", "connection refused by 10.0.0.7:7687"), "BACKEND_UNAVAILABLE", 503),
    ],
    ids=["invalid", "capacity", "unauthenticated", "forbidden", "rate-limited", "internal", "backend-down"],
)
def test_each_error_code_has_its_http_status(error: Exception, code: str, status: int) -> None:
    bearer = TokenIssuer(SECRET).mint("alice", ["acme"])
    gate = Gate(JwtVerifier(SECRET), None)
    app = TestClient(create_graphql_app(lambda: FailingGraph(error), lambda: gate))
    response = app.post("/", json={"query": QUERY}, headers={"Authorization": f"Bearer {bearer}"})
    assert response.status_code == status, response.text
    body = response.json()
    assert body["data"] is None
    assert [failure["extensions"]["code"] for failure in body["errors"]] == [code]
    assert ("WWW-Authenticate" in response.headers) == (status == 401)
    assert response.headers.get("Retry-After") == ("7" if status == 429 else None)
    assert "10.0.0.7" not in response.text


def test_the_status_table_covers_every_code_and_the_most_severe_wins() -> None:
    assert set(HTTP_STATUS) == set(CODES)
    assert http_status(["BAD_USER_INPUT", "TENANT_REQUIRED"]) == 400
    assert http_status(["BAD_USER_INPUT", "BACKEND_UNAVAILABLE"]) == 503
    assert http_status(["SOMETHING_ELSE"]) == 400
