"""The MCP ``brain_search`` tool over the real Neo4j + Weaviate servers, driven by the official MCP
client in process: the same pack, byte for byte, as over the embedded store with the same data, for
the token's principal, and a tenant the token does not name is refused."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from brain_graph.auth import Gate, JwtVerifier, TokenIssuer
from brain_graph.graphs.search import build_graph
from brain_graph.pipeline.services import SearchServices
from brain_graph.serving.mcp import BrainMCP, create_mcp_app
from tests.integration.conftest import Loaded
from tests.mcp_client import call, texts, tool_error

pytestmark = pytest.mark.integration

SECRET = "mcp-integration-secret-0123456789abcdef"
ISSUER = TokenIssuer(SECRET)


def endpoint(services: SearchServices) -> BrainMCP:
    graph = build_graph(services)
    gate = Gate(JwtVerifier(SECRET), None)
    return create_mcp_app(lambda: graph, lambda: services, lambda: gate)


def requests(loaded: Loaded) -> list[dict[str, Any]]:
    """Searches of the first tenant named after its own data: a work item's title, secured and public."""
    tenant = loaded.tenants[0]
    title = next(n.title for n in sorted(loaded.dataset.nodes, key=lambda n: n.id) if n.tenant_id == tenant and n.title)
    return [
        {"queryText": title, "tenantId": tenant, "topK": 5},
        {"queryText": title, "tenantId": tenant, "topK": 3, "expandDepth": 2, "secured": False},
    ]


def test_brain_search_is_the_same_pack_on_the_servers_as_embedded(loaded: Loaded) -> None:
    tenant = loaded.tenants[0]
    acl_users = sorted({e.split(":", 1)[1] for n in loaded.dataset.nodes for e in n.acl if e.startswith("user:")})
    token = ISSUER.mint(acl_users[0] if acl_users else "alice", [tenant])
    servers, embedded = endpoint(loaded.server), endpoint(loaded.embedded)
    for arguments in requests(loaded):
        over_servers = call(servers, token, "brain_search", arguments)
        assert not over_servers.is_error, texts(over_servers)
        assert texts(over_servers) == texts(call(embedded, token, "brain_search", arguments))
        assert f"tenant `{tenant}`" in texts(over_servers)[0]


def test_another_tenant_is_refused_before_any_read(loaded: Loaded) -> None:
    tenant, other = loaded.tenants[0], loaded.tenants[-1]
    assert tenant != other
    token = ISSUER.mint("alice", [tenant])
    line = tool_error(call(endpoint(loaded.server), token, "brain_search", {"queryText": "x", "tenantId": other}))
    assert line.startswith(f"FORBIDDEN: principal 'alice' may not read tenant '{other}'")


def test_the_graph_tools_answer_as_over_the_embedded_store(loaded: Loaded) -> None:
    tenant = loaded.tenants[0]
    token = ISSUER.mint("alice", [tenant])
    degree = Counter(e.from_node_id for e in loaded.dataset.edges if e.tenant_id == tenant)
    hub = min(degree, key=lambda node_id: (-degree[node_id], node_id))
    servers, embedded = endpoint(loaded.server), endpoint(loaded.embedded)
    calls = [  # each with what its answer lists, which must not be empty
        ("get_node", "relationships", {"tenantId": tenant, "nodeId": hub, "relationships": "all", "secured": False}),
        ("neighbours", "neighbours", {"tenantId": tenant, "nodeId": hub, "limit": 3, "secured": False}),
        ("search_nodes", "results", {"tenantId": tenant, "query": "token refresh", "secured": False}),
    ]
    for tool, listed, arguments in calls:
        over_servers = call(servers, token, tool, arguments)
        assert not over_servers.is_error, texts(over_servers)
        assert isinstance(over_servers.structured_content, dict)
        assert over_servers.structured_content[listed], tool
        assert texts(over_servers) == texts(call(embedded, token, tool, arguments)), tool
