"""Principal over HTTP on a server with custom auth: it comes from the credentials, never from the
request; the agent cortex served alongside passes it to its brain_search subgraph."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from brain_graph.graphs.search import GRAPH_NAME, BrainSearchGraph
from tests.platform.cases import ALICE, SECURED_POSTMORTEM, canonical, in_process
from tests.platform.devserver import REPO_ROOT, DevServer, run_dev_server

pytestmark = pytest.mark.server

SECURED = {"queryText": "token refresh postmortem", "filter": {"tenantId": "acme", "secured": True}}
SECURITY_REVIEW = "acme:doc:security-review-sso"


@pytest.fixture(scope="module")
def auth_server(brain_home: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevServer]:
    """``langgraph dev`` with custom auth (tests/platform/auth_app.py) serving brain_search and the
    example cortex."""
    workdir = tmp_path_factory.mktemp("langgraph-auth")
    config = {
        "dependencies": ["."],
        "graphs": {GRAPH_NAME: "brain_graph.serving.server:make_graph", "cortex": "examples.cortex.graph:make_graph"},
        "http": {"app": "brain_graph.serving.server:app"},
        "auth": {"path": "tests.platform.auth_app:auth"},
        "env": {},
    }
    (workdir / "langgraph.json").write_text(json.dumps(config), encoding="utf-8")
    env = {"BRAIN_GRAPH_HOME": str(brain_home), "PYTHONPATH": str(REPO_ROOT)}
    with run_dev_server(workdir / "langgraph.json", workdir, env) as server:
        yield server


def _wait(server: DevServer, token: str | None, body: dict[str, Any]) -> httpx.Response:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return httpx.post(f"{server.url}/runs/wait", json=body, headers=headers, timeout=60)


def _hit_ids(result: dict[str, Any]) -> list[str]:
    return [hit["nodeId"] for hit in result["hits"]]


def test_requests_without_valid_credentials_are_refused(auth_server: DevServer) -> None:
    body = {"assistant_id": GRAPH_NAME, "input": SECURED}
    assert _wait(auth_server, None, body).status_code == 401
    assert _wait(auth_server, "forged-token", body).status_code == 401


def test_the_principal_comes_from_the_token(auth_server: DevServer, home_graph: BrainSearchGraph) -> None:
    response = _wait(auth_server, "alice-token", {"assistant_id": GRAPH_NAME, "input": SECURED})
    assert response.status_code == 200
    assert canonical(response.json()) == canonical(in_process(home_graph, SECURED, ALICE))
    assert SECURED_POSTMORTEM in _hit_ids(response.json())


def test_group_permissions_count_as_groups(auth_server: DevServer, home_graph: BrainSearchGraph) -> None:
    response = _wait(auth_server, "carol-token", {"assistant_id": GRAPH_NAME, "input": SECURED})
    expected = in_process(home_graph, SECURED, {"principalId": "carol", "groups": ["security"]})
    assert canonical(response.json()) == canonical(expected)
    assert SECURITY_REVIEW in _hit_ids(response.json())


def test_a_user_outside_the_acl_does_not_see_secured_items(auth_server: DevServer) -> None:
    result = _wait(auth_server, "bob-token", {"assistant_id": GRAPH_NAME, "input": SECURED}).json()
    assert SECURED_POSTMORTEM not in _hit_ids(result)
    assert SECURITY_REVIEW not in _hit_ids(result)


def test_a_context_principal_cannot_impersonate_another_user(auth_server: DevServer) -> None:
    body = {"assistant_id": GRAPH_NAME, "input": SECURED, "context": {"principal": ALICE}}
    error = _wait(auth_server, "bob-token", body).json()["__error__"]
    assert error["error"] == "AuthorizationError"


def test_a_context_principal_cannot_add_groups(auth_server: DevServer, home_graph: BrainSearchGraph) -> None:
    claimed = {"principalId": "bob", "groups": ["security"]}
    body = {"assistant_id": GRAPH_NAME, "input": SECURED, "context": {"principal": claimed}}
    result = _wait(auth_server, "bob-token", body).json()
    assert canonical(result) == canonical(in_process(home_graph, SECURED, {"principalId": "bob"}))
    assert SECURED_POSTMORTEM not in _hit_ids(result)


def test_the_local_studio_bypass_gets_no_principal(auth_server: DevServer) -> None:
    """``langgraph dev`` lets Studio in with ``x-auth-scheme: langsmith`` and no credentials, as an
    unauthenticated studio user: it may not claim a principal, and secured searches fail closed."""
    studio = {"x-auth-scheme": "langsmith"}
    for extra in ({}, {"context": {"principal": ALICE}}):
        body = {"assistant_id": GRAPH_NAME, "input": SECURED, **extra}
        response = httpx.post(f"{auth_server.url}/runs/wait", json=body, headers=studio, timeout=60)
        assert response.json()["__error__"]["error"] == "AuthorizationError"
    public = {"assistant_id": GRAPH_NAME, "input": {**SECURED, "filter": {"tenantId": "acme", "secured": False}}}
    response = httpx.post(f"{auth_server.url}/runs/wait", json=public, headers=studio, timeout=60)
    assert SECURED_POSTMORTEM not in _hit_ids(response.json())


def test_the_cortex_passes_the_authenticated_principal_to_brain_search(auth_server: DevServer) -> None:
    cortex_input = {
        "messages": [{"role": "user", "content": "What does the token refresh postmortem say?"}],
        "filter": {"tenantId": "acme", "secured": True},
        "options": {"topK": 5},
    }
    alice = _wait(auth_server, "alice-token", {"assistant_id": "cortex", "input": cortex_input}).json()
    assert SECURED_POSTMORTEM in _hit_ids(alice)
    assert SECURED_POSTMORTEM in [citation["sourceNodeId"] for citation in alice["citations"]]
    assert "Postmortem: OAuth token refresh outage" in alice["messages"][-1]["content"]
    bob = _wait(auth_server, "bob-token", {"assistant_id": "cortex", "input": cortex_input}).json()
    assert SECURED_POSTMORTEM not in _hit_ids(bob)
