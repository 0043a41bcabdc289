"""The HTTP metrics' labels stay bounded whatever a caller sends: any method outside the standard ones
is counted as ``other``, any path outside brain-graph's routes is not counted."""

from __future__ import annotations

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route
from starlette.testclient import TestClient

from brain_graph.observability.metrics import REGISTRY
from brain_graph.observability.requests import RequestContextMiddleware, route_templates


def echo(request: Request) -> PlainTextResponse:
    return PlainTextResponse(request.method)


def test_unknown_methods_are_one_label_and_unknown_paths_none() -> None:
    routes = [Route("/brain/labels-probe", echo, methods=["GET", "BREW", "MKCOL"])]
    app = Starlette(routes=routes, middleware=[Middleware(RequestContextMiddleware, routes=route_templates(routes))])
    client = TestClient(app)

    def count(method: str) -> float:
        labels = {"route": "/brain/labels-probe", "method": method, "status": "200"}
        return REGISTRY.get_sample_value("brain_graph_http_requests_total", labels) or 0.0

    before = {method: count(method) for method in ("GET", "other", "BREW", "MKCOL")}
    assert client.request("BREW", "/brain/labels-probe").text == "BREW"
    assert client.request("MKCOL", "/brain/labels-probe").text == "MKCOL"
    assert client.get("/brain/labels-probe").status_code == 200
    assert client.request("BREW", "/no/such/route").status_code == 404
    after = {method: count(method) for method in before}
    assert {method: after[method] - before[method] for method in before} == {
        "GET": 1,
        "other": 2,
        "BREW": 0,
        "MKCOL": 0,
    }
    scraped = REGISTRY.get_sample_value(
        "brain_graph_http_requests_total", {"route": "other", "method": "other", "status": "404"}
    )
    assert scraped is None
