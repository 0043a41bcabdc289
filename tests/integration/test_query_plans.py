"""The plans of the statements a search sends never scan: every node is found by an index seek of its id
or by expanding from a node found so, whatever the index statistics say.

Neo4j samples index statistics in the background; right after a load they can be stale, and a planner
that trusts them may read a whole index per row (docs/internals/neo4j-statements.md). Two checks:

- on the real server, the plan of every statement captured from searches and graph reads has no scan
  operator (the small parity dataset makes a scan look cheap, so a pattern that allows one gets one),
  and every seek of a ``:BrainNode`` is a seek of ids on the node key, never a range of a tenant's
  generation with the ids filtered afterwards (which a seek hint on a key led by ``tenantId`` would
  allow);
- statically, every ``:BrainNode`` pattern variable of those statements carries a hint of the node
  key (:data:`~brain_graph.stores.neo4j_weaviate.neo4j.cypher.NODE_KEY`, ``nodeId`` first).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any, LiteralString, cast

import neo4j
import pytest

from brain_graph.core.security import AccessScope
from brain_graph.graphs.search import build_graph
from brain_graph.pipeline.state import BrainSearchInput
from brain_graph.stores.neo4j_weaviate.backend import Neo4jWeaviateBackend
from brain_graph.stores.neo4j_weaviate.neo4j import cypher
from tests.integration.conftest import Loaded
from tests.integration.servers import server_settings
from tests.integration.test_round_trips import busiest_query

pytestmark = pytest.mark.integration

TYPED = ("DEPENDS_ON", "REFERENCES")  # a set of edge types for the statements made per set
SEARCH_STATEMENTS: dict[str, Callable[[tuple[str, ...]], str]] = {
    "SEEDS": cypher.seeds,
    "CONTEXT": cypher.context,
    "LINKS": cypher.links,
    "HOP": cypher.hop,
    "GET_NODES": lambda _types: cypher.GET_NODES,
    "GET_TEXTS": lambda _types: cypher.GET_TEXTS,
    "GET_PASSAGE_HEADS": lambda _types: cypher.GET_PASSAGE_HEADS,
    "EDGES_AMONG": cypher.edges_among,
    "CLUSTER_MEMBERSHIPS": lambda _types: cypher.CLUSTER_MEMBERSHIPS,
}
LABELLED = re.compile(r"\((\w+):BrainNode\)")


def operators(plan: Any) -> Iterator[str]:
    """The operator names of a plan tree (the driver gives it as nested dicts)."""
    yield str(plan["operatorType"]).split("@")[0]
    for child in plan.get("children", []):
        yield from operators(child)


def node_seeks(plan: Any) -> Iterator[str]:
    """The details of the plan's index seeks of ``:BrainNode`` nodes."""
    details = str(plan.get("args", {}).get("Details", ""))
    if "Seek" in str(plan["operatorType"]) and ":BrainNode(" in details:
        yield details
    for child in plan.get("children", []):
        yield from node_seeks(child)


def seeks_ids(details: str) -> bool:
    """Whether a seek's details name the node key and look up ids (``nodeId IN`` a list or ``=`` one)."""
    match = re.search(r":(BrainNode\([^)]*\)) WHERE nodeId (IN|=) ", details)
    return match is not None and match.group(1) == cypher.NODE_KEY


def captured_statements(loaded: Loaded) -> list[tuple[str, dict[str, Any]]]:
    """Every statement the server backend sends for searches at depth 2 with episodes on, and for
    the graph store's single reads, with its parameters."""
    backend = cast(Neo4jWeaviateBackend, loaded.server.backend)
    client = backend.neo4j
    sent: list[tuple[str, dict[str, Any]]] = []
    original = client.read

    def recording(query: LiteralString, params: Any) -> Any:
        sent.append((query, dict(params)))
        return original(query, params)

    tenant, title = busiest_query(loaded)
    scope = AccessScope(tenant)
    client.read = recording  # type: ignore[method-assign]
    try:
        output = build_graph(loaded.server).invoke(
            cast(
                BrainSearchInput,
                {"queryText": title, "filter": {"tenantId": tenant, "secured": False}, "options": {"expandDepth": 2}},
            )
        )
        ids = [node["nodeId"] for node in output["graphNodes"]]
        edge_types = sorted({edge["edgeType"] for edge in output["graphEdges"]})
        graph = backend.graph_store
        graph.get_nodes(ids, scope=scope)
        graph.links(ids[:5], scope=scope, edge_types=edge_types, max_degree=50)
        graph.edges_among(ids, scope=scope, edge_types=edge_types)
        graph.cluster_memberships(ids, scope=scope, known=[])
        backend.passage_source.get_texts(ids, scope=scope)
        backend.passage_source.get_passage_heads(ids, scope=scope)
    finally:
        del client.read
    assert output["graphEdges"], "the search must expand"
    assert output["episodes"], "the search must find episodes (cluster memberships read)"
    return sent


def statement_name(query: str, params: dict[str, Any]) -> str | None:
    """Which search statement ``query`` is (made for the edge types of its parameters), if any."""
    types = tuple(params.get("edgeTypes", ()))
    return next((name for name, made in SEARCH_STATEMENTS.items() if made(types) == query), None)


def test_no_search_statement_plan_scans(loaded: Loaded) -> None:
    sent = captured_statements(loaded)
    names = {query: name for query, params in sent if (name := statement_name(query, params)) is not None}
    seen = set(names.values())
    assert seen == set(SEARCH_STATEMENTS), f"not exercised: {set(SEARCH_STATEMENTS) - seen}"
    settings = server_settings()
    driver = neo4j.GraphDatabase.driver(settings.neo4j_uri, auth=(settings.neo4j_user, settings.neo4j_password))
    try:
        with driver.session(database=settings.neo4j_database) as session:
            for query, params in sent:
                if query not in names:
                    continue
                plan = session.run(cast(LiteralString, "EXPLAIN " + query), params).consume().plan
                scans = sorted({op for op in operators(plan) if "Scan" in op})
                assert not scans, f"{names[query]} plans {scans}"
                seeks = list(node_seeks(plan))
                assert seeks, f"{names[query]}: no node seek found in the plan"
                ranges = [details for details in seeks if not seeks_ids(details)]
                assert not ranges, f"{names[query]} seeks {ranges}"
    finally:
        driver.close()


@pytest.mark.parametrize("name", sorted(SEARCH_STATEMENTS))
def test_every_labelled_node_of_a_search_statement_is_hinted(name: str) -> None:
    statement = SEARCH_STATEMENTS[name](TYPED)
    for variable in sorted(set(LABELLED.findall(statement))):
        hint = f"USING INDEX SEEK {variable}:{cypher.NODE_KEY} "
        assert hint in statement, f"{name}: ({variable}:BrainNode) has no hint of the node key"
