"""``/brain/mcp`` on a real ``langgraph dev`` server with the repository's langgraph.json and bearer
tokens, driven by the official MCP client over streamable HTTP: the custom app's lifespan runs the MCP
session manager, the tools answer what the in-process graph does for the token's principal, the
tenant rule and the gate hold, and the server's generic ``/mcp`` is off."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp import ClientSession
from mcp.types import CallToolResult

from brain_graph.auth import TokenIssuer
from brain_graph.graphs.search import BrainSearchGraph
from brain_graph.serving.mcp import MCP_PATH
from tests.mcp_client import call, texts, tool_error, with_session
from tests.platform.cases import ALICE, SECURED_POSTMORTEM, in_process
from tests.platform.devserver import REPO_ROOT, DevServer, run_dev_server

pytestmark = pytest.mark.server

SECRET = "mcp-server-test-secret-0123456789abcdef"
ISSUER = TokenIssuer(SECRET)
SEARCH = {"queryText": "token refresh postmortem", "tenantId": "acme", "topK": 3}


@pytest.fixture(scope="module")
def server(brain_home: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevServer]:
    env = {"BRAIN_GRAPH_HOME": str(brain_home), "BRAIN_GRAPH_AUTH_SECRET": SECRET}
    with run_dev_server(REPO_ROOT / "langgraph.json", tmp_path_factory.mktemp("mcp-server"), env) as running:
        yield running


def alice() -> str:
    return ISSUER.mint("alice", ["acme"], groups=["security"])


def test_lists_the_tools(server: DevServer) -> None:
    listed = with_session(server.url, alice(), lambda session: session.list_tools())
    assert sorted(tool.name for tool in listed.tools) == ["brain_search", "get_node", "neighbours", "search_nodes"]


def test_brain_search_is_the_pack_of_the_in_process_graph(server: DevServer, home_graph: BrainSearchGraph) -> None:
    async def twice(session: ClientSession) -> tuple[CallToolResult, CallToolResult]:
        return await session.call_tool("brain_search", SEARCH), await session.call_tool("brain_search", SEARCH)

    first, second = with_session(server.url, alice(), twice)
    assert not first.is_error, texts(first)
    expected = in_process(
        home_graph,
        {"queryText": SEARCH["queryText"], "filter": {"tenantId": "acme"}, "options": {"topK": 3}},
        {**ALICE, "tenants": ["acme"]},
    )
    assert texts(first)[0] == expected["promptPack"]["contextMarkdown"]
    assert isinstance(first.structured_content, dict)
    assert first.structured_content["citations"] == expected["promptPack"]["citations"]
    assert SECURED_POSTMORTEM in texts(first)[0]
    assert texts(first) == texts(second)


def test_another_tenant_is_a_forbidden_tool_error(server: DevServer) -> None:
    result = call(server.url, alice(), "brain_search", {**SEARCH, "tenantId": "globex"})
    assert tool_error(result).startswith("FORBIDDEN: principal 'alice' may not read tenant 'globex'")


def _initialize(server: DevServer, headers: dict[str, str]) -> httpx.Response:
    body: dict[str, Any] = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    }
    accept = {"Accept": "application/json, text/event-stream"}
    return httpx.post(server.url + MCP_PATH, json=body, headers={**accept, **headers}, timeout=60)


def test_a_request_without_a_token_is_401(server: DevServer) -> None:
    response = _initialize(server, {})
    assert response.status_code == 401
    assert response.headers["WWW-Authenticate"] == "Bearer"
    assert response.json()["error"]["code"] == "UNAUTHENTICATED"
    assert _initialize(server, {"Authorization": f"Bearer {alice()}"}).status_code == 200


def test_the_servers_generic_mcp_endpoint_is_off(server: DevServer) -> None:
    response = httpx.post(
        server.url + "/mcp",
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        headers={"Authorization": f"Bearer {alice()}", "Accept": "application/json, text/event-stream"},
        timeout=60,
    )
    assert response.status_code == 404


def test_an_agent_finds_a_node_then_reads_it(server: DevServer) -> None:
    async def find_then_read(session: ClientSession) -> tuple[CallToolResult, CallToolResult]:
        found = await session.call_tool("search_nodes", {"tenantId": "acme", "query": "token refresh", "limit": 3})
        assert isinstance(found.structured_content, dict), texts(found)
        first = found.structured_content["results"][0]["id"]
        return found, await session.call_tool("get_node", {"tenantId": "acme", "nodeId": first, "limit": 5})

    found, node = with_session(server.url, alice(), find_then_read)
    assert not node.is_error, texts(node)
    assert isinstance(found.structured_content, dict)
    assert isinstance(node.structured_content, dict)
    assert node.structured_content["node"]["id"] == found.structured_content["results"][0]["id"]


def test_the_example_agent_runs_against_the_server(server: DevServer) -> None:
    command = [sys.executable, str(REPO_ROOT / "examples" / "mcp_agent.py"), "--url", server.url, SEARCH["queryText"]]
    env = {**os.environ, "BRAIN_GRAPH_TOKEN": alice()}
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert f"ai: The best source is [1] Postmortem: OAuth token refresh outage ({SECURED_POSTMORTEM})" in done.stdout
