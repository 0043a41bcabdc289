"""The MCP tools of brain-graph, for an agent: ``brain_search`` (the prompt pack of a question),
``search_nodes`` (find nodes by their words), ``get_node`` (one node and its relationships) and
``neighbours`` (a node's relationships, page by page). All read-only, all for one ``tenantId`` the
caller's token names, secured items only for a principal their ACL lists.

:func:`build_mcp_server` registers them on a :class:`~brain_graph.serving.mcp.errors.BrainMCPServer`,
whose failed calls are one-line tool errors. Each call reads the caller's credentials from the HTTP
request (put there by :class:`~brain_graph.serving.mcp.app.BrainMCP`); without them it is refused.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from functools import partial
from typing import Annotated, Any, Literal

import anyio.to_thread
from mcp.server.mcpserver import Context
from mcp.types import CallToolResult, ToolAnnotations
from pydantic import Field

from brain_graph.browse import service as browse
from brain_graph.browse.cursor import MAX_CURSOR_CHARS
from brain_graph.core.contracts import (
    MAX_AGE_DAYS,
    MAX_FILTER_VALUES,
    MAX_MIN_SCORE,
    MAX_PROJECT_CHARS,
    MAX_QUERY_CHARS,
    MAX_TENANT_CHARS,
    MAX_TOP_K,
    RetrievalMode,
)
from brain_graph.core.security import AccessScope
from brain_graph.pipeline.services import SearchServices
from brain_graph.pipeline.state import BrainSearchContext
from brain_graph.serving.mcp.caller import caller
from brain_graph.serving.mcp.errors import BrainMCPServer
from brain_graph.serving.mcp.results import BrainSearchToolOutput, json_result, search_result
from brain_graph.stores.browse import MAX_BROWSED_NEIGHBOURS

SERVER_NAME = "brain-graph"
INSTRUCTIONS = (
    "Read-only access to a tenant's knowledge graph (work items, documents, code). Use brain_search to "
    "answer a question: it returns a prompt pack whose sources are numbered [1], [2], ...; cite them. Use "
    "search_nodes to find a node by its words or key, get_node to read one node and its relationships, and "
    "neighbours to page through all of a node's relationships. Every tool needs the tenantId your token names."
)
READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)

GraphProvider = Callable[[], Any]
ServicesProvider = Callable[[], SearchServices]
BrowseRead = Callable[[SearchServices, AccessScope], dict[str, Any]]  # a graph API operation, its arguments bound

TenantId = Annotated[
    str,
    Field(
        min_length=1,
        max_length=MAX_TENANT_CHARS,
        description="Tenant to read; your token must name it (else the call is refused as FORBIDDEN).",
    ),
]
Secured = Annotated[
    bool,
    Field(
        description="true (default): public items plus secured items whose ACL lists you; false: public items only.",
    ),
]
NodeIdArgument = Annotated[
    str,
    Field(
        min_length=1,
        max_length=browse.MAX_NODE_ID_CHARS,
        description="A node id as brain_search, search_nodes or another node's relationships give it.",
    ),
]
FilterValues = Annotated[list[str] | None, Field(min_length=1, max_length=MAX_FILTER_VALUES)]


def _quietly(build: Callable[[], BrainMCPServer]) -> BrainMCPServer:
    """``build()`` with the root logger left as it was: an MCPServer configures it when it is built
    (``logging.basicConfig`` with a Rich handler at INFO), and logging belongs to the host process."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    try:
        return build()
    finally:
        root.handlers[:] = handlers
        root.setLevel(level)


def _present(fields: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in fields.items() if value is not None}


BRAIN_SEARCH_DOC = f"""Answer a question from the tenant's knowledge graph: a deterministic GraphRAG search.

Returns a prompt pack in markdown: the episodes (incidents, projects) the hits belong to, the sources
numbered [1], [2], ... with their ids, types, scores and links, the relationships among them and text
passages; then one line of JSON with the citations (the sources, [1] first) and warnings. Quote the [n]
of a source when you use it. The same call always returns the same text.

Use it first for any question about the tenant's work, documents or code. To look at one node the pack
names, use get_node; to find a node by its words or key, search_nodes. Limits: queryText up to
{MAX_QUERY_CHARS} characters, topK 1..{MAX_TOP_K}, expandDepth 0..3 (a deployment may allow up to 6)."""

GET_NODE_DOC = f"""Read one node and its relationships.

Returns JSON {{"node": {{id, type, title, url, projectKey, tags, updatedAt, secured, properties}},
"relationships": [{{"type", "direction": "OUT"|"IN", "target": {{...}}}}], "hasMore"}}: the first `limit`
relationships (1..{browse.MAX_LIMIT}, default {browse.NODE_LIMIT_DEFAULT}) of each direction asked for;
hasMore is true when there are more (read them all with neighbours). The node's text is not included
(brain_search's passages quote it). Use it on an id from brain_search or search_nodes. A node you may
not see is reported as not found (GRAPH_NODE_NOT_FOUND): missing, another tenant's or secured from you."""

NEIGHBOURS_DOC = f"""Page through a node's relationships: the nodes linked to it, and how.

Returns JSON {{"nodeId", "neighbours": [{{"type", "direction": "OUT"|"IN", "node": {{...}}}}], "hasMore",
"cursor"}}: `limit` relationships (1..{browse.MAX_LIMIT}, default {browse.NEIGHBOUR_LIMIT_DEFAULT}) in a stable
order (type, direction, node id). When hasMore is true, call again with the same tenantId, nodeId and
direction and the returned `cursor` (opaque: pass it back unchanged) for the next page; no relationship
appears on two pages. A node with more than {MAX_BROWSED_NEIGHBOURS} neighbours is refused
(GRAPH_NODE_TOO_CONNECTED)."""

SEARCH_NODES_DOC = f"""Find nodes by words: the nodes whose id or text holds words of the query, best BM25
score first (whole words: "tok" does not find "token").

Returns JSON {{"results": [{{"id", "type", "title", "url", "score"}}]}}, at most `limit` results
(1..{browse.MAX_LIMIT}, default {browse.SEARCH_LIMIT_DEFAULT}). Use it to turn a name or key ("AUTH-101",
"token refresh") into node ids for get_node or neighbours; to answer a question, use brain_search (it
ranks by meaning and follows the graph). Needs a backend with a lexical index (else
GRAPH_SEARCH_UNSUPPORTED)."""


def build_mcp_server(graph: GraphProvider, services: ServicesProvider) -> BrainMCPServer:
    """The MCP server of the four tools: ``brain_search`` runs ``graph()`` (the compiled brain_search
    graph), the graph API tools read ``services()`` (:mod:`brain_graph.browse.service`, in a worker
    thread)."""
    server = _quietly(lambda: BrainMCPServer(SERVER_NAME, instructions=INSTRUCTIONS, subscriptions=False))

    @server.tool(
        name="brain_search", title="Search the knowledge graph", description=BRAIN_SEARCH_DOC, annotations=READ_ONLY
    )
    async def brain_search(
        queryText: Annotated[  # noqa: N803 - MCP argument names are the wire's camelCase
            str, Field(min_length=1, max_length=MAX_QUERY_CHARS, description="The question, in natural language.")
        ],
        tenantId: TenantId,  # noqa: N803
        context: Context[Any, Any],
        topK: Annotated[int, Field(ge=1, le=MAX_TOP_K, description="How many nodes retrieval finds.")] = 10,  # noqa: N803
        expandDepth: Annotated[  # noqa: N803
            int, Field(ge=0, le=6, description="Graph hops expanded around the hits (0: none).")
        ] = 1,
        secured: Secured = True,
        projectKey: Annotated[  # noqa: N803
            str | None, Field(min_length=1, max_length=MAX_PROJECT_CHARS, description="Only this project.")
        ] = None,
        nodeTypes: Annotated[FilterValues, Field(description="Only these node types (e.g. cdm.work_item).")] = None,  # noqa: N803
        profileKindIn: Annotated[  # noqa: N803
            FilterValues, Field(description="Embedding profile kinds to search (e.g. work, doc, code).")
        ] = None,
        tags: Annotated[FilterValues, Field(description="Only nodes with one of these tags.")] = None,
        namespaces: Annotated[FilterValues, Field(description="Only nodes in one of these namespaces.")] = None,
        updatedAfter: Annotated[  # noqa: N803
            str | None, Field(max_length=64, description="Only nodes updated at or after this ISO-8601 time.")
        ] = None,
        maxAgeDays: Annotated[  # noqa: N803
            int | None, Field(ge=1, le=MAX_AGE_DAYS, description="Only nodes updated in the last N days.")
        ] = None,
        retrievalMode: Annotated[  # noqa: N803
            RetrievalMode | None, Field(description="vector, lexical or hybrid; default: the deployment's.")
        ] = None,
        minScore: Annotated[  # noqa: N803
            float | None, Field(ge=0.0, le=MAX_MIN_SCORE, description="Cite only nodes scoring at least this.")
        ] = None,
    ) -> Annotated[CallToolResult, BrainSearchToolOutput]:
        principal = caller(context)
        search_filter = {
            "tenantId": tenantId,
            "secured": secured,
            "projectKey": projectKey,
            "nodeTypes": nodeTypes,
            "profileKindIn": profileKindIn,
            "tags": tags,
            "namespaces": namespaces,
            "updatedAfter": updatedAfter,
            "maxAgeDays": maxAgeDays,
        }
        options = {"topK": topK, "expandDepth": expandDepth, "retrievalMode": retrievalMode, "minScore": minScore}
        request = {"queryText": queryText, "filter": _present(search_filter), "options": _present(options)}
        output: dict[str, Any] = await graph().ainvoke(request, context=BrainSearchContext(principal=principal))
        return search_result(output)

    async def browsing(context: Context[Any, Any], tenant_id: str, secured: bool, read: BrowseRead) -> CallToolResult:
        principal = caller(context)

        def run() -> dict[str, Any]:
            deps = services()
            scope = browse.browse_scope(deps, tenant_id, secured=secured, principal=principal)
            result: dict[str, Any] = read(deps, scope)
            return result

        return json_result(await anyio.to_thread.run_sync(run))

    @server.tool(name="get_node", title="Read a node", description=GET_NODE_DOC, annotations=READ_ONLY)
    async def get_node(
        tenantId: TenantId,  # noqa: N803
        nodeId: NodeIdArgument,  # noqa: N803
        context: Context[Any, Any],
        secured: Secured = True,
        relationships: Annotated[
            Literal["outgoing", "incoming", "all"], Field(description="Which relationships to list.")
        ] = "outgoing",
        limit: Annotated[int, Field(ge=1, le=browse.MAX_LIMIT, description="Relationships per direction.")] = (
            browse.NODE_LIMIT_DEFAULT
        ),
    ) -> CallToolResult:
        read = partial(browse.node_view, node_id=nodeId, relationships=relationships, limit=limit)
        return await browsing(context, tenantId, secured, read)

    @server.tool(
        name="neighbours", title="Page a node's relationships", description=NEIGHBOURS_DOC, annotations=READ_ONLY
    )
    async def neighbours(
        tenantId: TenantId,  # noqa: N803
        nodeId: NodeIdArgument,  # noqa: N803
        context: Context[Any, Any],
        secured: Secured = True,
        direction: Annotated[
            Literal["outgoing", "incoming", "all"], Field(description="Which relationships to page through.")
        ] = "all",
        limit: Annotated[int, Field(ge=1, le=browse.MAX_LIMIT, description="Relationships on this page.")] = (
            browse.NEIGHBOUR_LIMIT_DEFAULT
        ),
        cursor: Annotated[
            str | None,
            Field(min_length=1, max_length=MAX_CURSOR_CHARS, description="The previous page's cursor; none: page 1."),
        ] = None,
    ) -> CallToolResult:
        read = partial(browse.neighbour_page, node_id=nodeId, direction=direction, limit=limit, cursor=cursor)
        return await browsing(context, tenantId, secured, read)

    @server.tool(name="search_nodes", title="Find nodes by name", description=SEARCH_NODES_DOC, annotations=READ_ONLY)
    async def search_nodes(
        tenantId: TenantId,  # noqa: N803
        query: Annotated[
            str,
            Field(min_length=1, max_length=MAX_QUERY_CHARS, description="Words or a key to look for (whole words)."),
        ],
        context: Context[Any, Any],
        secured: Secured = True,
        limit: Annotated[int, Field(ge=1, le=browse.MAX_LIMIT, description="Most results returned.")] = (
            browse.SEARCH_LIMIT_DEFAULT
        ),
    ) -> CallToolResult:
        read = partial(browse.node_search, text=query, limit=limit)
        return await browsing(context, tenantId, secured, read)

    return server
