"""The MCP endpoint in process, driven by the official MCP client over streamable HTTP (httpx2's ASGI
transport) on the embedded store with the example graph: the tools it lists, what each returns, the
gate (401 / 429 before any tool runs), the tenant and scope rules, one-line tool errors, determinism."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import httpx2
import pytest
from mcp import ClientSession
from mcp.types import CallToolResult

from brain_graph.auth import Gate, JwtVerifier, TokenIssuer
from brain_graph.auth.principals import as_principal
from brain_graph.auth.rate_limit import RateLimiter, parse_rate_limit, rate_limit_storage
from brain_graph.browse import service as browse
from brain_graph.core.contracts import MAX_QUERY_CHARS, MAX_TOP_K
from brain_graph.core.errors import INTERNAL_MESSAGE, ConfigurationError
from brain_graph.core.security import AccessScope
from brain_graph.graphs.search import BrainSearchGraph
from brain_graph.pipeline.services import SearchServices
from brain_graph.serving.mcp import MCP_PATH, BrainMCP, create_mcp_app
from brain_graph.serving.mcp.results import BrainSearchToolOutput, compact_json
from tests.mcp_client import ASGI_BASE, bearer_headers, call, texts, tool_error, with_session
from tests.platform.cases import ALICE, SECURED_POSTMORTEM, in_process

SECRET = "mcp-unit-test-secret-of-at-least-32-chars"
ISSUER = TokenIssuer(SECRET)
URL = ASGI_BASE + MCP_PATH
SEARCH = {"queryText": "token refresh postmortem", "tenantId": "acme", "topK": 3}
TOOLS = {"brain_search", "get_node", "neighbours", "search_nodes"}


def alice() -> str:
    return ISSUER.mint("alice", ["acme"], groups=["security"])


def bob() -> str:
    return ISSUER.mint("bob", ["acme"])


def endpoint(graph: BrainSearchGraph, services: SearchServices, gate: Gate | None = None) -> BrainMCP:
    chosen = gate or Gate(JwtVerifier(SECRET), None)
    return create_mcp_app(lambda: graph, lambda: services, lambda: chosen)


@pytest.fixture
def app(example_graph: BrainSearchGraph, example_services: SearchServices) -> BrainMCP:
    return endpoint(example_graph, example_services)


def test_lists_four_read_only_tools_with_bounded_arguments(app: BrainMCP) -> None:
    listed = with_session(app, alice(), lambda session: session.list_tools())
    tools = {tool.name: tool for tool in listed.tools}
    assert set(tools) == TOOLS
    for tool in tools.values():
        assert tool.annotations is not None
        assert tool.annotations.read_only_hint is True
        assert "tenantId" in tool.input_schema["required"]
        assert len(tool.description or "") > 200  # written for an agent: what it returns, when to use it
    search = tools["brain_search"].input_schema
    assert search["required"] == ["queryText", "tenantId"]
    assert search["properties"]["topK"]["maximum"] == MAX_TOP_K
    assert search["properties"]["queryText"]["maxLength"] == MAX_QUERY_CHARS
    assert tools["brain_search"].output_schema == BrainSearchToolOutput.model_json_schema(by_alias=True)
    assert tools["neighbours"].input_schema["properties"]["cursor"]["anyOf"][0]["type"] == "string"


def test_brain_search_returns_the_pack_and_its_citations(app: BrainMCP, example_graph: BrainSearchGraph) -> None:
    result = call(app, alice(), "brain_search", SEARCH)
    assert not result.is_error
    expected = in_process(
        example_graph,
        {"queryText": SEARCH["queryText"], "filter": {"tenantId": "acme"}, "options": {"topK": 3}},
        {**ALICE, "tenants": ["acme"]},
    )
    markdown, sources = texts(result)
    assert markdown == expected["promptPack"]["contextMarkdown"]
    structured = BrainSearchToolOutput.model_validate(result.structured_content).to_wire()
    assert structured["citations"] == expected["promptPack"]["citations"]
    assert [hit["nodeId"] for hit in structured["hits"]] == [hit["nodeId"] for hit in expected["hits"]]
    assert sources.startswith('{"citations":[{"sourceNodeId":')
    assert SECURED_POSTMORTEM in [citation["sourceNodeId"] for citation in structured["citations"]]
    assert len(markdown) + len(sources) < len(str(expected)) / 3  # the pack, not the whole state


def test_secured_items_follow_the_tokens_principal(app: BrainMCP) -> None:
    cited = BrainSearchToolOutput.model_validate(call(app, bob(), "brain_search", SEARCH).structured_content)
    assert SECURED_POSTMORTEM not in [citation.source_node_id for citation in cited.citations]
    public = call(app, alice(), "brain_search", {**SEARCH, "secured": False})
    assert SECURED_POSTMORTEM not in texts(public)[0]


def test_the_same_call_gives_byte_identical_text(app: BrainMCP) -> None:
    async def twice(session: ClientSession) -> tuple[CallToolResult, CallToolResult]:
        return await session.call_tool("brain_search", SEARCH), await session.call_tool("brain_search", SEARCH)

    first, second = with_session(app, alice(), twice)
    assert texts(first) == texts(second)
    assert first.structured_content == second.structured_content


def test_a_tenant_the_token_does_not_name_is_a_forbidden_tool_error(app: BrainMCP) -> None:
    line = tool_error(call(app, alice(), "brain_search", {**SEARCH, "tenantId": "globex"}))
    assert line.startswith("FORBIDDEN: principal 'alice' may not read tenant 'globex'")


def test_a_token_without_the_reader_scope_is_refused(app: BrainMCP) -> None:
    token = ISSUER.mint("carol", ["acme"], scopes=["maintainer"])
    assert not call(app, token, "brain_search", SEARCH).is_error  # maintainer implies reader
    line = tool_error(call(app, ISSUER.mint("dave", ["acme"], scopes=[]), "brain_search", SEARCH))
    assert line.startswith("FORBIDDEN: ")


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({**SEARCH, "topK": MAX_TOP_K + 1}, "INVALID_REQUEST: invalid request: topK: "),
        ({**SEARCH, "queryText": ""}, "INVALID_REQUEST: invalid request: queryText: "),
        ({"queryText": "x"}, "INVALID_REQUEST: invalid request: tenantId: Field required"),
        ({**SEARCH, "expandDepth": 5}, "INVALID_REQUEST: invalid request: expandDepth: must be between 0 and 3"),
        ({**SEARCH, "nodeTypes": ["no.such_type"]}, "INVALID_REQUEST: invalid request: nodeTypes: "),
        ({**SEARCH, "maxAgeDays": 7}, "INVALID_REQUEST: invalid request: maxAgeDays: "),
    ],
    ids=["topK", "empty-query", "no-tenant", "deployment-depth", "unknown-type", "no-clock"],
)
def test_bad_arguments_are_one_line_naming_the_argument(app: BrainMCP, arguments: dict[str, Any], message: str) -> None:
    assert tool_error(call(app, alice(), "brain_search", arguments)).startswith(message)


def test_insecure_mode_without_a_token_fails_secured_searches_closed(
    example_graph: BrainSearchGraph, example_services: SearchServices
) -> None:
    app = endpoint(example_graph, example_services, Gate(None, None, insecure=True))
    assert tool_error(call(app, None, "brain_search", SEARCH)).startswith("UNAUTHORIZED: filter.secured is true")
    public = call(app, None, "brain_search", {**SEARCH, "secured": False})
    assert not public.is_error
    assert SECURED_POSTMORTEM not in texts(public)[0]


INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
}
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def post(app: BrainMCP, token: str | None, count: int = 1) -> list[httpx2.Response]:
    """``count`` raw ``initialize`` POSTs (the HTTP layer under test, before any MCP message is read)."""

    async def main() -> list[httpx2.Response]:
        headers = {**MCP_HEADERS, **bearer_headers(token)}
        async with app.lifespan(), httpx2.AsyncClient(transport=httpx2.ASGITransport(app=app)) as http:
            return [await http.post(URL, json=INITIALIZE, headers=headers) for _ in range(count)]

    return asyncio.run(main())


@pytest.mark.parametrize(
    ("token", "message"),
    [
        (None, "missing bearer token"),
        (ISSUER.mint("alice", ["acme"]) + "x", "signature does not verify"),
        (TokenIssuer("another-secret-of-at-least-32-characters").mint("alice", ["acme"]), "signature does not verify"),
    ],
    ids=["missing", "tampered", "other-key"],
)
def test_requests_without_a_valid_token_are_401(app: BrainMCP, token: str | None, message: str) -> None:
    [response] = post(app, token)
    assert response.status_code == 401
    assert response.headers["WWW-Authenticate"] == "Bearer"
    error = response.json()["error"]
    assert error["code"] == "UNAUTHENTICATED"
    assert message in error["message"]


def test_a_principal_over_its_rate_limit_gets_429_with_retry_after(
    example_graph: BrainSearchGraph, example_services: SearchServices
) -> None:
    limit = parse_rate_limit("2 per 1 hour")
    assert limit is not None
    gate = Gate(JwtVerifier(SECRET), RateLimiter(limit, rate_limit_storage("memory://")))
    first, second, third = post(endpoint(example_graph, example_services, gate), alice(), count=3)
    assert (first.status_code, second.status_code) == (200, 200)
    assert first.headers["X-RateLimit-Limit"] == "2"
    assert third.status_code == 429
    assert int(third.headers["Retry-After"]) > 0
    assert third.json()["error"]["code"] == "RATE_LIMITED"


def browse_reference(services: SearchServices, principal: dict[str, Any]) -> AccessScope:
    return browse.browse_scope(services, "acme", secured=True, principal=as_principal(principal))


ALICE_PRINCIPAL = {**ALICE, "tenants": ["acme"]}
HUB = "acme:work:AUTH-101"


def test_search_nodes_returns_the_graph_apis_matches(app: BrainMCP, example_services: SearchServices) -> None:
    result = call(app, alice(), "search_nodes", {"tenantId": "acme", "query": "token refresh", "limit": 5})
    assert not result.is_error, texts(result)
    scope = browse_reference(example_services, ALICE_PRINCIPAL)
    expected = browse.node_search(example_services, scope, "token refresh", limit=5)
    assert result.structured_content == expected
    assert texts(result) == [compact_json(expected)]
    assert 0 < len(expected["results"]) <= 5


def test_get_node_returns_the_node_and_its_relationships(app: BrainMCP, example_services: SearchServices) -> None:
    arguments = {"tenantId": "acme", "nodeId": HUB, "relationships": "all", "limit": 3}
    result = call(app, alice(), "get_node", arguments)
    assert not result.is_error, texts(result)
    scope = browse_reference(example_services, ALICE_PRINCIPAL)
    expected = browse.node_view(example_services, scope, HUB, relationships="all", limit=3)
    assert result.structured_content == expected
    assert texts(result) == [compact_json(expected)]
    assert expected["node"]["id"] == HUB


def test_a_secured_node_is_not_found_for_a_principal_it_does_not_list(app: BrainMCP) -> None:
    arguments = {"tenantId": "acme", "nodeId": SECURED_POSTMORTEM}
    assert not call(app, alice(), "get_node", arguments).is_error
    assert tool_error(call(app, bob(), "get_node", arguments)).startswith("GRAPH_NODE_NOT_FOUND: ")
    assert tool_error(call(app, alice(), "get_node", {**arguments, "secured": False})).startswith(
        "GRAPH_NODE_NOT_FOUND: "
    )


def test_neighbours_pages_follow_the_cursor_without_repeats(app: BrainMCP) -> None:
    arguments: dict[str, Any] = {"tenantId": "acme", "nodeId": HUB, "direction": "all"}

    async def pages(session: ClientSession) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        whole = (await session.call_tool("neighbours", {**arguments, "limit": 100})).structured_content
        assert isinstance(whole, dict)
        paged: list[dict[str, Any]] = []
        cursor: str | None = None
        while True:
            page = await session.call_tool(
                "neighbours", {**arguments, "limit": 2, **({"cursor": cursor} if cursor else {})}
            )
            assert not page.is_error, texts(page)
            content = page.structured_content
            assert isinstance(content, dict)
            paged.extend(content["neighbours"])
            if not content["hasMore"]:
                return paged, whole
            cursor = content["cursor"]

    paged, whole = with_session(app, alice(), pages)
    assert not whole["hasMore"]
    assert len(whole["neighbours"]) > 2  # more than one page
    assert paged == whole["neighbours"]


@pytest.mark.parametrize(
    ("tool", "arguments", "message"),
    [
        (
            "get_node",
            {"tenantId": "globex", "nodeId": HUB},
            "FORBIDDEN: principal 'alice' may not read tenant 'globex'",
        ),
        (
            "neighbours",
            {"tenantId": "acme", "nodeId": HUB, "cursor": "bm90LW91cnM"},
            "INVALID_REQUEST: invalid request: cursor: ",
        ),
        ("neighbours", {"tenantId": "acme", "nodeId": HUB, "limit": 0}, "INVALID_REQUEST: invalid request: limit: "),
        (
            "get_node",
            {"tenantId": "acme", "nodeId": HUB, "relationships": "up"},
            "INVALID_REQUEST: invalid request: relationships: ",
        ),
        ("search_nodes", {"tenantId": "acme", "query": "   "}, "INVALID_REQUEST: invalid request: query: "),
    ],
    ids=["tenant", "cursor", "limit", "direction", "blank-query"],
)
def test_graph_tool_errors_are_one_line_naming_the_argument(
    app: BrainMCP, tool: str, arguments: dict[str, Any], message: str
) -> None:
    assert tool_error(call(app, alice(), tool, arguments)).startswith(message)


def test_building_the_endpoint_leaves_the_hosts_logging_alone(
    example_graph: BrainSearchGraph, example_services: SearchServices
) -> None:
    root = logging.getLogger()
    before = (list(root.handlers), root.level)
    endpoint(example_graph, example_services)
    assert (list(root.handlers), root.level) == before


def test_a_misconfigured_gate_is_a_generic_500_with_the_detail_in_the_log(
    example_graph: BrainSearchGraph, example_services: SearchServices, caplog: pytest.LogCaptureFixture
) -> None:
    secret_path = "/etc/brain-graph/keys/public.pem"

    def broken_gate() -> Gate:
        raise ConfigurationError(f"BRAIN_GRAPH_AUTH_PUBLIC_KEY_FILE: cannot read {secret_path}")

    app = create_mcp_app(lambda: example_graph, lambda: example_services, broken_gate)
    with caplog.at_level(logging.ERROR, logger="brain_graph.mcp"):
        [response] = post(app, alice())
    assert response.status_code == 500
    assert response.json()["error"] == {"code": "INTERNAL_SERVER_ERROR", "message": INTERNAL_MESSAGE}
    assert any(secret_path in record.getMessage() for record in caplog.records)
