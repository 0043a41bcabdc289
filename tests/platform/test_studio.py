"""What LangGraph Studio reads from the server: the assistant's graph (six nodes, their edges), the
schemas behind its input form (descriptions and defaults), each step's state update, and the type and
message of a failed run's error."""

from __future__ import annotations

import itertools
from typing import Any

import httpx
import jsonschema_rs
import pytest
from langgraph_sdk.client import SyncLangGraphClient

from brain_graph.graphs.index import INDEX_GRAPH_NAME
from brain_graph.graphs.search import GRAPH_NAME, NODE_NAMES
from tests.helpers import SEED_OPTION_DEFAULTS
from tests.platform.cases import NO_PRINCIPAL, SEARCHES, SECURED_WITHOUT_PRINCIPAL
from tests.platform.devserver import DevServer

pytestmark = pytest.mark.server

STEP_WRITES = {
    "embed": ["request", "queryVectors", "callerKey"],
    "retrieve": [
        *("hits", "filtersApplied", "warnings", "nodeRecords", "seedLinks", "seedScores", "hitSources"),
        "graphContextIncluded",
    ],
    "expand": ["graphNodes", "graphEdges", "nodeRecords", "candidates", "clusterMemberships", "passageTexts"],
    "score_episodes": ["episodes", "episodeLabels"],
    "assemble_passages": ["passages"],
    "build_pack": ["promptPack"],
}


@pytest.fixture(scope="module")
def assistant_id(dev_server: DevServer) -> str:
    found = httpx.post(f"{dev_server.url}/assistants/search", json={"graph_id": GRAPH_NAME}, timeout=10).json()
    assert [assistant["graph_id"] for assistant in found] == [GRAPH_NAME]
    return str(found[0]["assistant_id"])


@pytest.fixture(scope="module")
def schemas(dev_server: DevServer, assistant_id: str) -> dict[str, Any]:
    response = httpx.get(f"{dev_server.url}/assistants/{assistant_id}/schemas", timeout=10)
    assert response.status_code == 200
    return dict(response.json())


def _resolve(schema: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    """``node`` with a local ``$ref`` replaced by its definition (annotations next to it kept)."""
    ref = node.get("$ref")
    if ref is None:
        return node
    definition = schema["$defs"][ref.removeprefix("#/$defs/")]
    return {**definition, **{key: value for key, value in node.items() if key != "$ref"}}


def test_assistant_graph_lists_the_six_nodes_and_their_edges(dev_server: DevServer, assistant_id: str) -> None:
    graph = httpx.get(f"{dev_server.url}/assistants/{assistant_id}/graph", timeout=10).json()
    assert [node["id"] for node in graph["nodes"]] == ["__start__", *NODE_NAMES, "__end__"]
    chain = ["__start__", *NODE_NAMES, "__end__"]
    expected = set(itertools.pairwise(chain))
    assert {(edge["source"], edge["target"]) for edge in graph["edges"]} == expected
    assert not any(edge.get("conditional") for edge in graph["edges"])


def test_input_schema_documents_every_field_with_the_seed_defaults(schemas: dict[str, Any]) -> None:
    schema = schemas["input_schema"]
    assert schema["required"] == ["queryText", "filter"]
    properties = schema["properties"]
    assert set(properties) == {"queryText", "filter", "options"}
    assert all(properties[name].get("description") for name in properties)
    filter_schema = _resolve(schema, properties["filter"])
    assert filter_schema["required"] == ["tenantId"]
    assert set(filter_schema["properties"]) == {
        *("tenantId", "projectKey", "profileKindIn", "secured"),
        *("nodeTypes", "namespaces", "tags", "updatedAfter", "maxAgeDays", "asOf"),
    }
    assert filter_schema["properties"]["secured"]["default"] is True
    options_schema = _resolve(schema, properties["options"])
    assert {name: field["default"] for name, field in options_schema["properties"].items()} == SEED_OPTION_DEFAULTS
    for nested in (filter_schema, options_schema):
        assert all(field.get("description") for field in nested["properties"].values())
    assert options_schema["properties"]["topK"]["maximum"] == 100


def test_the_schemas_accept_a_studio_form_and_reject_a_form_without_tenant(schemas: dict[str, Any]) -> None:
    validator = jsonschema_rs.validator_for(schemas["input_schema"])
    for request, _ in SEARCHES.values():
        assert validator.is_valid(request)
    assert not validator.is_valid({"queryText": "token refresh", "filter": {"secured": False}})


def test_output_and_context_schemas(schemas: dict[str, Any]) -> None:
    output = schemas["output_schema"]
    assert list(output["properties"]) == [
        *("hits", "episodes", "graphNodes", "graphEdges", "passages", "promptPack", "candidates"),
        *("filtersApplied", "warnings", "graphContextIncluded"),
    ]
    pack = _resolve(output, output["properties"]["promptPack"])
    assert set(pack["properties"]) == {"contextMarkdown", "citations"}
    citation = _resolve(output, pack["properties"]["citations"]["items"])
    assert {"vectorScore", "adjustedScore", "reachedBy", "via"} <= set(citation["properties"])
    candidate = _resolve(output, output["properties"]["candidates"]["items"])
    assert {"vectorScore", "adjustedScore", "reachedBy", "hops", "via", "scoringBreakdown"} <= set(
        candidate["properties"]
    )
    context = schemas["context_schema"]
    assert "principal" in context["properties"]


def test_the_index_graph_has_an_input_form(dev_server: DevServer) -> None:
    """``brain_index``'s schemas are served too (Studio's form for it), and its input validates."""
    found = httpx.post(f"{dev_server.url}/assistants/search", json={"graph_id": INDEX_GRAPH_NAME}, timeout=10).json()
    assert [assistant["graph_id"] for assistant in found] == [INDEX_GRAPH_NAME]
    response = httpx.get(f"{dev_server.url}/assistants/{found[0]['assistant_id']}/schemas", timeout=10)
    assert response.status_code == 200
    schemas = response.json()
    assert set(schemas["input_schema"]["properties"]) == {"tenants", "profiles", "full"}
    assert set(schemas["output_schema"]["properties"]) == {"report"}
    validator = jsonschema_rs.validator_for(schemas["input_schema"])
    assert validator.is_valid({"tenants": ["acme"], "full": False})
    assert not validator.is_valid({"full": "yes"})
    assert "typing_extensions.TypedDict" not in dev_server.log()


def test_debug_stream_shows_each_steps_state_update(sdk: SyncLangGraphClient) -> None:
    request, _ = SEARCHES["public"]
    results: dict[str, dict[str, Any]] = {}
    tasks: list[str] = []
    for part in sdk.runs.stream(None, GRAPH_NAME, input=request, stream_mode="debug"):
        if part.event != "debug":
            continue
        payload = part.data["payload"]
        if part.data["type"] == "task":
            tasks.append(payload["name"])
        elif part.data["type"] == "task_result":
            assert payload["error"] is None
            results[payload["name"]] = payload["result"]
    assert tasks == list(NODE_NAMES)
    assert {name: list(result) for name, result in results.items()} == STEP_WRITES
    assert results["embed"]["request"]["filter"] == {
        "tenantId": "acme",
        "projectKey": None,
        "profileKindIn": None,
        "secured": False,
        **dict.fromkeys(("nodeTypes", "namespaces", "tags", "updatedAfter", "maxAgeDays", "asOf")),
    }
    assert results["embed"]["request"]["options"] == SEED_OPTION_DEFAULTS | {"retrievalMode": "hybrid"}  # resolved
    assert all(isinstance(vector, list) and vector for vector in results["embed"]["queryVectors"].values())
    assert results["build_pack"]["promptPack"]["contextMarkdown"].startswith("# Brain search context")
    ranked = [candidate["nodeId"] for candidate in results["expand"]["candidates"]]
    cited = [citation["sourceNodeId"] for citation in results["build_pack"]["promptPack"]["citations"]]
    assert cited == ranked[: len(cited)]


def test_a_failed_run_shows_its_error_type_and_message(sdk: SyncLangGraphClient) -> None:
    """Studio shows a failed run from the thread (its ``error``), the thread state (the failed task) and
    the debug stream; each carries brain-graph's own message, not "An internal error occurred"."""
    thread_id = sdk.threads.create()["thread_id"]
    debug = list(sdk.runs.stream(thread_id, GRAPH_NAME, input=SECURED_WITHOUT_PRINCIPAL, stream_mode="debug"))
    results = [part.data["payload"] for part in debug if part.event == "debug" and part.data["type"] == "task_result"]
    assert [result["name"] for result in results] == ["embed"]
    assert results[0]["error"]["error"] == "AuthorizationError"
    assert results[0]["error"]["message"].startswith(NO_PRINCIPAL)
    assert [part.data for part in debug if part.event == "error"] == [results[0]["error"]]
    thread = sdk.threads.get(thread_id)
    assert thread["status"] == "error"
    assert thread["error"] == results[0]["error"]  # an object {error, message}, whatever the SDK type says
    (task,) = sdk.threads.get_state(thread_id)["tasks"]
    assert task["name"] == "embed"
    assert task["error"] is not None
    assert task["error"].startswith(f"AuthorizationError('{NO_PRINCIPAL}")
    assert [run["status"] for run in sdk.runs.list(thread_id)] == ["error"]


def test_the_server_prints_the_studio_url_for_its_base_url(dev_server: DevServer) -> None:
    assert f"https://smith.langchain.com/studio/?baseUrl={dev_server.url}" in dev_server.log()
