"""``GET /brain/ready`` on Neo4j + Weaviate: 200 while both servers answer, 503 naming the one that does
not. The servers stay up (others use them): the "down" one is the backend pointed at a port nobody
listens on."""

from __future__ import annotations

from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.routing import Route
from starlette.testclient import TestClient

from brain_graph.pipeline.services import SearchServices
from brain_graph.serving.server import readiness_endpoint
from brain_graph.stores.neo4j_weaviate.backend import Neo4jWeaviateBackend
from tests.helpers import closed_port
from tests.integration.servers import server_backend

pytestmark = pytest.mark.integration

CLOSED: dict[str, dict[str, Any]] = {
    "none": {},
    "neo4j": {"neo4j_uri": "bolt://127.0.0.1:{port}"},
    "weaviate": {"weaviate_http_port": "{port}", "weaviate_grpc_port": "{port}"},
}


def backend_with(down: str) -> Neo4jWeaviateBackend:
    """A backend on the real servers, but for ``down``, pointed at a closed port."""
    port = closed_port()
    overrides = {name: value.format(port=port) for name, value in CLOSED[down].items()}
    return server_backend(timeout_s=3.0, **overrides)


def ready_answer(down: str) -> tuple[int, dict[str, Any]]:
    """The status and body of ``/brain/ready`` over :func:`backend_with` ``down``."""
    backend = backend_with(down)
    services = SearchServices(backend=backend)
    app = Starlette(routes=[Route("/brain/ready", readiness_endpoint(lambda: services, timeout_s=30.0))])
    try:
        response = TestClient(app).get("/brain/ready")
    finally:
        backend.close()
    return response.status_code, response.json()


def test_both_servers_answering_is_ready() -> None:
    assert ready_answer("none") == (200, {"status": "ready", "backends": {"neo4j": "ready", "weaviate": "ready"}})


@pytest.mark.parametrize(("down", "up"), [("neo4j", "weaviate"), ("weaviate", "neo4j")])
def test_a_server_that_is_down_is_503_naming_it(down: str, up: str) -> None:
    status, body = ready_answer(down)
    assert status == 503
    assert body == {"status": "unavailable", "backends": {down: "unavailable", up: "ready"}, "unavailable": [down]}
