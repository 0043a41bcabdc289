"""The graph API over HTTP on the embedded example graph: auth, tenants, ACL, cursors, each error
code and the rate-limit headers (the app's own ASGI stack, in process)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.testclient import TestClient

from brain_graph.auth import Gate, JwtVerifier, TokenIssuer
from brain_graph.auth.rate_limit import RateLimiter, parse_rate_limit
from brain_graph.core.errors import BackendUnavailableError
from brain_graph.pipeline.services import SearchServices
from brain_graph.serving.graph_api import STATUS, graph_api_routes

SECRET = "graph-api-test-secret-of-32-chars!!"
ISSUER = TokenIssuer(SECRET)
CLUSTER = "acme:cluster:duplicate-charges"  # 29 edges in the example graph
SECURED_DOC = "acme:doc:postmortem-oauth-token-refresh-outage"  # acl: group:security, user:alice


def make_client(
    services: Callable[[], SearchServices], *, rate_limit: str | None = None, insecure: bool = False
) -> TestClient:
    item = parse_rate_limit(rate_limit) if rate_limit else None
    gate = Gate(JwtVerifier(SECRET), RateLimiter(item) if item is not None else None, insecure=insecure)
    return TestClient(Starlette(routes=graph_api_routes(services, lambda: gate)))


def bearer(principal: str = "bob", tenants: tuple[str, ...] = ("acme",), **kwargs: Any) -> dict[str, str]:
    return {"Authorization": f"Bearer {ISSUER.mint(principal, tenants, **kwargs)}"}


@pytest.fixture
def client(example_services: SearchServices) -> TestClient:
    return make_client(lambda: example_services, rate_limit="1000/minute")


def test_a_node_with_its_outgoing_relationships(client: TestClient) -> None:
    response = client.get(f"/graph/nodes/{CLUSTER}", params={"tenantId": "acme"}, headers=bearer())
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["node"]["id"] == CLUSTER
    assert body["node"]["labels"] == [body["node"]["type"]]
    assert "acl" not in body["node"]
    assert {rel["direction"] for rel in body["relationships"]} <= {"OUT"}
    assert response.headers["X-RateLimit-Limit"] == "1000"


def test_relationships_all_lists_both_directions_in_key_order(client: TestClient) -> None:
    body = client.get(
        f"/graph/nodes/{CLUSTER}", params={"tenantId": "acme", "relationships": "all", "limit": 100}, headers=bearer()
    ).json()
    keys = [(rel["type"], rel["direction"] == "OUT", rel["target"]["id"]) for rel in body["relationships"]]
    assert keys == sorted(keys)
    assert len(keys) == len(set(keys))
    assert any(not outgoing for _, outgoing, _ in keys)
    assert all(edge_type != "ASSIGNED_TO" for edge_type, _, _ in keys)  # never outside the allowlist


def test_pages_of_neighbours_join_into_the_whole_list_without_duplicates(client: TestClient) -> None:
    whole = client.get(
        f"/graph/nodes/{CLUSTER}/neighbours", params={"tenantId": "acme", "limit": 100}, headers=bearer()
    ).json()
    assert whole["hasMore"] is False
    assert "cursor" not in whole
    pages: list[dict[str, Any]] = []
    params: dict[str, Any] = {"tenantId": "acme", "limit": 4}
    while True:
        page = client.get(f"/graph/nodes/{CLUSTER}/neighbours", params=params, headers=bearer()).json()
        pages.append(page)
        if not page["hasMore"]:
            assert "cursor" not in page
            break
        params["cursor"] = page["cursor"]
    joined = [item for page in pages for item in page["neighbours"]]
    assert joined == whole["neighbours"]
    assert len(whole["neighbours"]) > 4
    assert len(pages) == -(-len(joined) // 4)


def test_secured_nodes_need_a_principal_that_may_see_them(client: TestClient) -> None:
    path = f"/graph/nodes/{SECURED_DOC}"
    hidden = client.get(path, params={"tenantId": "acme"}, headers=bearer("bob"))
    assert (hidden.status_code, hidden.json()["error_code"]) == (404, "GRAPH_NODE_NOT_FOUND")
    public = client.get(path, params={"tenantId": "acme", "secured": "false"}, headers=bearer("alice"))
    assert public.status_code == 404
    seen = client.get(path, params={"tenantId": "acme"}, headers=bearer("alice"))
    assert seen.status_code == 200
    assert seen.json()["node"]["secured"] is True
    by_group = client.get(path, params={"tenantId": "acme"}, headers=bearer("carol", groups=["security"]))
    assert by_group.status_code == 200


def test_secured_neighbours_are_left_out_for_a_caller_who_may_not_see_them(client: TestClient) -> None:
    def neighbour_ids(headers: dict[str, str]) -> set[str]:
        params = {"tenantId": "acme", "limit": 100}
        body = client.get("/graph/nodes/acme:cluster:token-refresh-outage/neighbours", params=params, headers=headers)
        return {item["node"]["id"] for item in body.json()["neighbours"]}

    assert SECURED_DOC in neighbour_ids(bearer("alice")) - neighbour_ids(bearer("bob"))


def test_another_tenants_node_is_not_found_and_an_unlisted_tenant_is_forbidden(client: TestClient) -> None:
    other = client.get(f"/graph/nodes/{CLUSTER}", params={"tenantId": "globex"}, headers=bearer(tenants=("globex",)))
    assert (other.status_code, other.json()["error_code"]) == (404, "GRAPH_NODE_NOT_FOUND")
    forbidden = client.get(f"/graph/nodes/{CLUSTER}", params={"tenantId": "globex"}, headers=bearer())
    assert (forbidden.status_code, forbidden.json()["error_code"]) == (403, "FORBIDDEN")


def test_node_search_finds_nodes_by_words(client: TestClient) -> None:
    body = client.get("/graph/search", params={"tenantId": "acme", "q": "duplicate charges"}, headers=bearer()).json()
    ids = [result["id"] for result in body["results"]]
    assert "acme:doc:runbook-refunding-duplicate-charges" in ids[:5]
    scores = [result["score"] for result in body["results"]]
    assert scores == sorted(scores, reverse=True)
    assert all(score > 0 for score in scores)
    again = client.get("/graph/search", params={"tenantId": "acme", "q": "duplicate charges"}, headers=bearer())
    assert (
        again.content
        == client.get("/graph/search", params={"tenantId": "acme", "q": "duplicate charges"}, headers=bearer()).content
    )
    assert SECURED_DOC not in ids


@pytest.mark.parametrize(
    ("path", "params", "field"),
    [
        (f"/graph/nodes/{CLUSTER}", {"limit": "0"}, "limit"),
        (f"/graph/nodes/{CLUSTER}", {"limit": "101"}, "limit"),
        (f"/graph/nodes/{CLUSTER}", {"limit": "ten"}, "limit"),
        (f"/graph/nodes/{CLUSTER}", {"relationships": "sideways"}, "relationships"),
        (f"/graph/nodes/{CLUSTER}", {"secured": "maybe"}, "secured"),
        (f"/graph/nodes/{CLUSTER}/neighbours", {"direction": "up"}, "direction"),
        (f"/graph/nodes/{CLUSTER}/neighbours", {"cursor": "not-a-cursor"}, "cursor"),
        ("/graph/search", {"q": "   "}, "q"),
        ("/graph/search", {"q": "x" * 2001}, "q"),
        ("/graph/search", {"q": "x", "limit": "-1"}, "limit"),
    ],
)
def test_bad_parameters_are_400_naming_the_parameter(
    client: TestClient, path: str, params: dict[str, str], field: str
) -> None:
    response = client.get(path, params={"tenantId": "acme", **params}, headers=bearer())
    body = response.json()
    assert (response.status_code, body["error_code"]) == (400, "GRAPH_INVALID_PARAMETER")
    assert body["detail"].startswith(f"invalid request: {field}: ")
    assert "\n" not in body["detail"]
    assert "X-RateLimit-Remaining" in response.headers


def test_a_missing_tenant_is_400(client: TestClient) -> None:
    response = client.get(f"/graph/nodes/{CLUSTER}", headers=bearer())
    assert (response.status_code, response.json()["detail"]) == (
        400,
        "invalid request: tenantId: is required: name the tenant",
    )


def test_a_cursor_of_another_node_is_refused(client: TestClient) -> None:
    first = client.get(
        f"/graph/nodes/{CLUSTER}/neighbours", params={"tenantId": "acme", "limit": 1}, headers=bearer()
    ).json()
    other = client.get(
        "/graph/nodes/acme:cluster:relevance-tuning/neighbours",
        params={"tenantId": "acme", "limit": 1, "cursor": first["cursor"]},
        headers=bearer(),
    )
    assert (other.status_code, other.json()["detail"]) == (
        400,
        "invalid request: cursor: was made for another tenant, node or direction",
    )


@pytest.mark.parametrize("authorization", [None, "Bearer not-a-token", "Basic abc"])
def test_requests_without_a_valid_token_are_401(client: TestClient, authorization: str | None) -> None:
    headers = {"Authorization": authorization} if authorization else {}
    response = client.get(f"/graph/nodes/{CLUSTER}", params={"tenantId": "acme"}, headers=headers)
    assert (response.status_code, response.json()["error_code"]) == (401, "UNAUTHENTICATED")
    assert response.headers["WWW-Authenticate"] == "Bearer"


def test_insecure_mode_without_a_token_sees_public_items_only(example_services: SearchServices) -> None:
    client = make_client(lambda: example_services, insecure=True)
    public = client.get(f"/graph/nodes/{CLUSTER}", params={"tenantId": "acme", "secured": "false"})
    assert public.status_code == 200
    secured = client.get(f"/graph/nodes/{CLUSTER}", params={"tenantId": "acme"})  # no principal: fail closed
    assert (secured.status_code, secured.json()["error_code"]) == (403, "UNAUTHORIZED")


def test_over_the_rate_limit_is_429_with_retry_after(example_services: SearchServices) -> None:
    client = make_client(lambda: example_services, rate_limit="2/minute")
    headers = bearer("dave")
    statuses = [client.get("/graph/search", params={"tenantId": "acme", "q": "x"}, headers=headers) for _ in range(3)]
    assert [response.status_code for response in statuses] == [200, 200, 429]
    refused = statuses[-1]
    assert refused.json()["error_code"] == "RATE_LIMITED"
    assert int(refused.headers["Retry-After"]) >= 1
    assert refused.headers["X-RateLimit-Remaining"] == "0"


def test_a_backend_that_is_down_is_503() -> None:
    def down() -> SearchServices:
        raise BackendUnavailableError("neo4j", "connection refused")

    client = make_client(down)
    response = client.get(f"/graph/nodes/{CLUSTER}", params={"tenantId": "acme"}, headers=bearer())
    assert (response.status_code, response.json()) == (
        503,
        {"detail": "neo4j unavailable: connection refused", "error_code": "BACKEND_UNAVAILABLE"},
    )


def test_every_error_code_has_one_status() -> None:
    assert STATUS["GRAPH_NODE_NOT_FOUND"] == 404
    assert STATUS["BACKEND_UNAVAILABLE"] == 503


def test_a_node_with_more_neighbours_than_the_bound_is_refused(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("brain_graph.stores.browse.MAX_BROWSED_NEIGHBOURS", 3)  # the cluster has 29
    for path in (f"/graph/nodes/{CLUSTER}", f"/graph/nodes/{CLUSTER}/neighbours"):
        response = client.get(path, params={"tenantId": "acme"}, headers=bearer())
        assert (response.status_code, response.json()["error_code"]) == (400, "GRAPH_NODE_TOO_CONNECTED")
    small = client.get(
        "/graph/nodes/acme:signal:edge-proxy-tls/neighbours", params={"tenantId": "acme"}, headers=bearer()
    )
    assert small.status_code == 200  # 2 neighbours: within the bound
