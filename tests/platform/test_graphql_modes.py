"""/graphql beyond the happy path of a configured server: the insecure development mode (the
repository's langgraph.json with BRAIN_GRAPH_AUTH=insecure) and a backend that is down."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from brain_graph.auth.gate import INSECURE_WARNING
from tests.platform.cases import SECURED_POSTMORTEM
from tests.platform.devserver import REPO_ROOT, DevServer, free_port, run_dev_server
from tests.platform.graphql_queries import BRAIN_SEARCH, variables
from tests.platform.test_graphql_server import SECRET, TokenIssuer, error_code

pytestmark = pytest.mark.server

SECURED = {"queryText": "token refresh postmortem", "filter": {"tenantId": "acme", "secured": True}}
PUBLIC = {"queryText": "token refresh postmortem", "filter": {"tenantId": "acme", "secured": False}}


def post(server: DevServer, request: dict[str, object], bearer: str | None = None) -> httpx.Response:
    headers = {"Authorization": f"Bearer {bearer}"} if bearer else {}
    body = {"query": BRAIN_SEARCH, "variables": variables(request)}
    return httpx.post(f"{server.url}/graphql", json=body, headers=headers, timeout=60)


def test_insecure_mode_warns_at_start_and_fails_closed_without_a_principal(dev_server: DevServer) -> None:
    assert INSECURE_WARNING in dev_server.log()
    public = post(dev_server, PUBLIC)
    assert public.status_code == 200
    assert public.json()["data"]["brainSearch"]["hits"]
    secured = post(dev_server, SECURED)
    assert error_code(secured) == "UNAUTHENTICATED"
    assert "no principal" in secured.json()["errors"][0]["message"]


def test_a_server_without_auth_settings_does_not_start(brain_home: Path, tmp_path: Path) -> None:
    with pytest.raises(RuntimeError, match="BRAIN_GRAPH_AUTH_SECRET"):  # noqa: SIM117
        with run_dev_server(REPO_ROOT / "langgraph.json", tmp_path, {"BRAIN_GRAPH_HOME": str(brain_home)}):
            pass


@pytest.fixture(scope="module")
def down_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevServer]:
    """The Neo4j + Weaviate backend pointed at ports nobody listens on."""
    env = {
        "BRAIN_GRAPH_AUTH_SECRET": SECRET,
        "BRAIN_GRAPH_BACKEND": "neo4j-weaviate",
        "NEO4J_URI": f"bolt://127.0.0.1:{free_port()}",
        "WEAVIATE_HOST": "127.0.0.1",
        "WEAVIATE_HTTP_PORT": str(free_port()),
        "WEAVIATE_GRPC_PORT": str(free_port()),
    }
    with run_dev_server(REPO_ROOT / "langgraph.json", tmp_path_factory.mktemp("down"), env) as server:
        yield server


def test_a_backend_that_is_down_is_named_in_bounded_time(down_server: DevServer) -> None:
    started = time.monotonic()
    response = post(down_server, SECURED, TokenIssuer(SECRET).mint("alice", ["acme"]))
    assert time.monotonic() - started < 45
    assert error_code(response) == "BACKEND_UNAVAILABLE"
    assert response.status_code == 503  # retry later, unlike a 400
    error = response.json()["errors"][0]
    assert error["extensions"]["backend"] in {"neo4j", "weaviate"}
    assert SECURED_POSTMORTEM not in response.text
    assert "127.0.0.1" not in error["message"]  # hosts and ports stay in the server log
    assert "unavailable" in error["message"]


def test_readiness_names_the_servers_that_are_down_while_liveness_stays_ok(down_server: DevServer) -> None:
    health = httpx.get(f"{down_server.url}/brain/health", timeout=10)
    assert (health.status_code, health.json()["status"]) == (200, "ok")  # the process answers
    ready = httpx.get(f"{down_server.url}/brain/ready", timeout=60)
    assert ready.status_code == 503
    assert ready.json() == {
        "status": "unavailable",
        "backends": {"neo4j": "unavailable", "weaviate": "unavailable"},
        "unavailable": ["neo4j", "weaviate"],
    }
    assert "127.0.0.1" not in ready.text


def test_an_embedded_server_with_its_store_is_ready(dev_server: DevServer) -> None:
    ready = httpx.get(f"{dev_server.url}/brain/ready", timeout=60)
    assert (ready.status_code, ready.json()) == (200, {"status": "ready", "backends": {"embedded": "ready"}})
