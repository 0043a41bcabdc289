"""``brain-graph attach --suggest`` on a public example graph: the Neo4j Movies graph
(``tests/data/movies``, Apache 2.0), searched through the mapping the suggestion wrote, unchanged.

The graph is loaded on the real Neo4j server with plain Cypher (the official driver), its labels made
unique to the run (``Movie_<run>``, ``Person_<run>``), with the schema the example's own load script
creates (``Person.name`` and ``Movie.title`` unique, indexes on ``born`` and ``released``). Then what a
team adds for vector search: embeddings of each movie's ``tagline`` (brain-graph's lexical embedder,
standing for the team's pipeline) in ``Movie.embedding`` with a cosine vector index on it, and a
string ``id`` on every node, because the graph has none that serves every label (a mapping has one id
property; the example keys movies by ``title`` and people by ``name``). The team derives it from those
unique keys (``movie:<title>``, ``person:<name>``) and makes it unique.

The suggestion maps the movies with their vectors and their tagline as their passage text (a doc's body), and the
people (an id and a name, no text, no vector index) because relationships link them to the movies:
as ``cdm.person``, reached by following edges, never a vector hit. It maps every relationship type,
with a note naming the ``BRAIN_GRAPH_SAFE_EDGE_TYPES`` value that follows them. The search finds movies
by the words of their tagline and cites them; with that value (and only with it) it reaches the
movies' people. ``attach --check`` of the suggestion exits 0, and nothing in the database changes.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import neo4j
import pytest

from brain_graph.embedding.lexical import LexicalHashEmbeddings
from brain_graph.stores.mapped.attach import (
    DEFAULT_PROFILES,
    ProfileSpec,
    SuggestedMapping,
    connection_settings,
    suggest_mapping,
)
from brain_graph.stores.mapped.mapping import read_mapping
from tests.integration.servers import brain_graph_cli, team_driver

pytestmark = pytest.mark.integration

DATA = Path(__file__).resolve().parents[1] / "data" / "movies" / "movies.cypher"
RUN = uuid.uuid4().hex[:8]
MOVIE, PERSON = f"Movie_{RUN}", f"Person_{RUN}"
LABELS = (MOVIE, PERSON)
VECTOR_INDEX = f"movie_tagline_{RUN}"
RELATIONSHIP_TYPES = ("ACTED_IN", "DIRECTED", "FOLLOWS", "PRODUCED", "REVIEWED", "WROTE")
EXAMPLE_SCHEMA = {  # the example's load script (neo4j-graph-examples/movies), under this run's labels
    f"person_name_{RUN}": f"CREATE CONSTRAINT `person_name_{RUN}` FOR (p:`{PERSON}`) REQUIRE p.name IS UNIQUE",
    f"movie_title_{RUN}": f"CREATE CONSTRAINT `movie_title_{RUN}` FOR (m:`{MOVIE}`) REQUIRE m.title IS UNIQUE",
    f"person_born_{RUN}": f"CREATE INDEX `person_born_{RUN}` FOR (p:`{PERSON}`) ON (p.born)",
    f"movie_released_{RUN}": f"CREATE INDEX `movie_released_{RUN}` FOR (m:`{MOVIE}`) ON (m.released)",
}
TEAM_IDS = {  # the id a team adds: from the unique keys, prefixed to be unique across the labels
    f"movie_id_{RUN}": (MOVIE, "'movie:' + n.title"),
    f"person_id_{RUN}": (PERSON, "'person:' + n.name"),
}
EMBEDDER = LexicalHashEmbeddings()
PROFILES = [ProfileSpec(p.profile_id, p.node_type, EMBEDDER.name, EMBEDDER.dimension) for p in DEFAULT_PROFILES]
ALLOWED = ",".join(sorted({"DEPENDS_ON", "DOCUMENTS", "IMPLEMENTED_BY", "REFERENCES", *RELATIONSHIP_TYPES}))
SAFE_EDGE_NOTE = re.compile(r"^# .*set BRAIN_GRAPH_SAFE_EDGE_TYPES=(\S+)$", re.MULTILINE)


def relabelled(cypher: str) -> str:
    """The data file with this run's labels (every node is created as ``(var:Movie {`` or ``(var:Person {``)."""
    text, created = re.subn(r"\((\w+):(Movie|Person) \{", lambda m: f"({m[1]}:{m[2]}_{RUN} {{", cypher)
    assert created == 171, created
    assert not re.search(r":(?:Movie|Person)\b", text)
    return text


def write_graph(driver: neo4j.Driver) -> None:
    """The example graph with its schema, then the team's vectors of the taglines."""
    driver.execute_query(relabelled(DATA.read_text(encoding="utf-8")))
    for statement in EXAMPLE_SCHEMA.values():
        driver.execute_query(statement)
    taglines = driver.execute_query(
        f"MATCH (m:`{MOVIE}`) WHERE m.tagline IS NOT NULL RETURN m.title AS title, m.tagline AS tagline"
    ).records
    vectors = EMBEDDER.embed_documents([row["tagline"] for row in taglines])
    driver.execute_query(
        f"UNWIND $rows AS row MATCH (m:`{MOVIE}` {{title: row.title}}) SET m.embedding = row.embedding",
        rows=[
            {"title": row["title"], "embedding": [float(x) for x in vector]}
            for row, vector in zip(taglines, vectors, strict=True)
        ],
    )
    driver.execute_query(
        f"CREATE VECTOR INDEX `{VECTOR_INDEX}` FOR (m:`{MOVIE}`) ON m.embedding "
        "OPTIONS {indexConfig: {`vector.dimensions`: $dimension, `vector.similarity_function`: 'cosine'}}",
        dimension=EMBEDDER.dimension,
    )
    driver.execute_query("CALL db.awaitIndexes(300)")


def add_ids(driver: neo4j.Driver) -> None:
    for name, (label, value) in TEAM_IDS.items():
        driver.execute_query(f"MATCH (n:`{label}`) SET n.id = {value}")
        driver.execute_query(f"CREATE CONSTRAINT `{name}` FOR (n:`{label}`) REQUIRE n.id IS UNIQUE")
    driver.execute_query("CALL db.awaitIndexes(300)")


def state(driver: neo4j.Driver) -> dict[str, Any]:
    """This run's data as attach and search must leave it: nodes (id, labels, keys), relationships per
    type, indexes and constraints."""
    nodes, relationships = [], []
    for label in LABELS:
        nodes += [
            (r["id"], sorted(r["labels"]), sorted(r["keys"]))
            for r in driver.execute_query(
                f"MATCH (n:`{label}`) RETURN n.id AS id, labels(n) AS labels, keys(n) AS keys"
            ).records
        ]
        relationships += [
            (label, r["type"], r["count"])
            for r in driver.execute_query(
                f"MATCH (:`{label}`)-[r]->() RETURN type(r) AS type, count(r) AS count ORDER BY type"
            ).records
        ]
    ours = "any(l IN coalesce(labelsOrTypes, []) WHERE l IN $labels)"
    indexes = driver.execute_query(
        f"SHOW INDEXES YIELD name, type, state, labelsOrTypes, properties WHERE {ours} "
        "RETURN name, type, state, properties ORDER BY name",
        labels=list(LABELS),
    ).records
    constraints = driver.execute_query(
        f"SHOW CONSTRAINTS YIELD name, type, labelsOrTypes, properties WHERE {ours} "
        "RETURN name, type, properties ORDER BY name",
        labels=list(LABELS),
    ).records
    return {
        "nodes": sorted(nodes, key=repr),
        "relationships": relationships,
        "indexes": [tuple(r.values()) for r in indexes],
        "constraints": [tuple(r.values()) for r in constraints],
    }


@dataclass(frozen=True)
class Graph:
    driver: neo4j.Driver
    without_ids: SuggestedMapping  # the suggestion before the team added its ids
    loaded: dict[str, Any]  # state() once everything was written


@pytest.fixture(scope="module")
def graph() -> Iterator[Graph]:
    driver = team_driver()
    try:
        write_graph(driver)
        without_ids = suggest_mapping(connection_settings(), False, labels=list(LABELS), profiles=PROFILES)
        add_ids(driver)
        yield Graph(driver, without_ids, state(driver))
    finally:
        try:
            for name in [*EXAMPLE_SCHEMA, *TEAM_IDS]:
                driver.execute_query(f"DROP CONSTRAINT `{name}` IF EXISTS")
                driver.execute_query(f"DROP INDEX `{name}` IF EXISTS")
            driver.execute_query(f"DROP INDEX `{VECTOR_INDEX}` IF EXISTS")
            for label in LABELS:
                driver.execute_query(f"MATCH (n:`{label}`) DETACH DELETE n")
        finally:
            driver.close()


@pytest.fixture(scope="module")
def suggested(graph: Graph, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``attach --suggest --labels <the run's labels> --no-weaviate --out movies.toml``, run once."""
    path = tmp_path_factory.mktemp("movies") / "movies.toml"
    done = brain_graph_cli("attach", "--suggest", "--labels", ",".join(LABELS), "--no-weaviate", "--out", str(path))
    assert done.returncode == 0, done.stderr
    assert f"wrote {path}" in done.stderr
    assert state(graph.driver) == graph.loaded
    return path


def search(mapping: Path, query: str, **env: str) -> dict[str, Any]:
    tenant = read_mapping(mapping).tenant.fixed
    assert tenant is not None
    done = brain_graph_cli(
        "search", query, "--tenant", tenant, "--public", "--json", BRAIN_GRAPH_MAPPING=str(mapping), **env
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def test_without_a_common_id_the_suggestion_keys_each_label_by_its_unique_property(graph: Graph) -> None:
    mapping = graph.without_ids.mapping
    assert mapping.id_property == "title"  # Movie.title is unique by constraint; Person's key is name
    assert [node.label for node in mapping.nodes] == [MOVIE, PERSON]
    assert mapping.id_of(PERSON) == ("name", "string")  # unique by constraint too: not a guess
    assert not graph.without_ids.guessed(f"nodes.{PERSON}.id_property")


def test_the_suggestion_maps_the_movies_and_their_tagline_vectors(suggested: Path) -> None:
    text = suggested.read_text(encoding="utf-8")
    mapping = read_mapping(suggested)
    assert mapping.name == "movies"
    assert mapping.id_property == "id"
    assert mapping.tenant.fixed == "default"
    assert mapping.title_properties == ["title", "name"]
    # the tagline is the movies' passage text; people have a name, no text or vectors, and are linked to movies
    assert [(node.label, node.node_type, node.text) for node in mapping.nodes] == [
        (MOVIE, "cdm.doc", {"body": "tagline"}),
        (PERSON, "cdm.person", {}),
    ]
    assert 'node_type = "cdm.person"  # guessed: no text and no vectors, linked to searched labels' in text
    assert [source.model_dump(exclude_none=True) for source in mapping.vectors] == [
        {
            "profile": "cdm.doc.body",
            "source": "neo4j",
            "index": VECTOR_INDEX,
            "property": "embedding",
            "embedder": EMBEDDER.name,
        }
    ]
    # every relationship, each read as its own name, and the allowlist that follows them
    assert sorted((edge.type, edge.as_type) for edge in mapping.edges) == [(t, t) for t in RELATIONSHIP_TYPES]
    assert SAFE_EDGE_NOTE.findall(text) == [ALLOWED]
    assert [line for line in text.splitlines() if line.startswith("# not mapped:")] == []


def test_the_check_of_the_suggestion_exits_0(graph: Graph, suggested: Path) -> None:
    (allowed,) = SAFE_EDGE_NOTE.findall(suggested.read_text(encoding="utf-8"))
    done = brain_graph_cli("attach", "--check", str(suggested), BRAIN_GRAPH_SAFE_EDGE_TYPES=allowed)
    assert done.returncode == 0, done.stderr
    out = done.stdout.splitlines()
    assert (
        f"mapping movies: nodes.{MOVIE}: {MOVIE} as cdm.doc: 38 nodes (38 sampled), 38 with a string 'id', "
        "tenants default"
    ) in out
    assert (
        f"mapping movies: nodes.{PERSON}: {PERSON} as cdm.person: 133 nodes (133 sampled), 133 with a string 'id', "
        "tenants default"
    ) in out
    assert "mapping movies: edges.ACTED_IN: as ACTED_IN: 172 start at, 172 end at mapped labels" in out
    assert (
        f"mapping movies: vectors.cdm.doc.body: neo4j index '{VECTOR_INDEX}' (dimension 512, cosine); "
        f"{MOVIE}: 37 of 38 sampled nodes have a vector, 0 not searchable"
    ) in out
    assert out[-1].startswith("mapping movies: usable (0 error(s), 2 warning(s))")
    assert done.stderr.splitlines() == [  # Something's Gotta Give has no tagline
        f"warning: mapping movies: nodes.{MOVIE}.text.body: 1 of 38 sampled nodes of {MOVIE} have no 'tagline'",
        f"warning: mapping movies: vectors.cdm.doc.body.property: 1 of 38 sampled nodes of {MOVIE} have no "
        "vector in 'embedding': a vector search never finds them",
    ]
    assert state(graph.driver) == graph.loaded


QUERIES = {  # words of a tagline -> the movie
    "welcome to the real world": "The Matrix",
    "Houston, we have a problem": "Apollo 13",
    "love, lava and burning desire": "Joe Versus the Volcano",
    "a secret world of assassins": "Ninja Assassin",
}


def test_a_search_finds_movies_by_words_of_their_tagline_and_cites_them(suggested: Path) -> None:
    for query, title in QUERIES.items():
        result = search(suggested, query)
        node_id = f"movie:{title}"
        assert result["hits"][0]["nodeId"] == node_id, (query, result["hits"][:3])
        assert result["hits"][0]["title"] == title
        first = result["promptPack"]["citations"][0]
        assert (first["sourceNodeId"], first["title"], first["reachedBy"]) == (node_id, title, "vector")
        assert f"**{title}** `{node_id}`" in result["promptPack"]["contextMarkdown"]
        passage = next(p for p in result["passages"] if p["sourceNodeId"] == node_id)
        assert (passage["sourceKind"], passage["url"]) == ("doc", None)
        assert passage["text"].startswith(f"{title}\n\n")  # the title, then the tagline
        assert query.lower() in passage["text"].lower()


def test_the_unchanged_suggestion_reaches_linked_people_with_the_suggested_allowlist(
    graph: Graph, suggested: Path
) -> None:
    query = "welcome to the real world"
    default = search(suggested, query)  # the default allowlist follows none of the movies' relationships
    assert not default["graphEdges"]
    assert all(candidate["reachedBy"] == "vector" for candidate in default["candidates"])

    (allowed,) = SAFE_EDGE_NOTE.findall(suggested.read_text(encoding="utf-8"))
    result = search(suggested, query, BRAIN_GRAPH_SAFE_EDGE_TYPES=allowed)
    assert result["hits"][0]["nodeId"] == "movie:The Matrix"
    reached = {c["nodeId"]: c for c in result["candidates"] if c["reachedBy"] == "graph"}
    keanu = reached["person:Keanu Reeves"]["via"]
    assert (keanu["seedNodeId"], keanu["edgeType"], keanu["direction"]) == ("movie:The Matrix", "ACTED_IN", "in")
    assert "person:Lana Wachowski" in reached
    assert not any(c["nodeId"].startswith("person:") for c in result["candidates"] if c["reachedBy"] == "vector")
    edges = {(e["edgeType"], e["fromNodeId"], e["toNodeId"]) for e in result["graphEdges"]}
    assert ("ACTED_IN", "person:Keanu Reeves", "movie:The Matrix") in edges
    passages = {p["sourceNodeId"]: p["text"] for p in result["passages"]}
    assert "Welcome to the Real World" in passages["movie:The Matrix"]
    assert state(graph.driver) == graph.loaded


def test_nothing_in_the_database_changed(graph: Graph, suggested: Path) -> None:
    """Last: after the suggestion, the checks and every search, the run's data is as written."""
    assert state(graph.driver) == graph.loaded
    assert len(graph.loaded["nodes"]) == 171
    assert sum(count for _, _, count in graph.loaded["relationships"]) == 253
