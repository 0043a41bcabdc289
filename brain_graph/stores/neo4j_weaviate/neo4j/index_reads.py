"""The Neo4j reads of the write side (:class:`~brain_graph.stores.base.IndexStore`): whole node
records of a tenant's current generation, outside any search scope.

Each read is ONE auto-commit statement joining the tenant's pointer. Pages are ranges of the
``(tenantId, generation, sortKey)`` index read in its order (``sortKey`` is the hex of the id's UTF-8
bytes, whose order is code-point order), so a page costs what it returns (plus the nodes of other
types it skips), never a sort of the tenant.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from brain_graph.stores.base import NodeRecord
from brain_graph.stores.neo4j_weaviate.neo4j import cypher
from brain_graph.stores.neo4j_weaviate.neo4j.client import Neo4jClient
from brain_graph.stores.neo4j_weaviate.neo4j.generations import sort_key
from brain_graph.stores.neo4j_weaviate.neo4j.graph import node_meta


def node_record(data: Mapping[str, Any]) -> NodeRecord:
    """A full record from the map :data:`~brain_graph.stores.neo4j_weaviate.neo4j.cypher.RECORD_MAP` returns."""
    meta = node_meta(data)
    return NodeRecord(
        tenant_id=meta.tenant_id,
        node_id=meta.node_id,
        node_type=meta.node_type,
        project_key=meta.project_key,
        title=meta.title,
        url=meta.url,
        secured=meta.secured,
        acl=meta.acl,
        text=json.loads(data.get("text") or "{}"),
        properties=meta.properties,
        namespace=meta.namespace,
        tags=meta.tags,
        updated_at=meta.updated_at,
    )


class Neo4jIndexReads:
    """Node reads of the write side, on the tenant's current generation."""

    def __init__(self, client: Neo4jClient) -> None:
        self._client = client

    def tenants(self) -> list[str]:
        """Tenants whose current generation holds nodes, in code-point order."""
        return sorted(row["tenantId"] for row in self._client.read(cypher.TENANTS_WITH_NODES, {}))

    def node_page(
        self, tenant_id: str, *, node_types: Sequence[str], after: str | None, limit: int
    ) -> list[NodeRecord]:
        """The first ``limit`` nodes of ``node_types`` whose id sorts after ``after``, by id."""
        if not node_types or limit <= 0:
            return []
        self._client.ensure_schema()  # the page index (once per client)
        params = {
            "tenantId": tenant_id,
            "after": "" if after is None else sort_key(after),  # "" sorts before every key
            "nodeTypes": sorted(set(node_types)),
            "limit": limit,
        }
        return [node_record(row["node"]) for row in self._client.read(cypher.NODE_PAGE, params)]

    def count_nodes(self, tenant_id: str, node_types: Sequence[str]) -> int:
        """How many nodes of ``node_types`` the tenant's current generation holds."""
        if not node_types:
            return 0
        rows = self._client.read(cypher.COUNT_TYPED, {"tenantId": tenant_id, "nodeTypes": sorted(set(node_types))})
        return int(rows[0]["count"]) if rows else 0

    def get_records(self, tenant_id: str, node_ids: Sequence[str]) -> list[NodeRecord]:
        """The full records of the nodes among ``node_ids``, sorted by id."""
        if not node_ids:
            return []
        rows = self._client.read(cypher.GET_RECORDS, {"tenantId": tenant_id, "nodeIds": list(dict.fromkeys(node_ids))})
        return sorted((node_record(row["node"]) for row in rows), key=lambda node: node.node_id)
