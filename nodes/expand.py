"""Step 3: breadth-first graph expansion around the hits over allowlisted edge types."""

from __future__ import annotations

from typing import TypedDict

from brain_graph.state import BrainSearchState
from brain_graph.steps import StepDeps
from brain_graph.wire import GraphEdge, GraphNode, NodeMeta

from .retrieve import node_meta


class ExpandUpdate(TypedDict):
    graphNodes: list[GraphNode]
    graphEdges: list[GraphEdge]
    nodeRecords: dict[str, NodeMeta]


def graph_node(node_id: str, meta: NodeMeta) -> GraphNode:
    """The wire form of a node: its label and its metadata properties (plus ``projectKey``)."""
    properties = dict(meta["properties"])
    if meta["projectKey"] is not None:
        properties["projectKey"] = meta["projectKey"]
    return GraphNode(
        nodeId=node_id, nodeType=meta["nodeType"], label=meta["title"], properties=dict(sorted(properties.items()))
    )


def expand(state: BrainSearchState, deps: StepDeps) -> ExpandUpdate:
    """Write ``graphNodes`` and ``graphEdges``, and add the expanded nodes to ``nodeRecords``.

    Nodes are admitted in a total order: the hits by rank, then each hop's new neighbours ordered by
    (rank of the frontier node they were reached from, edge type, node id), until ``maxNodes``. One
    ``neighbors`` call per hop, then one metadata read of the nodes new to this search and one edge
    fetch for the admitted set; edges are those of allowed types between admitted nodes. Tenant and
    ACL are enforced by the store.
    """
    request = state["request"]
    options = request["options"]
    scope = deps.scope(request)
    graph = deps.services.backend.graph_store
    edge_types = deps.services.edges.expansion_types(options["includeSignals"], options["includeClusters"])

    admitted = [hit["nodeId"] for hit in state["hits"]][: options["maxNodes"]]
    frontier = list(admitted)
    for _hop in range(options["expandDepth"]):
        room = options["maxNodes"] - len(admitted)
        if not frontier or room <= 0 or not edge_types:
            break
        reached = graph.neighbors(frontier, scope=scope, edge_types=edge_types, exclude=admitted, limit=room)
        frontier = [adjacency.neighbor_id for adjacency in reached]
        admitted.extend(frontier)

    records = dict(state["nodeRecords"])
    new_ids = [node_id for node_id in admitted if node_id not in records]
    if new_ids:
        records.update({node.node_id: node_meta(node) for node in graph.get_nodes(new_ids, scope=scope)})
    nodes = [graph_node(node_id, records[node_id]) for node_id in admitted if node_id in records]
    visible_ids = [node["nodeId"] for node in nodes]
    edges = [
        GraphEdge(
            edgeType=edge.edge_type,
            fromNodeId=edge.from_node_id,
            toNodeId=edge.to_node_id,
            properties=dict(sorted(edge.properties.items())),
        )
        for edge in graph.edges_among(visible_ids, scope=scope, edge_types=edge_types)
    ]
    return {"graphNodes": nodes, "graphEdges": edges, "nodeRecords": records}
