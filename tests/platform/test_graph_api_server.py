"""The graph API through a real ``langgraph dev`` server (the repository's langgraph.json, bearer
tokens): the routes answer on the server's custom app, pages join into the whole list, secured nodes
need a principal that may see them, and one rate-limit budget is shared with /graphql."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from brain_graph.auth import TokenIssuer
from tests.platform.devserver import REPO_ROOT, DevServer, run_dev_server

pytestmark = pytest.mark.server

SECRET = "graph-api-server-test-secret-0123456789abcdef"
CLUSTER = "acme:cluster:duplicate-charges"
SECURED_DOC = "acme:doc:postmortem-oauth-token-refresh-outage"


def token(principal: str, **kwargs: Any) -> dict[str, str]:
    return {"Authorization": f"Bearer {TokenIssuer(SECRET).mint(principal, ['acme'], **kwargs)}"}


@pytest.fixture(scope="module")
def server(brain_home: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevServer]:
    env = {
        "BRAIN_GRAPH_HOME": str(brain_home),
        "BRAIN_GRAPH_AUTH_SECRET": SECRET,
        "BRAIN_GRAPH_RATE_LIMIT": "1000 per 60 seconds",
    }
    with run_dev_server(REPO_ROOT / "langgraph.json", tmp_path_factory.mktemp("graph-api"), env) as running:
        yield running


def get(server: DevServer, path: str, headers: dict[str, str], **params: Any) -> httpx.Response:
    return httpx.get(f"{server.url}{path}", params={"tenantId": "acme", **params}, headers=headers, timeout=60)


def test_pages_of_neighbours_join_into_the_whole_list(server: DevServer) -> None:
    headers = token("bob")
    whole = get(server, f"/graph/nodes/{CLUSTER}/neighbours", headers, limit=100).json()["neighbours"]
    joined, cursor = [], None
    while True:
        params = {"limit": 5, **({"cursor": cursor} if cursor else {})}
        page = get(server, f"/graph/nodes/{CLUSTER}/neighbours", headers, **params).json()
        joined += page["neighbours"]
        if (cursor := page.get("cursor")) is None:
            break
    assert joined == whole
    assert len(whole) > 5


def test_a_secured_node_needs_a_principal_that_may_see_it(server: DevServer) -> None:
    hidden = get(server, f"/graph/nodes/{SECURED_DOC}", token("bob"))
    assert (hidden.status_code, hidden.json()["error_code"]) == (404, "GRAPH_NODE_NOT_FOUND")
    seen = get(server, f"/graph/nodes/{SECURED_DOC}", token("alice"), relationships="all")
    assert seen.status_code == 200
    assert seen.json()["node"]["id"] == SECURED_DOC


def test_node_search_and_the_error_model(server: DevServer) -> None:
    found = get(server, "/graph/search", token("bob"), q="refund duplicate charges")
    assert found.status_code == 200
    assert found.json()["results"]
    bad = get(server, "/graph/search", token("bob"), q="x", limit=1000)
    assert bad.status_code == 400
    assert bad.json() == {
        "detail": "invalid request: limit: must be an integer from 1 to 100 (got 1000)",
        "error_code": "GRAPH_INVALID_PARAMETER",
    }
    anonymous = get(server, "/graph/search", {}, q="x")
    assert (anonymous.status_code, anonymous.json()["error_code"]) == (401, "UNAUTHENTICATED")


def test_one_rate_limit_budget_with_graphql(server: DevServer) -> None:
    headers = token("carol")
    first = get(server, f"/graph/nodes/{CLUSTER}", headers)
    query = {"query": '{ brainSearch(queryText: "x", filter: {tenantId: "acme", secured: false}) { hits { nodeId } } }'}
    graphql = httpx.post(f"{server.url}/graphql", json=query, headers=headers, timeout=60)
    second = get(server, f"/graph/nodes/{CLUSTER}", headers)
    remaining = [int(r.headers["X-RateLimit-Remaining"]) for r in (first, graphql, second)]
    assert remaining == [remaining[0], remaining[0] - 1, remaining[0] - 2]
