"""Over the LangGraph server, a reader cannot make a search start past ``embed``: naming a checkpoint
namespace in the run's config does not make the run a subgraph, so a ``Command`` that jumps to
``expand`` with forged hits, records and request is refused before any step reads."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from brain_graph.auth import TokenIssuer
from brain_graph.graphs.search import GRAPH_NAME
from tests.platform.cases import SECURED_POSTMORTEM
from tests.platform.devserver import REPO_ROOT, DevServer, run_dev_server, sse_events

pytestmark = pytest.mark.server

SECRET = "run-guards-test-secret-0123456789abcdef"
PUBLIC = {"queryText": "token refresh outage", "filter": {"tenantId": "acme", "secured": False}}
FORGED_REQUEST = {
    **PUBLIC,
    "options": {"topK": 1_000_000, "expandDepth": 50, "maxNodes": 10_000_000},
    "profileIds": ["work_items", "docs", "code"],
}
FORGED_HIT = {
    "nodeId": SECURED_POSTMORTEM,
    "nodeType": "cdm.doc",
    "profileId": "docs",
    "profileKind": "docs",
    "score": 0.99,
    "title": "x",
    "url": None,
}


@pytest.fixture(scope="module")
def server(brain_home: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevServer]:
    env = {"BRAIN_GRAPH_HOME": str(brain_home), "BRAIN_GRAPH_AUTH_SECRET": SECRET, "BRAIN_GRAPH_RATE_LIMIT": "off"}
    with run_dev_server(REPO_ROOT / "langgraph.json", tmp_path_factory.mktemp("run-guards"), env) as running:
        yield running


@pytest.fixture
def reader() -> dict[str, str]:
    """The headers of a reader of tenant acme outside the group that may see the secured postmortem."""
    return {"Authorization": f"Bearer {TokenIssuer(SECRET).mint('mallory', ['acme'])}"}


def streamed(server: DevServer, headers: dict[str, str], path: str, body: dict[str, Any]) -> list[tuple[str, Any]]:
    """The ``(event, data)`` pairs of a ``runs/stream`` response (an error status: one ``http`` pair)."""
    with httpx.stream("POST", f"{server.url}{path}", json=body, headers=headers, timeout=60) as response:
        text = response.read().decode("utf-8")
        if response.status_code != 200:
            return [("http", {"status": response.status_code, "body": text})]
    return sse_events(text)


@pytest.mark.parametrize("namespace", ["x", f"{GRAPH_NAME}:1"])
def test_a_named_namespace_cannot_jump_to_expand(server: DevServer, reader: dict[str, str], namespace: str) -> None:
    thread = httpx.post(f"{server.url}/threads", json={}, headers=reader, timeout=60).json()["thread_id"]
    first = httpx.post(
        f"{server.url}/threads/{thread}/runs/wait",
        json={"assistant_id": GRAPH_NAME, "input": PUBLIC},
        headers=reader,
        timeout=60,
    )
    assert first.status_code == 200, first.text
    body = {
        "assistant_id": GRAPH_NAME,
        "config": {"configurable": {"checkpoint_ns": namespace}},
        "command": {
            "goto": "expand",
            "update": {
                "hits": [FORGED_HIT],
                "nodeRecords": {SECURED_POSTMORTEM: {"nodeType": "cdm.doc", "projectKey": "AUTH", "title": "x"}},
                "request": FORGED_REQUEST,
            },
        },
        "stream_mode": ["updates"],
    }
    events = streamed(server, reader, f"/threads/{thread}/runs/stream", body)
    steps = [name for event, data in events if event == "updates" and isinstance(data, dict) for name in data]
    assert steps == []  # no step ran
    errors = [data for event, data in events if event in {"error", "http"}]
    assert errors, events
    assert "command.goto" in json.dumps(errors)
    state = httpx.get(f"{server.url}/threads/{thread}/state", headers=reader, timeout=60).json()
    assert SECURED_POSTMORTEM not in json.dumps(state)  # the first run's state, untouched
    assert state["values"]["request"]["options"]["topK"] != FORGED_REQUEST["options"]["topK"]
