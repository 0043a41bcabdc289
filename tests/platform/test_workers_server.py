"""The HTTP surfaces in several worker processes (``brain-graph serve``) and the per-principal rate
limit across them: with a shared Redis the limit holds in total, whichever process answers; with
``memory://`` each process has its own budget; a Redis that stops answering fails closed (503) and
the servers admit again once it is back. A ``langgraph dev`` server on the same Redis counts runs
and ``/graphql`` in the same budget, off its event loop. MCP sessions work over ``--workers 2`` (the
transport is stateless, so a session's requests may reach either worker).

The window is an hour, so no test depends on how long it takes: every count is over within it."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from mcp import ClientSession
from mcp.types import CallToolResult

from brain_graph.auth import TokenIssuer
from brain_graph.graphs.search import GRAPH_NAME
from tests.mcp_client import texts, with_session
from tests.platform.devserver import REPO_ROOT, DevServer, run_dev_server
from tests.platform.redis_server import RedisServer, run_redis
from tests.platform.standalone_server import run_serve

pytestmark = pytest.mark.server

SECRET = "workers-server-test-secret-0123456789abcdef"
ISSUER = TokenIssuer(SECRET)
LIMIT = 8
REQUEST = {"queryText": "token", "filter": {"tenantId": "acme", "secured": False}, "options": {"topK": 1}}
QUERY = (
    "query($queryText: String!, $filter: BrainSearchFilterInput!, $options: BrainSearchOptionsInput) "
    "{ brainSearch(queryText: $queryText, filter: $filter, options: $options) { hits { nodeId } } }"
)


def settings(brain_home: Path, storage: str) -> dict[str, str]:
    return {
        "BRAIN_GRAPH_HOME": str(brain_home),
        "BRAIN_GRAPH_AUTH_SECRET": SECRET,
        "BRAIN_GRAPH_RATE_LIMIT": f"{LIMIT} per hour",
        "BRAIN_GRAPH_RATE_LIMIT_STORAGE": storage,
    }


def token(subject: str) -> str:
    return ISSUER.mint(subject, ["acme"])


def graphql(server: DevServer, bearer: str) -> httpx.Response:
    """One search over ``/graphql``, on a new connection."""
    body = {"query": QUERY, "variables": REQUEST}
    return httpx.post(f"{server.url}/graphql", json=body, headers={"Authorization": f"Bearer {bearer}"}, timeout=60)


def graph_search(server: DevServer, bearer: str) -> httpx.Response:
    """One ``GET /graph/search``, on a new connection."""
    params = {"tenantId": "acme", "q": "token", "secured": "false"}
    return httpx.get(
        f"{server.url}/graph/search", params=params, headers={"Authorization": f"Bearer {bearer}"}, timeout=60
    )


def spread(servers: list[DevServer], bearer: str, count: int) -> list[httpx.Response]:
    """``count`` requests of one principal, taking turns over ``servers`` and over ``/graphql`` and
    ``/graph/search``."""
    surfaces = (graphql, graph_search)
    return [surfaces[(n // len(servers)) % 2](servers[n % len(servers)], bearer) for n in range(count)]


@pytest.fixture(scope="module")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    with run_redis(tmp_path_factory.mktemp("redis")) as running:
        yield running


@pytest.fixture(scope="module")
def two_servers(
    brain_home: Path, redis_server: RedisServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[list[DevServer]]:
    """Two ``brain-graph serve`` processes on two ports, counting in the same Redis."""
    workdir = tmp_path_factory.mktemp("two-servers")
    with contextlib.ExitStack() as stack:
        yield [stack.enter_context(run_serve(workdir, settings(brain_home, redis_server.url))) for _ in range(2)]


@pytest.fixture(scope="module")
def two_workers(
    brain_home: Path, redis_server: RedisServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[DevServer]:
    """``brain-graph serve --workers 2``, counting in Redis."""
    workdir = tmp_path_factory.mktemp("two-workers")
    with run_serve(workdir, settings(brain_home, redis_server.url), workers=2) as running:
        yield running


def test_one_budget_over_two_servers_sharing_redis(two_servers: list[DevServer]) -> None:
    answers = spread(two_servers, token("carol"), LIMIT + 3)
    assert [answer.status_code for answer in answers] == [200] * LIMIT + [429] * 3, [a.text for a in answers]
    assert [answer.headers["X-RateLimit-Remaining"] for answer in answers[:LIMIT]] == [
        str(LIMIT - n) for n in range(1, LIMIT + 1)
    ]
    assert all("Retry-After" in answer.headers for answer in answers[LIMIT:])
    refusing = {answer.url.port for answer in answers[LIMIT:]}
    assert refusing == {httpx.URL(server.url).port for server in two_servers}  # both servers refuse
    other = token("dave")  # another principal has its own budget
    assert [graphql(server, other).status_code for server in two_servers] == [200, 200]


def run_wait(server: DevServer, bearer: str) -> httpx.Response:
    """One ``brain_search`` run over the LangGraph server's runs API."""
    body = {"assistant_id": GRAPH_NAME, "input": REQUEST}
    return httpx.post(f"{server.url}/runs/wait", json=body, headers={"Authorization": f"Bearer {bearer}"}, timeout=60)


def test_a_langgraph_server_counts_in_the_same_redis(
    two_servers: list[DevServer], brain_home: Path, redis_server: RedisServer, tmp_path: Path
) -> None:
    env = settings(brain_home, redis_server.url)
    with run_dev_server(REPO_ROOT / "langgraph.json", tmp_path, env) as langgraph:
        bearer = token("judy")
        calls = [lambda: run_wait(langgraph, bearer), lambda: graphql(langgraph, bearer)]
        calls.append(lambda: graphql(two_servers[0], bearer))
        answers = [calls[n % len(calls)]() for n in range(LIMIT + 3)]
        assert "Blocking" not in langgraph.log()  # counting in Redis stays off the server's event loop
    assert [answer.status_code for answer in answers] == [200] * LIMIT + [429] * 3, [a.text for a in answers]


def test_the_workers_of_one_server_share_the_budget(two_workers: DevServer) -> None:
    assert two_workers.log().count("Started server process") == 2
    answers = [graphql(two_workers, token("erin")) for _ in range(2 * LIMIT)]  # each on a new connection
    assert [answer.status_code for answer in answers] == [200] * LIMIT + [429] * LIMIT


def test_mcp_sessions_work_over_two_workers(two_workers: DevServer) -> None:
    async def twice(session: ClientSession) -> list[CallToolResult]:
        search = {"tenantId": "acme", "query": "token refresh", "limit": 3}
        return [await session.call_tool("search_nodes", search) for _ in range(2)]

    for subject in ("frank", "grace"):  # a few sessions, each of its own principal
        results = with_session(two_workers.url, token(subject), twice)
        assert [result.is_error for result in results] == [False, False], [texts(r) for r in results]
        assert texts(results[0]) == texts(results[1])


def test_memory_storage_is_one_budget_per_server(brain_home: Path, tmp_path: Path) -> None:
    with contextlib.ExitStack() as stack:
        servers = [stack.enter_context(run_serve(tmp_path, settings(brain_home, "memory://"))) for _ in range(2)]
        answers = spread(servers, token("heidi"), 2 * LIMIT + 2)
    assert [answer.status_code for answer in answers] == [200] * (2 * LIMIT) + [429] * 2


def test_an_unreachable_storage_fails_closed(brain_home: Path, tmp_path: Path) -> None:
    with run_redis(tmp_path) as redis_server, run_serve(tmp_path, settings(brain_home, redis_server.url)) as server:
        bearer = token("ivan")
        assert graphql(server, bearer).status_code == 200
        redis_server.stop()

        refused = graphql(server, bearer)
        assert refused.status_code == 503, refused.text
        [error] = refused.json()["errors"]
        assert error["extensions"]["code"] == "BACKEND_UNAVAILABLE"
        assert error["extensions"]["backend"] == "rate-limit storage"
        assert "rate-limit storage is unavailable" in error["message"]
        assert str(redis_server.port) not in refused.text  # where the storage is stays in the server log
        assert refused.headers["Retry-After"].isdigit()
        browsed = graph_search(server, bearer)
        assert (browsed.status_code, browsed.json()["error_code"]) == (503, "BACKEND_UNAVAILABLE")
        ready = httpx.get(f"{server.url}/brain/ready", timeout=30)
        assert (ready.status_code, ready.json()["unavailable"]) == (503, ["rate-limit storage"])
        assert httpx.get(f"{server.url}/brain/health", timeout=30).status_code == 200
        assert str(redis_server.port) in server.log()  # the log names the storage that failed

        redis_server.start()  # the same port; the storage answers again (empty)
        assert graphql(server, bearer).status_code == 200
        assert httpx.get(f"{server.url}/brain/ready", timeout=30).status_code == 200
