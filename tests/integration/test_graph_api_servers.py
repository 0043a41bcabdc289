"""The graph API on real Neo4j + Weaviate: the same answers as the embedded store for every node of
the parity dataset (relationships, every page of neighbours, node search), the HTTP routes over the
server backend, and 503 when Neo4j cannot be reached."""

from __future__ import annotations

from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.testclient import TestClient

from brain_graph.auth import Gate, JwtVerifier, TokenIssuer
from brain_graph.browse.service import browse_scope, neighbour_page, node_search, node_view
from brain_graph.core.security import Principal
from brain_graph.pipeline.services import SearchServices
from brain_graph.serving.graph_api import graph_api_routes
from tests.helpers import closed_port
from tests.integration.conftest import Loaded
from tests.integration.servers import server_backend

pytestmark = pytest.mark.integration
SECRET = "graph-api-servers-secret-of-32-chars"
PRINCIPALS = [None, Principal("alice", ("security",))]


def every_page(services: SearchServices, scope: Any, node_id: str) -> list[dict[str, Any]]:
    pages, cursor = [], None
    while True:
        page = neighbour_page(services, scope, node_id, direction="all", limit=7, cursor=cursor)
        pages.append(page)
        cursor = page.get("cursor")
        if cursor is None:
            return pages


@pytest.mark.parametrize("principal", PRINCIPALS, ids=["public", "alice"])
def test_both_backends_answer_the_same_for_every_node(loaded: Loaded, principal: Principal | None) -> None:
    for tenant in loaded.tenants:
        scopes = [
            browse_scope(s, tenant, secured=principal is not None, principal=principal)
            for s in (loaded.embedded, loaded.server)
        ]
        node_ids = sorted(node.id for node in loaded.dataset.nodes if node.tenant_id == tenant)
        for node_id in node_ids:
            answers = []
            for services, scope in zip((loaded.embedded, loaded.server), scopes, strict=True):
                try:
                    answers.append(
                        (node_view(services, scope, node_id, relationships="all"), every_page(services, scope, node_id))
                    )
                except LookupError as error:  # not visible: the same on both
                    answers.append(("not found", str(error)))
            assert answers[0] == answers[1], node_id
        for words in ("duplicate charges", "token refresh outage", "retry idempotency design"):
            assert node_search(loaded.embedded, scopes[0], words) == node_search(loaded.server, scopes[1], words)


def test_the_http_routes_over_the_server_backend(loaded: Loaded) -> None:
    tenant = loaded.tenants[0]
    gate = Gate(JwtVerifier(SECRET), None)
    client = TestClient(Starlette(routes=graph_api_routes(lambda: loaded.server, lambda: gate)))
    token = TokenIssuer(SECRET).mint("alice", [tenant], groups=["security"])
    node_id = sorted(node.id for node in loaded.dataset.nodes if node.tenant_id == tenant and not node.secured)[0]
    response = client.get(
        f"/graph/nodes/{node_id}", params={"tenantId": tenant}, headers={"Authorization": f"Bearer {token}"}
    )
    assert response.status_code == 200
    assert response.json()["node"]["id"] == node_id
    missing = client.get(
        "/graph/nodes/no-such-node", params={"tenantId": tenant}, headers={"Authorization": f"Bearer {token}"}
    )
    assert (missing.status_code, missing.json()["error_code"]) == (404, "GRAPH_NODE_NOT_FOUND")


def test_neo4j_down_is_503_naming_it(loaded: Loaded) -> None:
    backend = server_backend(timeout_s=2.0, neo4j_uri=f"bolt://127.0.0.1:{closed_port()}")
    try:
        services = SearchServices(backend=backend)
        gate = Gate(JwtVerifier(SECRET), None)
        client = TestClient(Starlette(routes=graph_api_routes(lambda: services, lambda: gate)))
        tenant = loaded.tenants[0]
        token = TokenIssuer(SECRET).mint("alice", [tenant])
        response = client.get(
            "/graph/nodes/x", params={"tenantId": tenant}, headers={"Authorization": f"Bearer {token}"}
        )
        assert (response.status_code, response.json()["error_code"]) == (503, "BACKEND_UNAVAILABLE")
        assert response.json()["detail"].startswith("neo4j unavailable")
    finally:
        backend.close()
