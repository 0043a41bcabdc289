"""Metrics, request ids and logs on a real ``langgraph dev`` server (the repository's langgraph.json,
bearer tokens, JSON logs): a run through the runs API and a /graphql search are counted in a scrape of
/brain/metrics; request ids come back on brain-graph's routes and the server's own; a run refused for
its input is one INFO line without a traceback; the log lines are JSON with the request id."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from brain_graph.auth import TokenIssuer
from tests.platform.devserver import REPO_ROOT, DevServer, run_dev_server

pytestmark = pytest.mark.server

SECRET = "metrics-server-test-secret-0123456789abcdef"
PUBLIC = {"queryText": "duplicate charges", "filter": {"tenantId": "acme", "secured": False}}


@pytest.fixture(scope="module")
def server(brain_home: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevServer]:
    env = {
        "BRAIN_GRAPH_HOME": str(brain_home),
        "BRAIN_GRAPH_AUTH_SECRET": SECRET,
        "BRAIN_GRAPH_RATE_LIMIT": "1000 per 60 seconds",
        "BRAIN_GRAPH_LOG_FORMAT": "json",
    }
    with run_dev_server(REPO_ROOT / "langgraph.json", tmp_path_factory.mktemp("metrics"), env) as running:
        yield running


def headers(**extra: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {TokenIssuer(SECRET).mint('bob', ['acme'])}", **extra}


def scrape(server: DevServer) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    response = httpx.get(f"{server.url}/brain/metrics", timeout=60)
    assert response.status_code == 200
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(response.text)
        for sample in family.samples
    }


def value(samples: dict, name: str, **labels: str) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


def test_runs_and_graphql_searches_are_scraped(server: DevServer) -> None:
    before = scrape(server)
    run = httpx.post(
        f"{server.url}/runs/wait", json={"assistant_id": "brain_search", "input": PUBLIC}, headers=headers(), timeout=60
    )
    assert run.status_code == 200, run.text
    query = '{ brainSearch(queryText: "x", filter: {tenantId: "acme", secured: false}) { hits { nodeId } } }'
    graphql = httpx.post(f"{server.url}/graphql", json={"query": query}, headers=headers(), timeout=60)
    assert graphql.status_code == 200
    after = scrape(server)
    assert (
        value(after, "brain_graph_searches_total", outcome="ok")
        - value(before, "brain_graph_searches_total", outcome="ok")
        == 2
    )
    step = {"step": "build_pack", "backend": "embedded", "outcome": "ok"}
    assert (
        value(after, "brain_graph_step_seconds_count", **step) - value(before, "brain_graph_step_seconds_count", **step)
        == 2
    )
    route = {"route": "/graphql", "method": "POST", "status": "200"}
    assert (
        value(after, "brain_graph_http_requests_total", **route)
        - value(before, "brain_graph_http_requests_total", **route)
        == 1
    )


def test_request_ids_on_brain_graph_routes_and_the_servers_own(server: DevServer) -> None:
    ours = httpx.get(f"{server.url}/brain/health", headers={"X-Request-ID": "probe-7"}, timeout=60)
    assert ours.headers["X-Request-ID"] == "probe-7"
    theirs = httpx.post(f"{server.url}/threads", json={}, headers=headers(**{"X-Request-ID": "probe-8"}), timeout=60)
    assert theirs.headers["X-Request-ID"] == "probe-8"


def test_a_refused_run_is_one_info_line_with_its_request_id(server: DevServer) -> None:
    bad = {"queryText": "x", "filter": {"tenantId": "acme", "secured": False}, "options": {"topK": 5000}}
    run = httpx.post(
        f"{server.url}/runs/wait",
        json={"assistant_id": "brain_search", "input": bad},
        headers=headers(**{"X-Request-ID": "refused-run-1"}),
        timeout=60,
    )
    assert "topK" in run.text
    log = server.log()
    refused = [line for line in log.splitlines() if "request refused: INVALID_REQUEST" in line]
    assert refused, log[-3000:]
    assert "Traceback" not in log
    assert "Logging error" not in log


def test_brain_graph_logs_json_lines_with_the_request_id(server: DevServer) -> None:
    missing = httpx.get(
        f"{server.url}/graph/nodes/missing",
        params={"tenantId": "acme"},
        headers=headers(**{"X-Request-ID": "json-log-1"}),
        timeout=60,
    )
    assert missing.status_code == 404
    lines = [json.loads(line) for line in server.log().splitlines() if line.startswith("{") and "json-log-1" in line]
    assert [(line["logger"], line["level"], line["request_id"]) for line in lines] == [
        ("brain_graph.graph_api", "INFO", "json-log-1")
    ]
