"""Step 3: breadth-first graph expansion around the hits over allowlisted edge types."""

from __future__ import annotations

from typing import Any

from brain_graph.contracts import BrainGraphEdge, BrainGraphNode, BrainSearchHit
from brain_graph.requests import access_scope, read_list, read_request
from brain_graph.state import BrainSearchState
from brain_graph.steps import StepDeps
from brain_graph.stores.base import NodeRecord


def graph_node(node: NodeRecord) -> BrainGraphNode:
    """The wire form of a node: its label and its metadata properties (plus ``projectKey``)."""
    properties = dict(node.properties)
    if node.project_key is not None:
        properties["projectKey"] = node.project_key
    return BrainGraphNode(
        node_id=node.node_id, node_type=node.node_type, label=node.title, properties=dict(sorted(properties.items()))
    )


def expand(state: BrainSearchState, deps: StepDeps) -> dict[str, Any]:
    """Write ``graphNodes`` and ``graphEdges``.

    Nodes are admitted in a total order: the hits by rank, then each hop's new neighbours ordered by
    (rank of the frontier node they were reached from, edge type, node id), until ``maxNodes``. One
    ``neighbors`` call per hop, then one node fetch and one edge fetch for the admitted set; edges
    are those of allowed types between admitted nodes. Tenant and ACL are enforced by the store.
    """
    services = deps.services
    request = read_request(state, services)
    scope = access_scope(request, deps.principal, services)
    options = request.options
    graph = services.backend.graph_store
    edge_types = services.edges.expansion_types(options.include_signals, options.include_clusters)

    admitted = [hit.node_id for hit in read_list(state, "hits", BrainSearchHit)][: options.max_nodes]
    frontier = list(admitted)
    for _hop in range(options.expand_depth):
        room = options.max_nodes - len(admitted)
        if not frontier or room <= 0 or not edge_types:
            break
        reached = graph.neighbors(frontier, scope=scope, edge_types=edge_types, exclude=admitted, limit=room)
        frontier = [adjacency.neighbor_id for adjacency in reached]
        admitted.extend(frontier)

    records = {node.node_id: node for node in graph.get_nodes(admitted, scope=scope)}
    nodes = [graph_node(records[node_id]) for node_id in admitted if node_id in records]
    visible_ids = [node.node_id for node in nodes]
    edges = [
        BrainGraphEdge(
            edge_type=edge.edge_type,
            from_node_id=edge.from_node_id,
            to_node_id=edge.to_node_id,
            properties=dict(sorted(edge.properties.items())),
        )
        for edge in graph.edges_among(visible_ids, scope=scope, edge_types=edge_types)
    ]
    return {"graphNodes": nodes, "graphEdges": edges}
