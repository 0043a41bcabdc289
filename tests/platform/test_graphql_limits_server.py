"""/graphql's request bounds through a real ``langgraph dev`` server (the repository's langgraph.json,
bearer tokens): a huge document is refused before it is parsed and the server stays responsive;
aliases cannot multiply a response; non-JSON bodies and credential refusals are GraphQL errors with
their HTTP statuses."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from brain_graph.auth import TokenIssuer
from brain_graph.serving.graphql.limits import MAX_ALIASES
from tests.platform.devserver import REPO_ROOT, DevServer, run_dev_server

pytestmark = pytest.mark.server

SECRET = "graphql-limits-test-secret-0123456789abcdef"
RATE_LIMIT = 1000
SEARCH = 'brainSearch(queryText: "token refresh postmortem", filter: {tenantId: "%s", secured: false})'


def alice() -> str:
    """A token of alice issued now (right before the request it is sent with)."""
    return TokenIssuer(SECRET).mint("alice", ["acme"], groups=["security"])


@pytest.fixture(scope="module")
def server(brain_home: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevServer]:
    env = {
        "BRAIN_GRAPH_HOME": str(brain_home),
        "BRAIN_GRAPH_AUTH_SECRET": SECRET,
        "BRAIN_GRAPH_RATE_LIMIT": f"{RATE_LIMIT} per 60 seconds",
    }
    with run_dev_server(REPO_ROOT / "langgraph.json", tmp_path_factory.mktemp("graphql-limits"), env) as running:
        yield running


def post(
    server: DevServer, *, json: object = None, content: bytes | None = None, content_type: str | None = None
) -> httpx.Response:
    headers = {"Authorization": f"Bearer {alice()}", **({"content-type": content_type} if content_type else {})}
    return httpx.post(f"{server.url}/graphql", json=json, content=content, headers=headers, timeout=60)


def only_code(response: httpx.Response) -> str:
    errors = response.json()["errors"]
    assert len(errors) == 1
    assert "\n" not in errors[0]["message"]
    return str(errors[0]["extensions"]["code"])


def test_a_huge_document_is_refused_before_parsing(server: DevServer) -> None:
    """413 is the body-size check's answer (:mod:`brain_graph.serving.graphql.transport`), given before parsing."""
    query = "{ " + " ".join(f"a{i}: __typename" for i in range(50_000)) + " }"  # 0.9 MB
    response = post(server, json={"query": query})
    assert response.status_code == 413
    assert only_code(response) == "BAD_USER_INPUT"
    assert "X-RateLimit-Remaining" in response.headers
    assert httpx.get(f"{server.url}/ok", timeout=5).status_code == 200


def test_aliases_cannot_multiply_a_response(server: DevServer) -> None:
    copies = " ".join(f"a{i}: promptPack {{ contextMarkdown }}" for i in range(MAX_ALIASES + 1))
    response = post(server, json={"query": f"{{ {SEARCH % 'acme'} {{ {copies} }} }}"})
    assert response.status_code == 400
    assert only_code(response) == "BAD_USER_INPUT"
    assert len(response.content) < 1000
    within = " ".join(f"a{i}: promptPack {{ contextMarkdown }}" for i in range(3))
    assert post(server, json={"query": f"{{ {SEARCH % 'acme'} {{ {within} }} }}"}).status_code == 200


def test_multipart_and_bad_json_are_graphql_errors(server: DevServer) -> None:
    body = b'--xx\r\nContent-Disposition: form-data; name="operations"\r\n\r\n{"query":"{__typename}"}\r\n--xx--\r\n'
    multipart = post(server, content=body, content_type="multipart/form-data; boundary=xx")
    assert multipart.status_code == 415
    assert only_code(multipart) == "BAD_USER_INPUT"
    bad_json = post(server, content=b"{{{", content_type="application/json")
    assert bad_json.status_code == 400
    assert only_code(bad_json) == "BAD_USER_INPUT"


def test_another_tenant_is_403(server: DevServer) -> None:
    response = post(server, json={"query": f"{{ {SEARCH % 'globex'} {{ hits {{ nodeId }} }} }}"})
    assert response.status_code == 403
    assert only_code(response) == "FORBIDDEN"
