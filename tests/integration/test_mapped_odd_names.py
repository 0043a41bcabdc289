"""A graph whose names are not plain identifiers, on the real servers, written here with plain Cypher:
a label with a space (``Help Page <run>``), an id property with a dash under a uniqueness constraint
(``page-id``), a relationship type with a dash (``SEE-ALSO``). ``attach --suggest`` maps them as they
are (every name is backtick-quoted in the statements), and a search through the suggestion unchanged
finds the pages and follows the relationship.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import neo4j
import pytest

from brain_graph.embedding.lexical import LexicalHashEmbeddings
from brain_graph.stores.mapped.mapping import read_mapping
from tests.integration.servers import brain_graph_cli, team_driver

pytestmark = pytest.mark.integration

RUN = uuid.uuid4().hex[:8]
PAGE = f"Help Page {RUN}"
INDEX = f"help_page_text_{RUN}"
CONSTRAINT = f"help_page_id_{RUN}"
EMBEDDER = LexicalHashEmbeddings()
PAGES = {
    "hp-1": "Reset your password from the account settings page with the emailed code.",
    "hp-2": "Two-factor authentication codes expire after thirty seconds on the phone app.",
    "hp-3": "Invoices are sent on the first business day of every month to the billing contact.",
}


def state(driver: neo4j.Driver) -> dict[str, Any]:
    nodes = driver.execute_query(
        f"MATCH (n:`{PAGE}`) RETURN properties(n) AS p ORDER BY n.`page-id`", routing_=neo4j.RoutingControl.READ
    ).records
    rels = driver.execute_query(f"MATCH (:`{PAGE}`)-[r]->() RETURN type(r) AS t, count(r) AS c").records
    schema = driver.execute_query(
        "SHOW INDEXES YIELD name WHERE name CONTAINS $run RETURN name ORDER BY name", run=RUN
    ).records
    return {
        "nodes": [sorted(r["p"].items(), key=lambda kv: kv[0]) for r in nodes],
        "relationships": [tuple(r) for r in rels],
        "indexes": [r["name"] for r in schema],
    }


@pytest.fixture(scope="module")
def driver() -> Iterator[neo4j.Driver]:
    driver = team_driver()
    try:
        driver.execute_query(
            f"UNWIND $rows AS row CREATE (n:`{PAGE}` {{`page-id`: row[0], title: row[0], text: row[1]}}) "
            "WITH n, row CALL db.create.setNodeVectorProperty(n, 'embedding', row[2])",
            rows=[[key, text, [float(x) for x in EMBEDDER.embed_query(text)]] for key, text in PAGES.items()],
        )
        driver.execute_query(
            f"MATCH (a:`{PAGE}` {{`page-id`: 'hp-1'}}), (b:`{PAGE}` {{`page-id`: 'hp-2'}}) "
            "CREATE (a)-[:`SEE-ALSO`]->(b)"
        )
        driver.execute_query(f"CREATE CONSTRAINT `{CONSTRAINT}` FOR (n:`{PAGE}`) REQUIRE n.`page-id` IS UNIQUE")
        driver.execute_query(
            f"CREATE VECTOR INDEX `{INDEX}` FOR (n:`{PAGE}`) ON n.embedding "
            "OPTIONS {indexConfig: {`vector.dimensions`: $dimension, `vector.similarity_function`: 'cosine'}}",
            dimension=EMBEDDER.dimension,
        )
        driver.execute_query("CALL db.awaitIndexes(300)")
        before = state(driver)
        yield driver
        assert state(driver) == before
    finally:
        try:
            driver.execute_query(f"DROP INDEX `{INDEX}` IF EXISTS")
            driver.execute_query(f"DROP CONSTRAINT `{CONSTRAINT}` IF EXISTS")
            driver.execute_query(f"MATCH (n:`{PAGE}`) DETACH DELETE n")
        finally:
            driver.close()


@pytest.fixture(scope="module")
def suggested(driver: neo4j.Driver, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("odd") / "odd.toml"
    done = brain_graph_cli("attach", "--suggest", "--labels", PAGE, "--no-weaviate", "--out", str(path))
    assert done.returncode == 0, done.stderr
    return path


def test_the_suggestion_maps_the_names_as_they_are(suggested: Path) -> None:
    mapping = read_mapping(suggested)
    assert [node.label for node in mapping.nodes] == [PAGE]
    assert mapping.id_of(PAGE) == ("page-id", "string")
    assert [(edge.type, edge.as_type) for edge in mapping.edges] == [("SEE-ALSO", "SEE_ALSO")]
    done = brain_graph_cli("attach", "--check", str(suggested), BRAIN_GRAPH_SAFE_EDGE_TYPES="SEE_ALSO")
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_search_through_the_suggestion_finds_the_page_and_follows_the_dashed_type(suggested: Path) -> None:
    done = brain_graph_cli(
        "search", "reset password account settings", "--tenant", "default", "--public", "--json",
        BRAIN_GRAPH_MAPPING=str(suggested), BRAIN_GRAPH_SAFE_EDGE_TYPES="SEE_ALSO",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["hits"][0]["nodeId"] == "hp-1"
    assert "emailed code" in {p["sourceNodeId"]: p["text"] for p in result["passages"]}["hp-1"]
    edges = {(e["edgeType"], e["fromNodeId"], e["toNodeId"]) for e in result["graphEdges"]}
    assert ("SEE_ALSO", "hp-1", "hp-2") in edges
