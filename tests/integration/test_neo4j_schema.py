"""The Neo4j schema: a database keyed on (tenantId, generation, nodeId) is moved to the node key on the
first write, and searches over data written under that key still find it."""

from __future__ import annotations

from collections.abc import Iterator

import neo4j
import pytest

from brain_graph.core.security import AccessScope
from brain_graph.stores.base import NodeRecord
from brain_graph.stores.neo4j_weaviate.neo4j import cypher
from tests.integration.servers import connect, server_settings, unique_prefix

pytestmark = pytest.mark.integration

FORMER_KEY = (
    "CREATE CONSTRAINT brain_node_generation_key IF NOT EXISTS "
    "FOR (n:BrainNode) REQUIRE (n.tenantId, n.generation, n.nodeId) IS UNIQUE"
)


@pytest.fixture
def driver() -> Iterator[neo4j.Driver]:
    settings = server_settings()
    with neo4j.GraphDatabase.driver(settings.neo4j_uri, auth=(settings.neo4j_user, settings.neo4j_password)) as made:
        yield made


def node_keys(driver: neo4j.Driver) -> dict[str, list[str]]:
    """The uniqueness constraints on ``:BrainNode``, by name, with their properties in key order."""
    with driver.session(database=server_settings().neo4j_database) as session:
        rows = session.run(
            "SHOW CONSTRAINTS YIELD name, labelsOrTypes, properties WHERE 'BrainNode' IN labelsOrTypes "
            "RETURN name, properties"
        )
        return {row["name"]: list(row["properties"]) for row in rows}


def test_the_first_write_moves_a_database_to_the_node_key(driver: neo4j.Driver) -> None:
    tenant = unique_prefix("schema") + "t"
    before = connect()
    try:
        written = NodeRecord(tenant, "a", "cdm.doc", None, "written before the move", None)
        before.load([written], [], [], [], replace=True)
    finally:
        before.close()
    with driver.session(database=server_settings().neo4j_database) as session:
        session.run("DROP CONSTRAINT brain_node_id_key IF EXISTS").consume()
        session.run(FORMER_KEY).consume()
    assert node_keys(driver) == {"brain_node_generation_key": ["tenantId", "generation", "nodeId"]}

    backend = connect()  # a new client: its first write runs the schema statements
    try:
        backend.load([NodeRecord(tenant + "x", "b", "cdm.doc", None, "after", None)], [], [], [], replace=True)
        assert node_keys(driver) == {"brain_node_id_key": ["nodeId", "tenantId", "generation"]}
        found = backend.graph_store.get_nodes(["a"], scope=AccessScope(tenant))
        assert [node.title for node in found] == ["written before the move"]
    finally:
        backend.drop_tenants([tenant, tenant + "x"])
        backend.close()


def test_the_node_key_is_the_one_every_lookup_hints(driver: neo4j.Driver) -> None:
    backend = connect()
    try:
        backend.neo4j.ensure_schema()
    finally:
        backend.close()
    keys = node_keys(driver)
    assert "brain_node_id_key" in keys
    hinted = f"BrainNode({', '.join(keys['brain_node_id_key'])})"
    assert hinted == cypher.NODE_KEY
