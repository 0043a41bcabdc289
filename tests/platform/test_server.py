"""brain_search through a real ``langgraph dev`` server: langgraph-sdk and plain HTTP give exactly the
in-process result; streams show the six steps; bad requests fail with the field named."""

from __future__ import annotations

from typing import Any, cast

import httpx
import pytest
from langgraph_sdk.client import SyncLangGraphClient

from brain_graph.core.errors import InvalidRequestError
from brain_graph.graphs.search import GRAPH_NAME, NODE_NAMES, BrainSearchGraph
from brain_graph.pipeline.state import BrainSearchInput
from tests.platform.cases import (
    ALICE,
    INVALID,
    NO_PRINCIPAL,
    SEARCHES,
    SECURED_POSTMORTEM,
    SECURED_WITHOUT_PRINCIPAL,
    canonical,
    in_process,
)
from tests.platform.devserver import DevServer, sse_events

pytestmark = pytest.mark.server


def _context(principal: dict[str, Any] | None) -> dict[str, Any] | None:
    return {"principal": principal} if principal is not None else None


def _sse(url: str, body: dict[str, Any]) -> list[tuple[str, Any]]:
    """The ``(event, data)`` pairs of a plain-HTTP ``/runs/stream`` response."""
    with httpx.stream("POST", f"{url}/runs/stream", json=body, timeout=60) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        return sse_events(response.read().decode("utf-8"))


def test_server_is_up_with_the_custom_health_route(dev_server: DevServer) -> None:
    assert httpx.get(f"{dev_server.url}/ok", timeout=10).json()["ok"] is True  # 0.16 adds "services"
    health = httpx.get(f"{dev_server.url}/brain/health", timeout=10).json()
    assert health["status"] == "ok"
    assert health["graph"] == GRAPH_NAME
    assert health["nodes"] == list(NODE_NAMES)
    assert health["backend"] == "embedded"


@pytest.mark.parametrize("name", sorted(SEARCHES))
def test_sdk_wait_returns_the_in_process_result(
    sdk: SyncLangGraphClient, home_graph: BrainSearchGraph, name: str
) -> None:
    request, principal = SEARCHES[name]
    remote = sdk.runs.wait(None, GRAPH_NAME, input=request, context=_context(principal))
    expected = in_process(home_graph, request, principal)
    assert canonical(remote) == canonical(expected)
    assert list(remote) == list(expected)  # same key order too


@pytest.mark.parametrize("name", sorted(SEARCHES))
def test_plain_http_wait_returns_the_in_process_result(
    dev_server: DevServer, home_graph: BrainSearchGraph, name: str
) -> None:
    request, principal = SEARCHES[name]
    body: dict[str, Any] = {"assistant_id": GRAPH_NAME, "input": request}
    if principal is not None:
        body["context"] = {"principal": principal}
    response = httpx.post(f"{dev_server.url}/runs/wait", json=body, timeout=60)
    assert response.status_code == 200
    assert canonical(response.json()) == canonical(in_process(home_graph, request, principal))


def test_plain_http_by_assistant_uuid(dev_server: DevServer, home_graph: BrainSearchGraph) -> None:
    found = httpx.post(f"{dev_server.url}/assistants/search", json={"graph_id": GRAPH_NAME}, timeout=10).json()
    assert len(found) == 1
    request, principal = SEARCHES["public"]
    body = {"assistant_id": found[0]["assistant_id"], "input": request}
    response = httpx.post(f"{dev_server.url}/runs/wait", json=body, timeout=60)
    assert canonical(response.json()) == canonical(in_process(home_graph, request, principal))


def test_secured_search_with_a_context_principal_sees_the_secured_doc(sdk: SyncLangGraphClient) -> None:
    request, _ = SEARCHES["secured-with-principal"]
    result = cast(dict[str, Any], sdk.runs.wait(None, GRAPH_NAME, input=request, context={"principal": ALICE}))
    assert SECURED_POSTMORTEM in [hit["nodeId"] for hit in result["hits"]]
    public_request = {**request, "filter": {"tenantId": "acme", "secured": False}}
    public = cast(dict[str, Any], sdk.runs.wait(None, GRAPH_NAME, input=public_request))
    assert SECURED_POSTMORTEM not in [hit["nodeId"] for hit in public["hits"]]


def test_secured_search_without_a_principal_fails_closed(dev_server: DevServer, sdk: SyncLangGraphClient) -> None:
    """The error's type and its real message reach the client (AuthorizationError is a RuntimeError,
    whose message langgraph_api passes through instead of "An internal error occurred")."""
    body = {"assistant_id": GRAPH_NAME, "input": SECURED_WITHOUT_PRINCIPAL}
    response = httpx.post(f"{dev_server.url}/runs/wait", json=body, timeout=60)
    assert response.status_code == 200
    assert list(response.json()) == ["__error__"]  # no hits, no partial result
    error = response.json()["__error__"]
    assert error["error"] == "AuthorizationError"
    assert error["message"].startswith(NO_PRINCIPAL)
    assert "Traceback" not in error["message"]
    assert "\n" not in error["message"]
    with pytest.raises(Exception, match=rf"^AuthorizationError: {NO_PRINCIPAL}"):
        sdk.runs.wait(None, GRAPH_NAME, input=SECURED_WITHOUT_PRINCIPAL)


@pytest.mark.parametrize("stream_mode", ["updates", "values"])
def test_a_secured_stream_without_a_principal_ends_with_the_error_event(
    dev_server: DevServer, stream_mode: str
) -> None:
    body = {"assistant_id": GRAPH_NAME, "input": SECURED_WITHOUT_PRINCIPAL, "stream_mode": [stream_mode]}
    events = _sse(dev_server.url, body)
    assert [event for event, _ in events] == ["metadata", "error"]  # nothing streamed before it fails
    error = events[-1][1]
    assert error["error"] == "AuthorizationError"
    assert error["message"].startswith(NO_PRINCIPAL)


def test_an_invalid_request_streams_the_field_over_plain_http(
    dev_server: DevServer, home_graph: BrainSearchGraph
) -> None:
    request, _, field = INVALID["top-k-too-large"]
    with pytest.raises(InvalidRequestError) as local:
        home_graph.invoke(cast(BrainSearchInput, request))
    assert str(local.value).startswith(f"invalid request: {field}: ")
    expected = {"error": "InvalidRequestError", "message": str(local.value)}  # the very message
    events = _sse(dev_server.url, {"assistant_id": GRAPH_NAME, "input": request, "stream_mode": ["updates"]})
    assert [event for event, _ in events] == ["metadata", "error"]
    assert events[-1][1] == expected
    body = {"assistant_id": GRAPH_NAME, "input": request}
    assert httpx.post(f"{dev_server.url}/runs/wait", json=body, timeout=60).json() == {"__error__": expected}


def test_unknown_context_keys_are_dropped_by_the_server_and_a_secured_search_fails_closed(
    dev_server: DevServer,
) -> None:
    """langgraph_api keeps only the context keys of the graph's context schema: a misspelt
    ``principle`` never reaches the graph, so the search has no principal and fails closed."""
    body = {"assistant_id": GRAPH_NAME, "input": SECURED_WITHOUT_PRINCIPAL, "context": {"principle": ALICE}}
    error = httpx.post(f"{dev_server.url}/runs/wait", json=body, timeout=60).json()["__error__"]
    assert error["error"] == "AuthorizationError"
    assert error["message"].startswith(NO_PRINCIPAL)


@pytest.mark.parametrize("name", sorted(INVALID))
def test_invalid_requests_name_the_field_over_http(dev_server: DevServer, name: str) -> None:
    request, context, field = INVALID[name]
    body: dict[str, Any] = {"assistant_id": GRAPH_NAME, "input": request}
    if context is not None:
        body["context"] = context
    response = httpx.post(f"{dev_server.url}/runs/wait", json=body, timeout=60)
    error = response.json()["__error__"]
    assert error["error"] == "InvalidRequestError"
    assert error["message"].startswith(f"invalid request: {field}: ")
    assert "Traceback" not in error["message"]
    assert "\n" not in error["message"]


@pytest.mark.parametrize("name", ["missing-tenant", "top-k-too-large"])
def test_invalid_requests_raise_in_the_sdk_with_the_field(sdk: SyncLangGraphClient, name: str) -> None:
    request, _, field = INVALID[name]
    with pytest.raises(Exception, match=rf"^InvalidRequestError: invalid request: {field}: "):
        sdk.runs.wait(None, GRAPH_NAME, input=request)


def test_stream_updates_arrive_step_by_step_in_order(sdk: SyncLangGraphClient, home_graph: BrainSearchGraph) -> None:
    request, principal = SEARCHES["project-and-options"]
    steps: list[str] = []
    updates: dict[str, Any] = {}
    for part in sdk.runs.stream(None, GRAPH_NAME, input=request, stream_mode="updates"):
        if part.event == "updates":
            (step, update), *rest = part.data.items()
            assert not rest
            steps.append(step)
            updates[step] = update
    assert steps == list(NODE_NAMES)
    expected = in_process(home_graph, request, principal)
    # Each step's real update, internal keys included (the values stream keeps the output schema).
    assert set(updates["embed"]) == {"request", "queryVectors", "callerKey"}
    assert updates["embed"]["request"]["options"]["topK"] == request["options"]["topK"]
    assert updates["embed"]["request"]["filter"]["tenantId"] == request["filter"]["tenantId"]
    assert updates["retrieve"]["hits"] == expected["hits"]
    assert set(updates["retrieve"]["nodeRecords"]) == {hit["nodeId"] for hit in expected["hits"]}
    assert updates["expand"]["graphNodes"] == expected["graphNodes"]
    assert updates["expand"]["graphEdges"] == expected["graphEdges"]
    assert set(updates["expand"]["nodeRecords"]) == {node["nodeId"] for node in expected["graphNodes"]}
    assert updates["score_episodes"]["episodes"] == expected["episodes"]
    assert set(updates["score_episodes"]["episodeLabels"]) == {e["clusterNodeId"] for e in expected["episodes"]}
    assert updates["assemble_passages"] == {"passages": expected["passages"]}
    assert updates["build_pack"] == {"promptPack": expected["promptPack"]}
    values = list(sdk.runs.stream(None, GRAPH_NAME, input=request, stream_mode="values"))
    assert [part.data for part in values if part.event == "values"][-1] == expected


def test_stream_custom_events_carry_step_timings_and_counts(
    sdk: SyncLangGraphClient, home_graph: BrainSearchGraph
) -> None:
    request, principal = SEARCHES["public"]
    events = [
        part.data
        for part in sdk.runs.stream(None, GRAPH_NAME, input=request, stream_mode="custom")
        if part.event == "custom"
    ]
    assert [event["step"] for event in events] == list(NODE_NAMES)
    assert all(isinstance(event["ms"], int | float) and event["ms"] >= 0 for event in events)
    local = list(home_graph.stream(cast(BrainSearchInput, request), stream_mode="custom"))
    assert [(event["step"], event["counts"]) for event in events] == [(e["step"], e["counts"]) for e in local]
    expected = in_process(home_graph, request, principal)
    counts = {event["step"]: event["counts"] for event in events}
    assert {key: counts["retrieve"][key] for key in ("hits", "nodeRecords")} == {
        "hits": len(expected["hits"]),
        "nodeRecords": len(expected["hits"]),
    }
    assert counts["build_pack"] == {
        "citations": len(expected["promptPack"]["citations"]),
        "contextChars": len(expected["promptPack"]["contextMarkdown"]),
    }


def test_a_failing_run_streams_an_error_event_naming_the_field(sdk: SyncLangGraphClient) -> None:
    request, _, field = INVALID["top-k-too-large"]
    parts = list(sdk.runs.stream(None, GRAPH_NAME, input=request, stream_mode="updates"))
    errors = [part.data for part in parts if part.event == "error"]
    assert len(errors) == 1
    assert errors[0]["error"] == "InvalidRequestError"
    assert f"invalid request: {field}: " in errors[0]["message"]
    assert not [part for part in parts if part.event == "updates"]


def test_debug_pipeline_lines_reach_the_server_log(sdk: SyncLangGraphClient, dev_server: DevServer) -> None:
    sdk.runs.wait(
        None, GRAPH_NAME, input={"queryText": "pipeline log probe", "filter": {"tenantId": "acme", "secured": False}}
    )
    log = dev_server.log()
    assert 'PIPELINE embed.in | query="pipeline log probe" tenant=acme' in log
    for step in NODE_NAMES:
        assert f"PIPELINE {step}.out | ms=" in log
