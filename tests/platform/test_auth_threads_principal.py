"""Threads and runs belong to the whole principal of the token that created them (``sub`` with its
tenants and groups), on a `langgraph dev` server with the repository's langgraph.json: a token for
the same ``sub`` with other tenants or fewer groups cannot read or run on them; and a token whose
time claims are not numbers is a 401, never a 500."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import jwt
import pytest

from brain_graph.auth import TokenIssuer
from brain_graph.graphs.search import GRAPH_NAME
from tests.platform.cases import SECURED_POSTMORTEM
from tests.platform.devserver import REPO_ROOT, DevServer, run_dev_server

pytestmark = pytest.mark.server

SECRET = "auth-threads-test-secret-0123456789abcdef"
ISSUER = TokenIssuer(SECRET)
SECURED = {"queryText": "token refresh outage postmortem", "filter": {"tenantId": "acme", "secured": True}}

PRINCIPALS: dict[str, tuple[str, list[str], list[str]]] = {  # kind: (sub, tenants, groups)
    "acme": ("alice", ["acme"], ["security"]),
    "other-tenant": ("alice", ["globex"], []),  # same sub, another tenant, no groups
    "no-group": ("alice", ["acme"], []),  # same sub and tenant, down-scoped: no 'security' group
    "wider": ("alice", ["acme", "globex"], ["security"]),  # another tenant list
    "bob": ("bob", ["acme"], []),
}


def bearer(kind: str) -> str:
    """A token of the principal ``kind`` names, issued now (right before the request it is sent with)."""
    subject, tenants, groups = PRINCIPALS[kind]
    return ISSUER.mint(subject, tenants, groups=groups)


@pytest.fixture(scope="module")
def server(brain_home: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevServer]:
    env = {"BRAIN_GRAPH_HOME": str(brain_home), "BRAIN_GRAPH_AUTH_SECRET": SECRET, "BRAIN_GRAPH_RATE_LIMIT": "off"}
    with run_dev_server(REPO_ROOT / "langgraph.json", tmp_path_factory.mktemp("auth-threads"), env) as running:
        yield running


def call(server: DevServer, token: str, method: str, path: str, body: Any = None) -> httpx.Response:
    headers = {"Authorization": f"Bearer {token}"}
    return httpx.request(method, f"{server.url}{path}", json=body, headers=headers, timeout=60)


def passage_ids(state: dict[str, Any]) -> list[str]:
    return [passage["sourceNodeId"] for passage in state["values"].get("passages", [])]


@pytest.fixture(scope="module")
def acme_thread(server: DevServer) -> str:
    """A thread of the acme token holding a secured search's result."""
    acme = bearer("acme")
    thread_id = str(call(server, acme, "POST", "/threads", {}).json()["thread_id"])
    run = call(server, acme, "POST", f"/threads/{thread_id}/runs/wait", {"assistant_id": GRAPH_NAME, "input": SECURED})
    assert run.status_code == 200, run.text
    assert SECURED_POSTMORTEM in [hit["nodeId"] for hit in run.json()["hits"]]
    return thread_id


def test_the_creating_token_and_a_fresh_one_for_the_same_principal_use_the_thread(
    server: DevServer, acme_thread: str
) -> None:
    renewed = ISSUER.mint("alice", ["acme"], groups=["security"], scopes=("maintainer",), ttl_s=600)
    for token in (bearer("acme"), renewed):
        thread = call(server, token, "GET", f"/threads/{acme_thread}")
        assert thread.status_code == 200
        assert thread.json()["metadata"]["owner"] == "alice"
        assert SECURED_POSTMORTEM in passage_ids(call(server, token, "GET", f"/threads/{acme_thread}/state").json())
        assert call(server, token, "POST", f"/threads/{acme_thread}/history", {}).status_code == 200
        assert call(server, token, "GET", f"/threads/{acme_thread}/runs").json()
        found = call(server, token, "POST", "/threads/search", {"limit": 100}).json()
        assert acme_thread in [item["thread_id"] for item in found]
    copy = call(server, bearer("acme"), "POST", f"/threads/{acme_thread}/copy")
    assert copy.status_code == 200
    copied_state = call(server, bearer("acme"), "GET", f"/threads/{copy.json()['thread_id']}/state").json()
    assert SECURED_POSTMORTEM in passage_ids(copied_state)


@pytest.mark.parametrize("kind", ["other-tenant", "no-group", "wider", "bob"])
def test_another_principal_for_the_same_sub_cannot_reach_the_thread(
    server: DevServer, acme_thread: str, kind: str
) -> None:
    token = bearer(kind)
    assert call(server, token, "GET", f"/threads/{acme_thread}").status_code == 404
    state = call(server, token, "GET", f"/threads/{acme_thread}/state")
    assert state.status_code == 404
    assert SECURED_POSTMORTEM not in state.text
    history = call(server, token, "POST", f"/threads/{acme_thread}/history", {})
    assert history.status_code == 404
    assert SECURED_POSTMORTEM not in history.text
    runs = call(server, token, "GET", f"/threads/{acme_thread}/runs")
    assert runs.status_code == 404 or runs.json() == []
    assert call(server, token, "POST", f"/threads/{acme_thread}/copy").status_code == 409  # the server's "not found"
    assert call(server, token, "PATCH", f"/threads/{acme_thread}", {"metadata": {"x": 1}}).status_code == 404
    found = call(server, token, "POST", "/threads/search", {"limit": 100}).json()
    assert acme_thread not in [item["thread_id"] for item in found]
    public = {"assistant_id": GRAPH_NAME, "input": {**SECURED, "filter": {"tenantId": "acme", "secured": False}}}
    assert call(server, token, "POST", f"/threads/{acme_thread}/runs/wait", public).status_code == 404
    assert call(server, token, "DELETE", f"/threads/{acme_thread}").status_code == 404
    assert call(server, bearer("acme"), "GET", f"/threads/{acme_thread}").status_code == 200  # still there, unchanged


def test_ownership_metadata_cannot_be_claimed(server: DevServer, acme_thread: str) -> None:
    acme, globex = bearer("acme"), bearer("other-tenant")
    stolen = call(server, acme, "GET", f"/threads/{acme_thread}").json()["metadata"]
    forged = call(server, globex, "POST", "/threads", {"metadata": stolen}).json()
    assert forged["metadata"]["owner_principal"] != stolen["owner_principal"]
    assert call(server, acme, "GET", f"/threads/{forged['thread_id']}").status_code == 404
    patched = call(server, globex, "PATCH", f"/threads/{forged['thread_id']}", {"metadata": stolen})
    assert patched.json()["metadata"]["owner_principal"] == forged["metadata"]["owner_principal"]
    assert call(server, acme, "GET", f"/threads/{forged['thread_id']}").status_code == 404


@pytest.mark.parametrize(
    "changes",
    [{"iat": "1700000000"}, {"exp": "9999999999"}, {"nbf": "0"}, {"iat": True}],  # refused for their type
    ids=["iat", "exp", "nbf", "bool"],
)
def test_time_claims_that_are_not_numbers_are_a_401(server: DevServer, changes: dict[str, Any]) -> None:
    now = int(time.time())  # right before the requests: valid for ten minutes but for the claim changed
    claims = {"sub": "alice", "tenants": ["acme"], "iat": now, "exp": now + 600, "iss": "brain-graph"}
    token = jwt.encode({**claims, "aud": "brain-graph", **changes}, SECRET, algorithm="HS256")
    run = call(server, token, "POST", "/runs/wait", {"assistant_id": GRAPH_NAME, "input": SECURED})
    assert run.status_code == 401
    assert "must be a number" in run.json()["detail"]
    query = {"query": '{ brainSearch(queryText: "x", filter: {tenantId: "acme"}) { hits { nodeId } } }'}
    graphql = call(server, token, "POST", "/graphql", query)
    assert graphql.status_code == 401
    assert graphql.json()["errors"][0]["extensions"]["code"] == "UNAUTHENTICATED"
    assert "TypeError" not in server.log()  # the verifier never crashes on a claim's type
