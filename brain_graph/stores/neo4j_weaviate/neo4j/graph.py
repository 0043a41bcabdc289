"""Graph store and passage source on Neo4j: the batched reads of a search.

Nodes are ``:BrainNode`` with ``tenantId``, ``generation``, ``nodeId`` (unique together), ``nodeType``
(indexed), ``projectKey``, ``title``, ``url``, ``secured``, ``acl`` (list), ``namespace`` and ``tags``
(as given; a list), ``updatedAt`` (integer microseconds; no property without one) and ``text`` /
``properties`` as JSON strings (Neo4j properties cannot be maps). Edges are typed relationships with a
JSON ``properties``, always between nodes of one generation. Reads see only the generation the
tenant's pointer names (see :mod:`brain_graph.stores.neo4j_weaviate.neo4j.cypher`).

Every read is ONE auto-commit statement (:meth:`~brain_graph.stores.neo4j_weaviate.neo4j.client.Neo4jClient.read`),
whatever the number of ids. Results equal the embedded store's: the order is the documented total
order, applied in Python.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from brain_graph.core.passage_heads import HEADS_PREFIX, FieldHead, read_heads
from brain_graph.core.security import AccessScope
from brain_graph.core.vocabulary import CLUSTER
from brain_graph.stores.access import cypher_params
from brain_graph.stores.base import (
    ClusterMembership,
    EdgeRecord,
    Link,
    Neighborhood,
    NodeRecord,
    edge_sort_key,
)
from brain_graph.stores.neo4j_weaviate.neo4j import cypher
from brain_graph.stores.neo4j_weaviate.neo4j.client import Neo4jClient


def node_meta(data: Mapping[str, Any]) -> NodeRecord:
    """A node's metadata record from the map :data:`.cypher.META_MAP` returns."""
    return NodeRecord(
        tenant_id=data["tenantId"],
        node_id=data["nodeId"],
        node_type=data["nodeType"],
        project_key=data.get("projectKey"),
        title=data.get("title"),
        url=data.get("url"),
        secured=bool(data.get("secured")),
        acl=tuple(data.get("acl") or ()),
        properties=json.loads(data.get("properties") or "{}"),
        namespace=data.get("namespace"),
        tags=tuple(data.get("tags") or ()),
        updated_at=data.get("updatedAt"),
    )


def heads_params(whole: bool) -> dict[str, Any]:
    """The parameters of :func:`~brain_graph.stores.neo4j_weaviate.neo4j.cypher.passage_source`."""
    return {"wholeTexts": whole, "headsPrefix": HEADS_PREFIX}


def passage_heads(sources: Sequence[Sequence[Any]], whole: bool) -> dict[str, Mapping[str, FieldHead]]:
    """The heads of ``[nodeId, nodeType, heads, text]`` rows, by node id."""
    return {node_id: read_heads(node_type, heads, text, whole=whole) for node_id, node_type, heads, text in sources}


class Neo4jGraphStore:
    """:class:`~brain_graph.stores.base.GraphStore` and :class:`~brain_graph.stores.base.PassageSource`."""

    def __init__(self, client: Neo4jClient) -> None:
        self._client = client

    def get_nodes(self, node_ids: Sequence[str], *, scope: AccessScope) -> list[NodeRecord]:
        if not node_ids:
            return []
        rows = self._client.read(cypher.GET_NODES, {**cypher_params(scope), "nodeIds": list(dict.fromkeys(node_ids))})
        return [node_meta(row["node"]) for row in rows]

    def get_texts(self, node_ids: Sequence[str], *, scope: AccessScope) -> dict[str, Mapping[str, str]]:
        if not node_ids:
            return {}
        rows = self._client.read(cypher.GET_TEXTS, {**cypher_params(scope), "nodeIds": list(dict.fromkeys(node_ids))})
        return {row["nodeId"]: json.loads(row["text"] or "{}") for row in rows}

    def get_passage_heads(
        self, node_ids: Sequence[str], *, scope: AccessScope, whole: bool = False
    ) -> dict[str, Mapping[str, FieldHead]]:
        if not node_ids:
            return {}
        params = {**cypher_params(scope), "nodeIds": list(dict.fromkeys(node_ids)), **heads_params(whole)}
        return passage_heads([row["source"] for row in self._client.read(cypher.GET_PASSAGE_HEADS, params)], whole)

    def links(
        self, frontier: Sequence[str], *, scope: AccessScope, edge_types: Sequence[str], max_degree: int
    ) -> Neighborhood:
        ids = list(dict.fromkeys(frontier))
        degrees = dict.fromkeys(ids, 0)
        if not ids or not edge_types:
            return Neighborhood(degrees, [])
        types = tuple(sorted(set(edge_types)))
        params = {**cypher_params(scope), "frontier": ids, "edgeTypes": list(types), "maxDegree": max_degree}
        links: list[Link] = []
        for row in self._client.read(cypher.links(types), params):
            source = row["frontierId"]
            degrees[source] = int(row["degree"])
            links += (Link(source, edge_type, neighbor, bool(out)) for edge_type, neighbor, out in row["links"])
        return Neighborhood(degrees, sorted(links))

    def edges_among(
        self, node_ids: Sequence[str], *, scope: AccessScope, edge_types: Sequence[str]
    ) -> list[EdgeRecord]:
        if not node_ids or not edge_types:
            return []
        types = tuple(sorted(set(edge_types)))
        rows = self._client.read(
            cypher.edges_among(types),
            {**cypher_params(scope), "nodeIds": sorted(set(node_ids)), "edgeTypes": list(types)},
        )
        edges = [
            EdgeRecord(
                scope.tenant_id,
                row["edgeType"],
                row["fromNodeId"],
                row["toNodeId"],
                json.loads(row["properties"] or "{}"),
            )
            for row in rows
        ]
        return sorted(edges, key=edge_sort_key)

    def cluster_memberships(
        self, node_ids: Sequence[str], *, scope: AccessScope, known: Sequence[str] = ()
    ) -> list[ClusterMembership]:
        if not node_ids:
            return []
        params = {
            **cypher_params(scope),
            "nodeIds": sorted(set(node_ids)),
            "clusterType": CLUSTER,
            "known": sorted(set(known)),
        }
        memberships = [
            ClusterMembership(
                row["memberId"],
                row["clusterId"],
                int(row["size"]),
                node_meta(row["cluster"]) if row["cluster"] is not None else None,
            )
            for row in self._client.read(cypher.CLUSTER_MEMBERSHIPS, params)
        ]
        return sorted(memberships, key=lambda m: (m.cluster_id, m.member_id))
