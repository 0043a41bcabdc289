"""Metrics, request ids and log records on the server's own app, in process: searches through
/graphql (one failing) and graph API reads move the counters and histograms a scrape of
/brain/metrics shows; every response carries a request id that the request's log records carry too;
caller errors a host logs with a traceback become one INFO line."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator

import pytest
from prometheus_client.parser import text_string_to_metric_families
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.routing import Route
from starlette.testclient import TestClient

from brain_graph.auth import Gate, JwtVerifier, TokenIssuer
from brain_graph.core.errors import InvalidRequestError
from brain_graph.graphs.search import NODE_NAMES, BrainSearchGraph
from brain_graph.observability.logs import CallerErrorsAtInfo, configure_logging, formatter
from brain_graph.observability.requests import REQUEST_ID, RequestContextMiddleware, request_id, route_templates
from brain_graph.pipeline.services import SearchServices
from brain_graph.serving import server
from brain_graph.serving.graph_api import graph_api_routes
from brain_graph.serving.graphql import create_graphql_app

SECRET = "metrics-test-secret-of-at-least-32-chars"
SEARCH = '{ brainSearch(queryText: "%s", filter: {tenantId: "acme", secured: false}%s) { hits { nodeId } } }'


@pytest.fixture
def client(example_graph: BrainSearchGraph, example_services: SearchServices) -> Iterator[TestClient]:
    gate = Gate(JwtVerifier(SECRET), None)
    routes = [
        Route("/brain/metrics", server.metrics, methods=["GET"]),
        Route("/graphql", create_graphql_app(lambda: example_graph, lambda: gate), methods=["POST"]),
        *graph_api_routes(lambda: example_services, lambda: gate),
    ]
    app = Starlette(routes=routes, middleware=[Middleware(RequestContextMiddleware, routes=route_templates(routes))])
    with TestClient(app) as test_client:
        test_client.headers["Authorization"] = f"Bearer {TokenIssuer(SECRET).mint('bob', ['acme'])}"
        yield test_client


def samples(client: TestClient) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    response = client.get("/brain/metrics")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain")
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(response.text)
        for sample in family.samples
    }


def moved(before: dict, after: dict, name: str, **labels: str) -> float:
    key = (name, tuple(sorted(labels.items())))
    return after.get(key, 0.0) - before.get(key, 0.0)


def test_searches_steps_backend_calls_and_routes_are_counted(client: TestClient) -> None:
    before = samples(client)
    assert client.post("/graphql", json={"query": SEARCH % ("duplicate charges", "")}).status_code == 200
    failing = client.post("/graphql", json={"query": SEARCH % ("x", ", options: {topK: 5000}")})
    assert failing.json()["errors"]
    assert client.get("/graph/nodes/missing", params={"tenantId": "acme"}).status_code == 404
    after = samples(client)
    assert moved(before, after, "brain_graph_searches_total", outcome="ok") == 1
    assert moved(before, after, "brain_graph_searches_total", outcome="error") == 1
    assert moved(before, after, "brain_graph_search_errors_total", code="INVALID_REQUEST") == 1
    assert moved(before, after, "brain_graph_search_seconds_count") == 2
    for step in NODE_NAMES:
        assert moved(before, after, "brain_graph_step_seconds_count", step=step, backend="embedded", outcome="ok") == 1
    assert (
        moved(before, after, "brain_graph_step_seconds_count", step="embed", backend="embedded", outcome="error") == 1
    )
    for operation in ("seeds", "context"):
        labels = {"backend": "embedded", "operation": operation, "outcome": "ok"}
        assert moved(before, after, "brain_graph_backend_call_seconds_count", **labels) == 1
    route = {"route": "/graphql", "method": "POST"}
    assert moved(before, after, "brain_graph_http_requests_total", **route, status="200") == 1
    assert moved(before, after, "brain_graph_http_requests_total", **route, status="400") == 1
    node_route = {"route": "/graph/nodes/{nodeId}", "method": "GET", "status": "404"}
    assert moved(before, after, "brain_graph_http_requests_total", **node_route) == 1
    assert moved(before, after, "brain_graph_http_request_seconds_count", route="/graphql") == 2


def test_no_label_holds_request_data(client: TestClient) -> None:
    client.get("/graph/nodes/acme:secret-node-id", params={"tenantId": "acme"})
    text = client.get("/brain/metrics").text
    assert "secret-node-id" not in text
    assert "acme" not in text


def test_every_response_carries_a_request_id(client: TestClient) -> None:
    given = client.get("/graph/search", params={"tenantId": "acme", "q": "x"}, headers={"X-Request-ID": "abc-123"})
    assert given.headers["X-Request-ID"] == "abc-123"
    fresh = client.get("/graph/search", params={"tenantId": "acme", "q": "x"}, headers={"X-Request-ID": "a b<script>"})
    assert fresh.headers["X-Request-ID"] != "a b<script>"
    assert len(fresh.headers["X-Request-ID"]) == 32
    other = client.get("/graph/search", params={"tenantId": "acme", "q": "x"})
    assert other.headers["X-Request-ID"] != fresh.headers["X-Request-ID"]


def test_the_servers_app_has_the_metrics_route_and_the_request_ids() -> None:
    with TestClient(server.app) as test_client:
        health = test_client.get("/brain/health", headers={"X-Request-ID": "probe-1"})
        assert health.headers["X-Request-ID"] == "probe-1"
        scrape = test_client.get("/brain/metrics").text
    assert 'brain_graph_http_requests_total{method="GET",route="/brain/health",status="200"}' in scrape


@pytest.mark.parametrize(("header", "kept"), [("req-1", True), ("x" * 128, True), ("x" * 129, False), ("", False)])
def test_request_ids_are_bounded_safe_tokens(header: str, kept: bool) -> None:
    assert (request_id(header) == header) is kept


def test_log_records_carry_the_request_id(client: TestClient, caplog: pytest.LogCaptureFixture) -> None:
    configure_logging(None)
    caplog.set_level(logging.INFO, logger="brain_graph.graph_api")
    client.get("/graph/nodes/missing", params={"tenantId": "acme"}, headers={"X-Request-ID": "trace-42"})
    [record] = [r for r in caplog.records if r.name == "brain_graph.graph_api"]
    assert record.request_id == "trace-42"  # type: ignore[attr-defined]
    assert record.levelno == logging.INFO
    assert record.exc_info is None


def test_caller_errors_a_host_logs_with_a_traceback_become_one_info_line() -> None:
    try:
        raise InvalidRequestError("options.topK", "must be at most 100 (got 5000)")
    except InvalidRequestError:
        record = logging.LogRecord(
            "langgraph_api.worker", logging.ERROR, __file__, 1, "Background run failed", (), None
        )
        import sys

        record.exc_info = sys.exc_info()
    assert CallerErrorsAtInfo().filter(record)
    assert (record.levelno, record.exc_info) == (logging.INFO, None)
    assert record.getMessage() == (
        "request refused: INVALID_REQUEST: invalid request: options.topK: must be at most 100 (got 5000)"
    )
    unexpected = logging.LogRecord("langgraph_api.worker", logging.ERROR, __file__, 1, "boom", (), None)
    unexpected.exc_info = (RuntimeError, RuntimeError("boom"), None)
    assert CallerErrorsAtInfo().filter(unexpected)
    assert unexpected.levelno == logging.ERROR


def test_json_logs_are_one_object_per_line_with_the_request_id() -> None:
    token = REQUEST_ID.set("r-7")
    try:
        configure_logging(None)
        record = logging.getLogRecordFactory()("brain_graph.x", logging.INFO, __file__, 1, "hello\nworld", (), None)
    finally:
        REQUEST_ID.reset(token)
    line = formatter("json").format(record)
    assert "\n" not in line
    fields = json.loads(line)
    assert (fields["request_id"], fields["level"], fields["logger"], fields["message"]) == (
        "r-7",
        "INFO",
        "brain_graph.x",
        "hello\nworld",
    )


def test_an_unknown_log_format_is_refused_naming_the_variable() -> None:
    with pytest.raises(ValueError, match=r"^BRAIN_GRAPH_LOG_FORMAT must be one of text, json"):
        configure_logging("xml")


def test_a_failed_run_event_naming_an_authorization_error_is_rewritten_without_failing() -> None:
    event = {
        "event": "Background run failed. Exception: <class 'brain_graph.core.errors.AuthorizationError'>(no principal)",
        "level": "error",
        "exception": "Traceback (most recent call last): ...",
    }
    record = logging.LogRecord("langgraph_api.worker", logging.ERROR, __file__, 1, event, (), None)  # type: ignore[arg-type]
    assert CallerErrorsAtInfo().filter(record)
    assert record.msg == {"event": "request refused: UNAUTHORIZED: no principal", "level": "info"}
    assert record.levelno == logging.INFO


def test_graphql_logs_a_refused_search_as_one_info_line(client: TestClient, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="brain_graph.graphql")
    response = client.post(
        "/graphql", json={"query": SEARCH % ("x", ", options: {topK: 5000}")}, headers={"X-Request-ID": "gql-bad-1"}
    )
    assert response.json()["errors"]
    [record] = [r for r in caplog.records if r.name == "brain_graph.graphql"]
    assert (record.levelno, record.exc_info, record.request_id) == (logging.INFO, None, "gql-bad-1")  # type: ignore[attr-defined]
    assert record.getMessage().startswith("request refused: BAD_USER_INPUT: invalid request: options.topK")
