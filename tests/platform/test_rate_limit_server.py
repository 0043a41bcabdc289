"""The per-principal rate limit on a `langgraph dev` server with the repository's langgraph.json: reached
over /graphql (429 with ``Retry-After`` and ``X-RateLimit-*``), one budget with the runs API, other
principals unaffected, and admitted again once the window has passed. Nothing here depends on how long
the suite has run: the window starts at this test's first request, the limit is reached in a few
requests, and the recovery is polled for (a refused request uses no budget), not slept for."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from brain_graph.graphs.search import GRAPH_NAME
from tests.platform.devserver import REPO_ROOT, DevServer, run_dev_server
from tests.platform.test_graphql_server import SECRET, SEED_EXAMPLE, error_code, graphql, run_wait, token

pytestmark = pytest.mark.server

RATE_LIMIT = 3
RATE_WINDOW_S = 10  # some 20x what the few requests reaching the limit take; the recovery waits for it
RECOVERY_BOUND_S = RATE_WINDOW_S + 60
REQUEST = {"queryText": "token", "filter": {"tenantId": "acme", "secured": False}, "options": {"topK": 1}}
QUERY = (
    "query($queryText: String!, $filter: BrainSearchFilterInput!, $options: BrainSearchOptionsInput) "
    "{ brainSearch(queryText: $queryText, filter: $filter, options: $options) { hits { nodeId } } }"
)


@pytest.fixture(scope="module")
def server(brain_home: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevServer]:
    env = {
        "BRAIN_GRAPH_HOME": str(brain_home),
        "BRAIN_GRAPH_AUTH_SECRET": SECRET,
        "BRAIN_GRAPH_RATE_LIMIT": f"{RATE_LIMIT} per {RATE_WINDOW_S} seconds",
    }
    with run_dev_server(REPO_ROOT / "langgraph.json", tmp_path_factory.mktemp("rate-limit"), env) as running:
        yield running


def admitted_again(server: DevServer, bearer: str, bound_s: float) -> httpx.Response:
    """The first response to ``bearer`` that is not a 429, polling every half second for at most
    ``bound_s`` seconds (the last 429 if none)."""
    deadline = time.monotonic() + bound_s
    response = graphql(server, bearer, REQUEST, QUERY)
    while response.status_code == 429 and time.monotonic() < deadline:
        time.sleep(0.5)
        response = graphql(server, bearer, REQUEST, QUERY)
    return response


def test_the_rate_limit_is_reached_and_recovers(server: DevServer) -> None:
    limited = token("rate-tester")
    responses = [graphql(server, limited, REQUEST, QUERY) for _ in range(RATE_LIMIT)]
    assert [response.status_code for response in responses] == [200] * RATE_LIMIT
    assert [response.headers["X-RateLimit-Remaining"] for response in responses] == ["2", "1", "0"]
    refused = graphql(server, limited, REQUEST, QUERY)
    assert refused.status_code == 429
    assert error_code(refused) == "RATE_LIMITED"
    assert 1 <= int(refused.headers["Retry-After"]) <= RATE_WINDOW_S
    assert refused.headers["X-RateLimit-Remaining"] == "0"
    over_runs = run_wait(server, limited, GRAPH_NAME, REQUEST)  # one budget for both surfaces
    assert over_runs.status_code == 429
    assert "Retry-After" in over_runs.headers
    other = graphql(server, token("alice", groups=("security",)), SEED_EXAMPLE)
    assert other.status_code == 200  # another principal is unaffected
    assert admitted_again(server, limited, RECOVERY_BOUND_S).status_code == 200
