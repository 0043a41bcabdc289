"""Generations on Neo4j: the tenant pointer, staged writes, the flip and the clean-up.

``(:BrainTenant {tenantId, generation, nextGeneration})`` is a tenant's pointer: reads see only the
generation it names. A load takes a fresh generation (:meth:`Neo4jGenerations.take_generations`),
writes into it (:meth:`~Neo4jGenerations.write`), flips the pointers (:meth:`~Neo4jGenerations.flip`)
and deletes the older generations (:meth:`~Neo4jGenerations.delete_older`). All Cypher is in
:mod:`brain_graph.stores.neo4j.cypher`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import groupby
from typing import Any, LiteralString

import neo4j

from brain_graph.stores.base import EdgeRecord, NodeRecord
from brain_graph.stores.codec import canonical_json
from brain_graph.stores.neo4j import cypher
from brain_graph.stores.neo4j.client import Neo4jClient

WRITE_BATCH = 2000
DELETE_BATCH = 5000


@dataclass(frozen=True)
class Flip:
    """A tenant's pointer after a flip: the ``current`` generation, and whether nodes from before
    generations may remain (removed by the next clean-up)."""

    current: int
    legacy: bool


def sort_key(node_id: str) -> str:
    """A string whose Cypher order (UTF-16 code units) is the code-point order of ``node_id``."""
    return node_id.encode("utf-8").hex()


def node_row(node: NodeRecord, generation: int) -> dict[str, Any]:
    """The parameters of a node's MERGE into ``generation`` (text and properties as canonical JSON)."""
    return {
        "tenantId": node.tenant_id,
        "generation": generation,
        "nodeId": node.node_id,
        "sortKey": sort_key(node.node_id),
        "nodeType": node.node_type,
        "projectKey": node.project_key,
        "title": node.title,
        "url": node.url,
        "secured": node.secured,
        "acl": list(node.acl),
        "text": canonical_json(dict(node.text)),
        "properties": canonical_json(dict(node.properties)),
    }


def edge_row(edge: EdgeRecord, generation: int) -> dict[str, Any]:
    """The parameters of an edge's MERGE (or DELETE) in ``generation``."""
    return {
        "tenantId": edge.tenant_id,
        "generation": generation,
        "fromNodeId": edge.from_node_id,
        "toNodeId": edge.to_node_id,
        "properties": canonical_json(dict(edge.properties)),
    }


def write_statements(
    nodes: Sequence[NodeRecord], edges: Sequence[EdgeRecord], generations: Mapping[str, int]
) -> list[tuple[str, dict[str, Any]]]:
    """The node MERGE batches, then the edge MERGE batches grouped by type."""
    statements: list[tuple[str, dict[str, Any]]] = []
    rows = [node_row(node, generations[node.tenant_id]) for node in nodes]
    for start in range(0, len(rows), WRITE_BATCH):
        statements.append((cypher.MERGE_NODES, {"rows": rows[start : start + WRITE_BATCH]}))
    ordered = sorted(edges, key=lambda e: (e.edge_type, e.tenant_id, e.from_node_id, e.to_node_id))
    for edge_type, group in groupby(ordered, key=lambda e: e.edge_type):
        query = cypher.merge_edges(edge_type)
        edge_rows = [edge_row(edge, generations[edge.tenant_id]) for edge in group]
        for start in range(0, len(edge_rows), WRITE_BATCH):
            statements.append((query, {"rows": edge_rows[start : start + WRITE_BATCH]}))
    return statements


class Neo4jGenerations:
    """Pointers, writes and deletions of tenants' generations."""

    def __init__(self, client: Neo4jClient) -> None:
        self._client = client

    def current_generation(self, tenant_id: str) -> int | None:
        """The generation searches of a tenant see (None: the tenant has no data). One statement."""
        rows = self._client.read(cypher.CURRENT_GENERATION, {"tenantId": tenant_id})
        generation = rows[0]["generation"] if rows else None
        return None if generation is None else int(generation)

    def _generation_map(self, query: LiteralString, tenants: Sequence[str]) -> dict[str, int]:
        if not tenants:
            return {}
        params = {"tenants": sorted(set(tenants))}
        rows = self._client.write(lambda session: self._client.commit(session, query, params))
        return {row["tenantId"]: int(row["generation"]) for row in rows}

    def current_generations(self, tenants: Sequence[str]) -> dict[str, int]:
        """The current generation of each tenant that has one (read on the leader, for a load)."""
        return self._generation_map(cypher.CURRENT_GENERATIONS, tenants)

    def take_generations(self, tenants: Sequence[str]) -> dict[str, int]:
        """A fresh generation number per tenant (creating its pointer), not visible to searches yet."""
        return self._generation_map(cypher.TAKE_GENERATIONS, tenants)

    def flip(self, generations: Mapping[str, int]) -> dict[str, Flip]:
        """Make each tenant's generation the current one, if it is newer than the current one, in ONE
        transaction for all tenants; returns what is current afterwards."""
        if not generations:
            return {}
        rows = [{"tenantId": tenant, "generation": g} for tenant, g in sorted(generations.items())]
        records = self._client.write(lambda session: self._client.commit(session, cypher.FLIP, {"rows": rows}))
        return {r["tenantId"]: Flip(int(r["current"]), bool(r["legacy"])) for r in records}

    def write(self, nodes: Sequence[NodeRecord], edges: Sequence[EdgeRecord], generations: Mapping[str, int]) -> None:
        """MERGE the nodes, then the edges grouped by type (type validated, then interpolated), into the
        generation ``generations`` names for their tenant; each batch of :data:`WRITE_BATCH` rows in its
        own transaction, so memory stays bounded whatever the size. Idempotent. Into a new generation
        this is invisible to searches until :meth:`flip`."""
        statements = write_statements(nodes, edges, generations)

        def work(session: neo4j.Session) -> None:
            for query, params in statements:
                self._client.commit(session, query, params)

        self._client.write(work)

    def _delete_batches(self, session: neo4j.Session, query: LiteralString, params: Mapping[str, Any]) -> None:
        """Run a ``... LIMIT $batch DETACH DELETE`` statement until it deletes less than a batch."""
        deleted = DELETE_BATCH
        while deleted >= DELETE_BATCH:
            deleted = int(self._client.commit(session, query, params)[0]["deleted"])

    def delete_older(self, tenant_id: str, flip: Flip) -> None:
        """Delete a tenant's generations older than ``flip.current`` (and, once, its nodes from before
        generations), in batches of :data:`DELETE_BATCH` nodes."""

        def work(session: neo4j.Session) -> None:
            params = {"tenantId": tenant_id, "current": flip.current, "batch": DELETE_BATCH}
            self._delete_batches(session, cypher.DELETE_OLDER, params)
            if flip.legacy:
                self._delete_batches(session, cypher.DELETE_LEGACY, params)
                self._client.commit(session, cypher.LEGACY_REMOVED, {"tenantId": tenant_id})

        self._client.write(work)

    def drop_tenants(self, tenants: Sequence[str]) -> None:
        """Delete every node and edge of these tenants (all generations) and their pointers."""
        params = {"tenants": sorted(set(tenants)), "batch": DELETE_BATCH}

        def work(session: neo4j.Session) -> None:
            self._delete_batches(session, cypher.DELETE_TENANTS, params)
            self._client.commit(session, cypher.DELETE_POINTERS, params)

        if tenants:
            self._client.write(work)

    def count(self, tenant_id: str) -> tuple[int, int]:
        """(nodes, edges) of the tenant's current generation."""
        params = {"tenants": [tenant_id]}
        nodes = self._client.read(cypher.COUNT_NODES, params)[0]["count"]
        edges = self._client.read(cypher.COUNT_EDGES, params)[0]["count"]
        return int(nodes), int(edges)

    def stored_generations(self, tenant_id: str) -> list[int]:
        """Every generation of a tenant that has nodes stored (0: nodes from before generations)."""
        rows = self._client.read(cypher.STORED_GENERATIONS, {"tenantId": tenant_id})
        return sorted(int(row["generation"]) for row in rows)
