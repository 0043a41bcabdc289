"""The combined reads of a search on Neo4j: one statement each (:func:`.cypher.seeds`, :func:`.cypher.hop`,
:func:`.cypher.context`), decoded into the records the single reads of :class:`.graph.Neo4jGraphStore`
return, in the same order."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from brain_graph.core.security import AccessScope
from brain_graph.core.vocabulary import CLUSTER
from brain_graph.stores.access import cypher_params
from brain_graph.stores.base import (
    ClusterMembership,
    ContextRequest,
    EdgeRecord,
    Link,
    NodeRecord,
    SearchContext,
    edge_sort_key,
)
from brain_graph.stores.neo4j_weaviate.neo4j import cypher
from brain_graph.stores.neo4j_weaviate.neo4j.client import Neo4jClient
from brain_graph.stores.neo4j_weaviate.neo4j.graph import heads_params, node_meta, passage_heads
from brain_graph.stores.neo4j_weaviate.neo4j.vector_copies import MAX_COPIED


@dataclass(frozen=True)
class SeedGraph:
    """What :func:`~brain_graph.stores.neo4j_weaviate.neo4j.cypher.seeds` read: the tenant's current generation (None:
    it has none), the metadata of the visible hits, their links when asked for, the asked profiles whose
    vector copies the generation records (``copied``) and the copies of the nodes the links reach
    (``[nodeId, [bytes or None per copied profile]]``)."""

    generation: int | None
    nodes: list[NodeRecord]
    links: list[Link] | None
    copied: tuple[str, ...] = ()
    copies: list[list[Any]] = field(default_factory=list)


def decode_links(rows: Sequence[Sequence[Any]]) -> list[Link]:
    """The sorted links of ``[frontierId, degree, [[type, neighbourId, outgoing], ...]]`` rows."""
    return sorted(Link(row[0], edge_type, neighbor, bool(out)) for row in rows for edge_type, neighbor, out in row[2])


def decode_memberships(rows: Sequence[Sequence[Any]]) -> list[ClusterMembership]:
    """The memberships of ``[memberIds, clusterId, size, cluster map or null]`` rows, ordered by cluster
    id then member id."""
    memberships: list[ClusterMembership] = []
    for members, cluster_id, size, cluster in rows:
        record = node_meta(cluster) if cluster is not None else None
        memberships += (ClusterMembership(member, cluster_id, int(size), record) for member in members)
    return sorted(memberships, key=lambda m: (m.cluster_id, m.member_id))


# The parameters naming a copy's properties.
COPY_PARAMS = {
    "copiesPrefix": cypher.COPIES_PREFIX,
    "securedPrefix": cypher.SECURED_PREFIX,
    "aclPrefix": cypher.ACL_PREFIX,
}


def hop_params(
    scope: AccessScope, edge_types: Sequence[str], max_degree: int, profiles: Sequence[str], max_copied: int
) -> dict[str, Any]:
    """The parameters :func:`~brain_graph.stores.neo4j_weaviate.neo4j.cypher.seeds` and
    :func:`~brain_graph.stores.neo4j_weaviate.neo4j.cypher.hop` share: the scope, the links asked for and the copies
    of the nodes they reach."""
    return {
        **cypher_params(scope),
        "edgeTypes": list(edge_types),
        "maxDegree": max_degree,
        "profiles": list(dict.fromkeys(profiles)),
        **COPY_PARAMS,
        "maxCopied": max_copied,
    }


class Neo4jSearchReads:
    """The Neo4j statements of :class:`~brain_graph.stores.base.SearchReads`."""

    def __init__(self, client: Neo4jClient) -> None:
        self._client = client

    def seeds(
        self,
        node_ids: Sequence[str],
        *,
        scope: AccessScope,
        link_types: Sequence[str],
        max_degree: int,
        profiles: Sequence[str] = (),
        max_copied: int = MAX_COPIED,
    ) -> SeedGraph:
        """The current generation, the visible nodes among ``node_ids`` and, with ``link_types``, their
        links (hubs above ``max_degree`` counted, not listed), and the vector copies in ``profiles`` of
        the nodes those links reach, where the generation records them. One statement."""
        types = tuple(sorted(set(link_types)))
        params = {
            **hop_params(scope, types, max_degree, profiles if link_types else (), max_copied),
            "nodeIds": list(dict.fromkeys(node_ids)),
        }
        row = self._client.read(cypher.seeds(types), params)[0]
        generation = row["generation"]
        return SeedGraph(
            None if generation is None else int(generation),
            [node_meta(node) for node in row["nodes"]],
            decode_links(row["links"]) if link_types else None,
            tuple(row["copied"]),
            row["vectors"],
        )

    def hop(
        self,
        frontier: Sequence[str],
        *,
        scope: AccessScope,
        edge_types: Sequence[str],
        max_degree: int,
        profiles: Sequence[str] = (),
        max_copied: int = MAX_COPIED,
    ) -> tuple[list[Link], tuple[str, ...], list[list[Any]]]:
        """The links of ``frontier`` (hubs above ``max_degree`` counted, not listed), the profiles of
        ``profiles`` whose copies count and the copies of the nodes the links reach. One statement."""
        ids = list(dict.fromkeys(frontier))
        types = tuple(sorted(set(edge_types)))
        if not ids or not types:
            return [], (), []
        params = {**hop_params(scope, types, max_degree, profiles, max_copied), "frontier": ids}
        row = self._client.read(cypher.hop(types), params)[0]
        return decode_links(row["links"]), tuple(row["copied"]), row["vectors"]

    def context(self, request: ContextRequest, *, scope: AccessScope) -> SearchContext:
        """See :meth:`brain_graph.stores.base.SearchReads.context`. One statement."""
        types = tuple(sorted(set(request.edge_types)))
        params = {
            **cypher_params(scope),
            "newIds": list(dict.fromkeys(request.new)),
            "knownIds": list(dict.fromkeys(request.known)),
            "records": sorted(set(request.records)),
            "edgeTypes": list(types),
            "members": sorted(set(request.members)),
            "clusterType": CLUSTER,
            "ranked": list(request.ranked),
            "passages": max(0, request.passages),
            **heads_params(request.whole_texts),
        }
        rows = self._client.read(cypher.context(types), params)
        if not rows:  # the tenant has no pointer (dropped during the search): nothing is visible
            return SearchContext([], [], [], [], {})
        row = rows[0]
        return SearchContext(
            [node_meta(node) for node in row["nodes"]],
            sorted(
                (
                    EdgeRecord(scope.tenant_id, edge_type, source, target, json.loads(properties or "{}"))
                    for edge_type, source, target, properties in row["edges"]
                ),
                key=edge_sort_key,
            ),
            decode_memberships(row["clusters"]),
            list(row["cited"]),
            passage_heads(row["texts"], request.whole_texts),
        )
