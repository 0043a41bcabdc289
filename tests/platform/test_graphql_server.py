"""/graphql and the runs API on one `langgraph dev` server with the repository's langgraph.json and
bearer tokens: one principal, one set of rules, one rate-limit budget, stable error codes."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from langgraph.graph import END, START, StateGraph

from brain_graph.auth import TokenIssuer
from brain_graph.auth.settings import load_auth_settings
from brain_graph.graphs.index import INDEX_GRAPH_NAME
from brain_graph.graphs.search import GRAPH_NAME, BrainSearchGraph
from brain_graph.pipeline.state import BrainSearchContext
from brain_graph.serving.remote import remote_brain_search
from tests.platform.cases import SECURED_POSTMORTEM, canonical, in_process
from tests.platform.devserver import REPO_ROOT, DevServer, run_dev_server
from tests.platform.graphql_queries import BRAIN_SEARCH, variables
from tests.platform.remote_parent import ParentState

pytestmark = pytest.mark.server

SECRET = "graphql-server-test-secret-0123456789abcdef"
RATE_LIMIT = 20
RATE_WINDOW_S = 3
EXPIRED_AT = 1_000_000_000  # a token that expired then (2001) has expired whenever the tests run
ISSUER = TokenIssuer(SECRET)
SEED_EXAMPLE = {"queryText": "token refresh postmortem", "filter": {"tenantId": "acme", "secured": True}}


def token(subject: str, *, tenants: tuple[str, ...] = ("acme",), groups: tuple[str, ...] = (), **extra: Any) -> str:
    return ISSUER.mint(subject, tenants, groups=groups, **extra)


def alice() -> str:
    """A token of alice (group ``security``), issued now: right before the request it is sent with."""
    return token("alice", groups=("security",))


def bob() -> str:
    """A token of bob, issued now."""
    return token("bob")


@pytest.fixture(scope="module")
def server(brain_home: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevServer]:
    env = {
        "BRAIN_GRAPH_HOME": str(brain_home),
        "BRAIN_GRAPH_AUTH_SECRET": SECRET,
        "BRAIN_GRAPH_RATE_LIMIT": f"{RATE_LIMIT} per {RATE_WINDOW_S} seconds",
    }
    with run_dev_server(REPO_ROOT / "langgraph.json", tmp_path_factory.mktemp("graphql-server"), env) as running:
        yield running


def graphql(
    server: DevServer, bearer: str | None, request: dict[str, Any], query: str = BRAIN_SEARCH
) -> httpx.Response:
    headers = {"Authorization": f"Bearer {bearer}"} if bearer is not None else {}
    body = {"query": query, "variables": variables(request)}
    return httpx.post(f"{server.url}/graphql", json=body, headers=headers, timeout=60)


def run_wait(server: DevServer, bearer: str | None, graph: str, graph_input: dict[str, Any]) -> httpx.Response:
    headers = {"Authorization": f"Bearer {bearer}"} if bearer is not None else {}
    body = {"assistant_id": graph, "input": graph_input}
    return httpx.post(f"{server.url}/runs/wait", json=body, headers=headers, timeout=60)


def error_code(response: httpx.Response) -> str:
    errors = response.json()["errors"]
    assert len(errors) == 1
    assert "\n" not in errors[0]["message"]
    assert "Traceback" not in errors[0]["message"]
    return str(errors[0]["extensions"]["code"])


def hit_ids(result: dict[str, Any]) -> list[str]:
    return [hit["nodeId"] for hit in result["hits"]]


def test_the_seed_query_equals_the_graphs_own_output(server: DevServer, home_graph: BrainSearchGraph) -> None:
    response = graphql(server, alice(), SEED_EXAMPLE)
    assert response.status_code == 200, response.text
    result = response.json()["data"]["brainSearch"]
    principal = {"principalId": "alice", "groups": ["security"], "tenants": ["acme"]}
    assert canonical(result) == canonical(in_process(home_graph, SEED_EXAMPLE, principal))
    assert SECURED_POSTMORTEM in hit_ids(result)
    assert int(response.headers["X-RateLimit-Limit"]) == RATE_LIMIT


def test_graphql_and_the_runs_api_give_the_same_result(server: DevServer) -> None:
    request = {**SEED_EXAMPLE, "options": {"topK": 5, "expandDepth": 2}}
    over_graphql = graphql(server, alice(), request).json()["data"]["brainSearch"]
    over_runs = run_wait(server, alice(), GRAPH_NAME, request).json()
    assert canonical(over_graphql) == canonical(over_runs)


def test_secured_items_follow_the_tokens_principal(server: DevServer) -> None:
    assert SECURED_POSTMORTEM in hit_ids(graphql(server, alice(), SEED_EXAMPLE).json()["data"]["brainSearch"])
    assert SECURED_POSTMORTEM not in hit_ids(graphql(server, bob(), SEED_EXAMPLE).json()["data"]["brainSearch"])
    assert SECURED_POSTMORTEM not in hit_ids(run_wait(server, bob(), GRAPH_NAME, SEED_EXAMPLE).json())


@pytest.mark.parametrize(
    ("bearer", "message"),
    [
        (None, "missing bearer token"),
        (ISSUER.mint("alice", ["acme"]) + "x", "signature does not verify"),
        (TokenIssuer("another-secret-of-at-least-32-characters").mint("alice", ["acme"]), "signature does not verify"),
        (ISSUER.mint("alice", ["acme"], ttl_s=60, now=EXPIRED_AT - 60), "expired"),
        ("not-a-jwt", "invalid"),
    ],
    ids=["missing", "tampered", "other-key", "expired", "garbage"],
)
def test_bad_credentials_are_unauthenticated(server: DevServer, bearer: str | None, message: str) -> None:
    response = graphql(server, bearer, SEED_EXAMPLE)
    assert response.status_code == 401
    assert response.headers["WWW-Authenticate"] == "Bearer"
    assert error_code(response) == "UNAUTHENTICATED"
    assert message in response.json()["errors"][0]["message"]
    over_runs = run_wait(server, bearer, GRAPH_NAME, SEED_EXAMPLE)
    assert over_runs.status_code == 401
    assert message in over_runs.json()["detail"]


def test_another_tenant_is_forbidden_not_empty(server: DevServer) -> None:
    request = {"queryText": "token refresh", "filter": {"tenantId": "globex", "secured": False}}
    response = graphql(server, alice(), request)
    assert error_code(response) == "FORBIDDEN"
    assert "may not read tenant 'globex'" in response.json()["errors"][0]["message"]
    error = run_wait(server, alice(), GRAPH_NAME, request).json()["__error__"]
    assert error["error"] == "ForbiddenError"
    assert "may not read tenant 'globex'" in error["message"]
    both = token("carol", tenants=("acme", "globex"))
    assert graphql(server, both, request).json()["data"]["brainSearch"]["hits"]


def test_input_errors_have_stable_codes(server: DevServer) -> None:
    no_tenant = graphql(server, alice(), {"queryText": "x", "filter": {"secured": False}})
    assert error_code(no_tenant) == "TENANT_REQUIRED"
    blank_tenant = graphql(server, alice(), {"queryText": "x", "filter": {"tenantId": "  "}})
    assert error_code(blank_tenant) == "TENANT_REQUIRED"
    top_k = graphql(server, alice(), {"queryText": "x", "filter": {"tenantId": "acme"}, "options": {"topK": 0}})
    assert error_code(top_k) == "BAD_USER_INPUT"
    assert top_k.json()["errors"][0]["extensions"]["field"] == "options.topK"
    unknown_field = graphql(
        server, alice(), SEED_EXAMPLE, query='{ brainSearch(queryText: "x", filter: {tenantId: "acme"}) { nope } }'
    )
    assert error_code(unknown_field) == "BAD_USER_INPUT"


def test_reader_searches_and_only_a_maintainer_indexes(server: DevServer) -> None:
    refused = run_wait(server, bob(), INDEX_GRAPH_NAME, {"tenants": ["acme"]}).json()["__error__"]
    assert refused["error"] == "ForbiddenError"
    assert "'maintainer' scope" in refused["message"]
    maintainer = token("mia", scopes=("maintainer",))
    outside = run_wait(server, maintainer, INDEX_GRAPH_NAME, {"tenants": ["globex"]}).json()["__error__"]
    assert outside["error"] == "ForbiddenError"
    report = run_wait(server, maintainer, INDEX_GRAPH_NAME, {"tenants": ["acme"]}).json()
    assert "__error__" not in report, report
    assert graphql(server, maintainer, SEED_EXAMPLE).json()["data"]["brainSearch"]["hits"]  # maintainer reads too


def test_threads_belong_to_their_creator(server: DevServer) -> None:
    headers = {"Authorization": f"Bearer {alice()}"}
    thread = httpx.post(f"{server.url}/threads", json={}, headers=headers, timeout=30).json()
    assert thread["metadata"]["owner"] == "alice"
    own = httpx.get(f"{server.url}/threads/{thread['thread_id']}", headers=headers, timeout=30)
    assert own.status_code == 200
    other = httpx.get(f"{server.url}/threads/{thread['thread_id']}", headers={"Authorization": f"Bearer {bob()}"})
    assert other.status_code == 404


def test_a_remote_graph_node_searches_as_the_parents_principal(
    server: DevServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BRAIN_GRAPH_AUTH_SECRET", SECRET)  # the delegated token is minted with the server's key
    load_auth_settings.cache_clear()
    try:
        builder: StateGraph[ParentState, BrainSearchContext, ParentState, ParentState] = StateGraph(
            ParentState, context_schema=BrainSearchContext
        )
        builder.add_node("search", remote_brain_search(server.url))
        builder.add_edge(START, "search")
        builder.add_edge("search", END)
        parent = builder.compile()
        as_alice = parent.invoke(
            SEED_EXAMPLE, context=BrainSearchContext(principal={"principalId": "alice", "groups": ["security"]})
        )
        assert SECURED_POSTMORTEM in hit_ids(as_alice)
        as_bob = parent.invoke(SEED_EXAMPLE, context=BrainSearchContext(principal={"principalId": "bob"}))
        assert SECURED_POSTMORTEM not in hit_ids(as_bob)
    finally:
        load_auth_settings.cache_clear()


def test_refused_graphql_requests_log_no_traceback(server: DevServer) -> None:
    """A caller's error is an answer, not a server fault: ariadne's traceback (executor frames) stays out."""
    assert error_code(graphql(server, None, SEED_EXAMPLE)) == "UNAUTHENTICATED"
    assert error_code(graphql(server, alice(), {"queryText": "x", "filter": {"tenantId": "globex"}})) == "FORBIDDEN"
    assert (
        error_code(graphql(server, alice(), {"queryText": "x", "filter": {"tenantId": "acme"}, "options": {"topK": 0}}))
        == "BAD_USER_INPUT"
    )
    assert "graphql/execution" not in server.log()


def test_one_request_runs_at_most_one_search(server: DevServer) -> None:
    search = 'brainSearch(queryText: "token", filter: {tenantId: "acme", secured: false}) { hits { nodeId } }'
    aliased = graphql(server, alice(), SEED_EXAMPLE, query=f"{{ a: {search} b: {search} }}")
    assert error_code(aliased) == "BAD_USER_INPUT"
    assert "at most 1" in aliased.json()["errors"][0]["message"]
    fragments = f"query {{ ...A ...B }} fragment A on Query {{ a: {search} }} fragment B on Query {{ b: {search} }}"
    assert error_code(graphql(server, alice(), SEED_EXAMPLE, query=fragments)) == "BAD_USER_INPUT"
    body = [{"query": f"{{ {search} }}"}, {"query": f"{{ {search} }}"}]  # a batch: not accepted
    batch = httpx.post(f"{server.url}/graphql", json=body, headers={"Authorization": f"Bearer {alice()}"}, timeout=60)
    assert batch.status_code == 400
    assert "hits" not in batch.text


def test_studio_header_crons_and_batches_get_no_way_around_the_token(server: DevServer) -> None:
    run = {"assistant_id": GRAPH_NAME, "input": {"queryText": "x", "filter": {"tenantId": "globex", "secured": False}}}
    studio = httpx.post(f"{server.url}/runs/wait", json=run, headers={"x-auth-scheme": "langsmith"}, timeout=30)
    assert studio.status_code == 401  # disable_studio_auth: the header is no credential
    headers = {"Authorization": f"Bearer {alice()}"}
    thread = httpx.post(f"{server.url}/threads", json={}, headers=headers, timeout=30).json()["thread_id"]
    cron = {**run, "schedule": "* * * * *"}
    refused = httpx.post(f"{server.url}/threads/{thread}/runs/crons", json=cron, headers=headers, timeout=30)
    assert refused.status_code == 403
    assert "crons" in refused.text
    batcher = token("batcher")
    small = {"queryText": "token", "filter": {"tenantId": "acme", "secured": False}, "options": {"topK": 1}}
    batch = [{"assistant_id": GRAPH_NAME, "input": small}] * (RATE_LIMIT + 5)
    response = httpx.post(
        f"{server.url}/runs/batch", json=batch, headers={"Authorization": f"Bearer {batcher}"}, timeout=60
    )
    assert response.status_code == 429  # every run is charged, not the request once
    assert "Retry-After" in response.headers


@pytest.fixture(scope="module")
def parent_server(server: DevServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevServer]:
    """A second server, with the same bearer-token auth, serving a parent graph whose node runs
    brain_search on ``server`` through a RemoteGraph."""
    workdir = tmp_path_factory.mktemp("remote-parent")
    config = {
        "dependencies": ["."],
        "graphs": {"parent": "tests.platform.remote_parent:make_graph"},
        "auth": {"path": "brain_graph.serving.langgraph_auth:auth", "disable_studio_auth": True},
        "env": {},
    }
    (workdir / "langgraph.json").write_text(json.dumps(config), encoding="utf-8")
    env = {"BRAIN_GRAPH_AUTH_SECRET": SECRET, "BRAIN_GRAPH_TEST_REMOTE_URL": server.url, "PYTHONPATH": str(REPO_ROOT)}
    with run_dev_server(workdir / "langgraph.json", workdir, env) as running:
        yield running


def test_a_parent_on_a_server_searches_remotely_as_its_authenticated_user(parent_server: DevServer) -> None:
    as_alice = run_wait(parent_server, alice(), "parent", SEED_EXAMPLE).json()
    assert SECURED_POSTMORTEM in hit_ids(as_alice)
    as_bob = run_wait(parent_server, bob(), "parent", SEED_EXAMPLE).json()
    assert SECURED_POSTMORTEM not in hit_ids(as_bob)
    other_tenant = {"queryText": "x", "filter": {"tenantId": "globex", "secured": False}}
    refused = run_wait(parent_server, alice(), "parent", other_tenant).json()["__error__"]
    assert refused["error"] == "ForbiddenError"  # the remote run's error, type and message kept
    assert "may not read tenant 'globex'" in refused["message"]  # the token carries alice's tenants only


@pytest.mark.parametrize("mode", ["vector", "lexical", "hybrid"])
def test_the_retrieval_options_over_graphql(server: DevServer, home_graph: BrainSearchGraph, mode: str) -> None:
    request = {**SEED_EXAMPLE, "queryText": "AUTH-104", "options": {"retrievalMode": mode, "minScore": 0.5}}
    response = graphql(server, alice(), request)
    assert response.status_code == 200, response.text
    result = response.json()["data"]["brainSearch"]
    principal = {"principalId": "alice", "groups": ["security"], "tenants": ["acme"]}
    assert canonical(result) == canonical(in_process(home_graph, request, principal))
    assert all((hit["vectorScore"] is None) == (mode == "lexical") for hit in result["hits"])
    assert all(candidate["adjustedScore"] >= 0.5 for candidate in result["candidates"])
    if mode != "vector":
        assert result["candidates"][0]["nodeId"] == "acme:work:AUTH-104"
        assert result["candidates"][0]["reachedBy"] == "exact"


@pytest.mark.parametrize(
    ("options", "field"), [({"retrievalMode": "fuzzy"}, "retrievalMode"), ({"minScore": -1}, "minScore")]
)
def test_bad_retrieval_options_over_graphql(server: DevServer, options: dict[str, Any], field: str) -> None:
    response = graphql(server, alice(), {**SEED_EXAMPLE, "options": options})
    assert error_code(response) == "BAD_USER_INPUT"
    assert field in response.json()["errors"][0]["message"]


def test_the_filters_over_graphql(server: DevServer, home_graph: BrainSearchGraph) -> None:
    filters = {"nodeTypes": ["cdm.doc", "cdm.work_item"], "tags": ["Token-Refresh"], "updatedAfter": "2026-01-01"}
    request = {**SEED_EXAMPLE, "filter": {**SEED_EXAMPLE["filter"], **filters}}
    response = graphql(server, alice(), request)
    assert response.status_code == 200, response.text
    result = response.json()["data"]["brainSearch"]
    principal = {"principalId": "alice", "groups": ["security"], "tenants": ["acme"]}
    assert canonical(result) == canonical(in_process(home_graph, request, principal))
    assert result["filtersApplied"]["tags"] == ["token-refresh"]
    assert result["filtersApplied"]["updatedAfter"] == "2026-01-01T00:00:00Z"
    assert [warning["code"] for warning in result["warnings"]] == ["recency_untimed"]  # tagged work items: no time


@pytest.mark.parametrize(
    ("filters", "field"),
    [
        ({"nodeTypes": ["cdm.workitem"]}, "filter.nodeTypes"),
        ({"updatedAfter": "last week"}, "filter.updatedAfter"),
        ({"maxAgeDays": -3, "asOf": "2026-01-01"}, "filter.maxAgeDays"),
        ({"maxAgeDays": 3}, "filter.maxAgeDays"),
    ],
)
def test_bad_filters_over_graphql(server: DevServer, filters: dict[str, Any], field: str) -> None:
    request = {**SEED_EXAMPLE, "filter": {**SEED_EXAMPLE["filter"], **filters}}
    response = graphql(server, alice(), request)
    assert error_code(response) == "BAD_USER_INPUT"
    assert field in response.json()["errors"][0]["message"]
