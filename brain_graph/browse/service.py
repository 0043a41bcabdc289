"""The graph API's operations over a deployment's services: a node with its relationships, a node's
neighbours page by page behind an opaque cursor, and nodes by the words of their lexical documents.

Each takes the deployment's :class:`~brain_graph.pipeline.services.SearchServices` (backend, edge
allowlist, profiles) and an :class:`~brain_graph.core.security.AccessScope` resolved exactly as for a
search (:func:`browse_scope`), and returns a JSON-ready dict (camelCase keys, deterministic order).
Relationships are those of the expansion allowlist with signals and clusters
(:meth:`~brain_graph.core.edges.EdgeRegistry.expansion_types`). Errors: :class:`NodeNotFoundError`
(a node the scope cannot see is not found), :class:`NodeTooConnectedError`,
:class:`SearchUnsupportedError`, and :class:`~brain_graph.core.errors.InvalidRequestError` naming the
parameter.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from brain_graph.browse.cursor import decode_cursor, encode_cursor
from brain_graph.core.bm25 import query_terms
from brain_graph.core.contracts import MAX_QUERY_CHARS
from brain_graph.core.errors import BrainGraphError, InvalidRequestError, shown
from brain_graph.core.filters import SeedFilter, format_timestamp
from brain_graph.core.security import AccessScope, Principal, resolve_scope, text_problem
from brain_graph.pipeline.services import SearchServices
from brain_graph.stores.base import LexicalQuery, NodeRecord
from brain_graph.stores.browse import (
    DIRECTIONS,
    MAX_BROWSED_NEIGHBOURS,
    Direction,
    RelationshipKey,
    RelationshipPage,
    relationship_pages,
)

NODE_LIMIT_DEFAULT = 50  # relationships per direction in node_view
NEIGHBOUR_LIMIT_DEFAULT = 25
SEARCH_LIMIT_DEFAULT = 20
MAX_LIMIT = 100
MAX_NODE_ID_CHARS = 1_000
SCORE_DIGITS = 4


class NodeNotFoundError(BrainGraphError, LookupError):
    """No node of that id is visible to the caller (missing, another tenant's, or secured from it)."""

    code = "GRAPH_NODE_NOT_FOUND"


class NodeTooConnectedError(BrainGraphError):
    """The node has more visible neighbours over the allowlist than a page may be cut from."""

    code = "GRAPH_NODE_TOO_CONNECTED"


class SearchUnsupportedError(BrainGraphError):
    """The backend has no lexical index to search nodes by words."""

    code = "GRAPH_SEARCH_UNSUPPORTED"


def browse_scope(
    services: SearchServices, tenant_id: str, *, secured: bool, principal: Principal | None
) -> AccessScope:
    """The scope of a graph API request: exactly what a search with the same tenant, ``secured`` and
    principal may see (:func:`~brain_graph.core.security.resolve_scope`)."""
    if not isinstance(tenant_id, str) or not tenant_id.strip():
        raise InvalidRequestError("tenantId", "is required: name the tenant")
    problem = text_problem(tenant_id)
    if problem is not None:
        raise InvalidRequestError("tenantId", problem)
    return resolve_scope(tenant_id, secured, principal, services.service_principal)


def check_limit(name: str, value: int) -> int:
    """``value`` when it is an integer from 1 to :data:`MAX_LIMIT`."""
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_LIMIT:
        raise InvalidRequestError(name, f"must be an integer from 1 to {MAX_LIMIT} (got {shown(value)})")
    return value


def check_direction(name: str, value: str) -> Direction:
    """``value`` when it is one of :data:`~brain_graph.stores.browse.DIRECTIONS`."""
    for direction in DIRECTIONS:
        if value == direction:
            return direction
    raise InvalidRequestError(name, f"must be one of {', '.join(DIRECTIONS)} (got {shown(value)})")


def check_node_id(node_id: str) -> str:
    """``node_id`` when it can name a node."""
    if not isinstance(node_id, str) or not node_id or len(node_id) > MAX_NODE_ID_CHARS:
        raise InvalidRequestError("nodeId", f"must be a node id of 1 to {MAX_NODE_ID_CHARS} characters")
    problem = text_problem(node_id)
    if problem is not None:
        raise InvalidRequestError("nodeId", problem)
    return node_id


def node_json(node: NodeRecord) -> dict[str, Any]:
    """A node as the graph API shows it: what a search's citations show of it, plus its tags, update
    time and properties (never its ACL)."""
    return {
        "id": node.node_id,
        "type": node.node_type,
        "labels": [node.node_type],
        "title": node.title,
        "url": node.url,
        "projectKey": node.project_key,
        "tags": list(node.tags),
        "updatedAt": format_timestamp(node.updated_at) if node.updated_at is not None else None,
        "secured": node.secured,
        "properties": dict(sorted(node.properties.items())),
    }


def read_pages(
    services: SearchServices,
    scope: AccessScope,
    node_id: str,
    directions: Sequence[Direction],
    limit: int,
    after: RelationshipKey | None = None,
) -> list[RelationshipPage]:
    """:func:`~brain_graph.stores.browse.relationship_pages` over the allowlist, its refusals raised."""
    pages = relationship_pages(
        services.backend.graph_store,
        node_id,
        scope=scope,
        directions=directions,
        edge_types=services.edges.expansion_types(True, True),
        after=after,
        limit=limit,
    )
    if pages[0].node is None:
        raise NodeNotFoundError(f"no node {shown(node_id)} is visible in tenant {shown(scope.tenant_id)}")
    if pages[0].too_connected:
        raise NodeTooConnectedError(
            f"node {shown(node_id)} has more than {MAX_BROWSED_NEIGHBOURS} visible neighbours; "
            "its relationships are not listed"
        )
    return pages


def relationship_json(edge_type: str, outgoing: bool, node: NodeRecord, key: str) -> dict[str, Any]:
    """A relationship seen from the browsed node; ``key`` names its other end (``target``, ``node``)."""
    return {"type": edge_type, "direction": "OUT" if outgoing else "IN", key: node_json(node)}


def node_view(
    services: SearchServices,
    scope: AccessScope,
    node_id: str,
    *,
    relationships: str = "outgoing",
    limit: int = NODE_LIMIT_DEFAULT,
) -> dict[str, Any]:
    """``{"node", "relationships": [{"type", "direction": "OUT"|"IN", "target"}], "hasMore"}``: the
    first ``limit`` relationships of each direction asked for, in
    :class:`~brain_graph.stores.browse.RelationshipKey` order; ``hasMore`` when a direction has more
    (page them with :func:`neighbour_page`)."""
    check_node_id(node_id)
    direction = check_direction("relationships", relationships)
    check_limit("limit", limit)
    directions: tuple[Direction, ...] = ("incoming", "outgoing") if direction == "all" else (direction,)
    pages = read_pages(services, scope, node_id, directions, limit)
    listed = sorted((rel for page in pages for rel in page.relationships), key=lambda rel: rel.key)
    node = pages[0].node
    assert node is not None  # read_pages raised otherwise
    return {
        "node": node_json(node),
        "relationships": [relationship_json(rel.edge_type, rel.outgoing, rel.neighbor, "target") for rel in listed],
        "hasMore": any(page.has_more for page in pages),
    }


def neighbour_page(
    services: SearchServices,
    scope: AccessScope,
    node_id: str,
    *,
    direction: str = "all",
    limit: int = NEIGHBOUR_LIMIT_DEFAULT,
    cursor: str | None = None,
) -> dict[str, Any]:
    """``{"nodeId", "neighbours": [{"type", "direction", "node"}], "hasMore", "cursor"?}``: one page in
    :class:`~brain_graph.stores.browse.RelationshipKey` order. ``cursor`` (from the previous page,
    for the same node and direction) resumes after that page's last relationship, so no relationship
    appears on two pages; it is absent on the last page."""
    check_node_id(node_id)
    checked = check_direction("direction", direction)
    check_limit("limit", limit)
    after = decode_cursor(cursor, scope.tenant_id, node_id, checked) if cursor is not None else None
    [page] = read_pages(services, scope, node_id, (checked,), limit, after)
    body: dict[str, Any] = {
        "nodeId": node_id,
        "neighbours": [relationship_json(r.edge_type, r.outgoing, r.neighbor, "node") for r in page.relationships],
        "hasMore": page.has_more,
    }
    if page.has_more and page.relationships:
        body["cursor"] = encode_cursor(scope.tenant_id, node_id, checked, page.relationships[-1].key)
    return body


def node_search(
    services: SearchServices,
    scope: AccessScope,
    text: str,
    *,
    limit: int = SEARCH_LIMIT_DEFAULT,
) -> dict[str, Any]:
    """``{"results": [{"id", "type", "title", "url", "score"}]}``: the visible nodes whose lexical
    document (their id and the text their profiles embed, :func:`~brain_graph.core.bm25.lexical_document`)
    holds words of ``text``, over every profile, best BM25 score first (four decimals), then id.
    Whole words: ``tok`` does not find ``token``."""
    if not isinstance(text, str) or not text.strip():
        raise InvalidRequestError("q", "is required: the words to look for")
    if len(text) > MAX_QUERY_CHARS:
        raise InvalidRequestError("q", f"must be at most {MAX_QUERY_CHARS} characters (got {len(text)})")
    check_limit("limit", limit)
    backend = services.backend
    if not backend.supports_lexical:
        raise SearchUnsupportedError(f"the {backend.name} backend has no lexical index to search nodes by words")
    terms = query_terms(text)
    if not terms:
        return {"results": []}
    queries = [LexicalQuery(profile.profile_id, terms) for profile in services.profiles.profiles]
    hits = backend.vector_index.lexical(queries, scope=scope, seed_filter=SeedFilter(), top_k=limit)
    best: dict[str, float] = {}
    for hit in hits:
        best[hit.node_id] = max(best.get(hit.node_id, 0.0), round(hit.score, SCORE_DIGITS))
    ranked = sorted(best.items(), key=lambda item: (-item[1], item[0]))[:limit]
    nodes: Mapping[str, NodeRecord] = {
        node.node_id: node for node in backend.graph_store.get_nodes([node_id for node_id, _ in ranked], scope=scope)
    }
    return {
        "results": [
            {
                "id": node_id,
                "type": nodes[node_id].node_type,
                "title": nodes[node_id].title,
                "url": nodes[node_id].url,
                "score": score,
            }
            for node_id, score in ranked
            if node_id in nodes
        ]
    }
