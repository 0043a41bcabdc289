"""The graph API's operations (contract; bodies to be written).

Each takes the deployment's :class:`~brain_graph.pipeline.services.SearchServices` (backend, edge
allowlist, profiles) and an :class:`~brain_graph.core.security.AccessScope` resolved as for a search
(:func:`browse_scope`), and returns a JSON-ready dict (camelCase keys, deterministic order).
Errors: :class:`NodeNotFoundError` (a node the scope cannot see is not found), and
:class:`~brain_graph.core.errors.InvalidRequestError` naming the parameter (``limit``, ``cursor``,
``relationships``, ``direction``, ``q``).
"""

from __future__ import annotations

from typing import Any

from brain_graph.core.errors import BrainGraphError
from brain_graph.core.security import AccessScope, Principal
from brain_graph.pipeline.services import SearchServices
from brain_graph.stores.browse import Direction

NODE_LIMIT_DEFAULT = 50  # relationships per direction in node_view
NEIGHBOUR_LIMIT_DEFAULT = 25
SEARCH_LIMIT_DEFAULT = 20
MAX_LIMIT = 100


class NodeNotFoundError(BrainGraphError, LookupError):
    """No node of that id is visible to the caller (missing, another tenant's, or secured from it)."""

    code = "GRAPH_NODE_NOT_FOUND"


def browse_scope(services: SearchServices, tenant_id: str, *, secured: bool, principal: Principal | None) -> AccessScope:
    """The scope of a graph API request: exactly what a search with the same tenant, ``secured`` and
    principal may see (:func:`~brain_graph.core.security.resolve_scope`)."""
    raise NotImplementedError


def node_view(
    services: SearchServices,
    scope: AccessScope,
    node_id: str,
    *,
    relationships: Direction = "outgoing",
    limit: int = NODE_LIMIT_DEFAULT,
) -> dict[str, Any]:
    """``{"node": {...}, "relationships": [{"type", "direction": "OUT"|"IN", "target": {...}}, ...]}``:
    at most ``limit`` relationships per direction."""
    raise NotImplementedError


def neighbour_page(
    services: SearchServices,
    scope: AccessScope,
    node_id: str,
    *,
    direction: Direction = "all",
    limit: int = NEIGHBOUR_LIMIT_DEFAULT,
    cursor: str | None = None,
) -> dict[str, Any]:
    """``{"nodeId", "neighbours": [{"type", "direction", "node": {...}}], "hasMore", "cursor"?}``; the
    cursor is opaque, and no relationship appears on two pages."""
    raise NotImplementedError


def node_search(
    services: SearchServices, scope: AccessScope, text: str, *, limit: int = SEARCH_LIMIT_DEFAULT
) -> dict[str, Any]:
    """``{"results": [{"id", "type", "title", "score", "snippet"}]}``: title prefix matches first, then
    lexical (BM25) matches of the words where the backend has a lexical index."""
    raise NotImplementedError
