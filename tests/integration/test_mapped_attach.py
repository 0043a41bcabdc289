"""``brain-graph attach`` on the real servers, over a graph written here with plain Cypher the way
neo4j-graphrag writes its lexical graph (labels unique to the run, deleted at the end):

* ``Document{path}``, ``Chunk{id, text, index, embedding}`` with ``FROM_DOCUMENT`` and ``NEXT_CHUNK``,
  entities with ``__Entity__`` + their own label + ``__KGBuilder__`` (every node has that marker) and
  ``FROM_CHUNK`` to their chunks, a vector index on ``Chunk.embedding`` holding vectors made by
  brain-graph's lexical embedder;
* tickets whose vectors are in a Weaviate collection named like their label (``nodeId`` per object);
* nodes whose ids are not unique (a label the suggestion does not read).

(1) ``--suggest`` output, written to a file unchanged, makes ``brain-graph search`` find the chunks
and tickets the query is about; (2) each bad mapping is one error line naming its key; (3) ``--check``
of the suggestion exits 0 and prints the counts. Neither writes anything.
"""

from __future__ import annotations

import itertools
import json
import tomllib
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import neo4j
import pytest
import weaviate
from weaviate.classes.config import Configure, DataType, Property, Tokenization, VectorDistances

from brain_graph.embedding.lexical import LexicalHashEmbeddings
from brain_graph.stores.mapped.attach import (
    DEFAULT_PROFILES,
    ProfileSpec,
    check_mapping,
    connection_settings,
    render_toml,
    suggest_mapping,
)
from brain_graph.stores.mapped.mapping import Mapping, parse_mapping, read_mapping
from tests.integration.servers import brain_graph_cli, team_driver, team_weaviate

pytestmark = pytest.mark.integration

RUN = uuid.uuid4().hex[:8]
DOCUMENT, CHUNK, PERSON, ORG, TICKET = (
    f"{name}_{RUN}" for name in ("Document", "Chunk", "Person", "Organization", "Ticket")
)
DUPLICATE = f"Dup_{RUN}_ids"  # not matched by the suggestion's --labels pattern
PATTERN = f"*_{RUN}"
OURS = (DOCUMENT, CHUNK, PERSON, ORG, TICKET, DUPLICATE)
VECTOR_INDEX = f"chunk_embedding_{RUN}"
COLLECTION = f"Ticket_{RUN}"
EMBEDDER = LexicalHashEmbeddings()

CHUNKS = {  # id -> (document, text)
    f"c1-{RUN}": (
        "payments.md",
        "The payment service retries failed card charges with exponential backoff and jitter.",
    ),
    f"c2-{RUN}": ("payments.md", "Refunds are issued within five business days after a dispute is closed by the bank."),
    f"c3-{RUN}": ("auth.md", "The login page locks an account after five failed password attempts in ten minutes."),
    f"c4-{RUN}": ("auth.md", "Session cookies expire after thirty minutes of inactivity on every device."),
    f"c5-{RUN}": ("deploy.md", "Kubernetes deployments roll back automatically when readiness health checks fail."),
}
ENTITIES = {  # id -> (label, name, description or None, chunks it was extracted from)
    f"p1-{RUN}": (PERSON, "Alice Martin", "Alice owns the payment service and its retry policy.", [f"c1-{RUN}"]),
    f"p2-{RUN}": (PERSON, "Bob Chen", "Bob runs the on-call rotation for authentication.", [f"c3-{RUN}", f"c4-{RUN}"]),
    f"p3-{RUN}": (PERSON, "Carol Diaz", None, [f"c5-{RUN}"]),  # no description: missing on some nodes
    f"o1-{RUN}": (ORG, "Acme Payments", "The payments team of Acme.", [f"c1-{RUN}", f"c2-{RUN}"]),
}
TICKETS = {  # id -> (title, summary)
    f"t1-{RUN}": ("Checkout fails on card charge timeout", "Card charges time out at checkout under peak load."),
    f"t2-{RUN}": ("Password reset email delayed", "Reset emails arrive late because the mail queue is backed up."),
}


def embed(text: str) -> list[float]:
    return [float(x) for x in EMBEDDER.embed_query(text)]


def write_graph(driver: neo4j.Driver) -> None:
    """The lexical graph, entities, tickets and duplicates, as plain Cypher writes them."""
    documents = sorted({document for document, _ in CHUNKS.values()})
    driver.execute_query(
        f"UNWIND $paths AS path CREATE (:`{DOCUMENT}`:__KGBuilder__ {{path: path, createdAt: '2026-01-01T00:00:00Z'}})",
        paths=documents,
    )
    rows = [
        {"id": chunk_id, "text": text, "index": i, "embedding": embed(text), "document": document}
        for i, (chunk_id, (document, text)) in enumerate(CHUNKS.items())
    ]
    driver.execute_query(
        f"UNWIND $rows AS row MATCH (d:`{DOCUMENT}` {{path: row.document}}) "
        f"CREATE (c:`{CHUNK}`:__KGBuilder__ {{id: row.id, text: row.text, index: row.index}}) "
        "SET c.embedding = row.embedding CREATE (c)-[:FROM_DOCUMENT]->(d)",
        rows=rows,
    )
    ids = list(CHUNKS)
    driver.execute_query(
        f"UNWIND $pairs AS pair MATCH (a:`{CHUNK}` {{id: pair[0]}}), (b:`{CHUNK}` {{id: pair[1]}}) "
        "CREATE (a)-[:NEXT_CHUNK]->(b)",
        pairs=[[a, b] for a, b in itertools.pairwise(ids) if CHUNKS[a][0] == CHUNKS[b][0]],
    )
    for entity_id, (label, name, description, chunks) in ENTITIES.items():
        driver.execute_query(
            f"CREATE (e:`{label}`:__Entity__:__KGBuilder__ {{id: $id, name: $name}}) "
            "SET e.description = $description WITH e "
            f"UNWIND $chunks AS chunk MATCH (c:`{CHUNK}` {{id: chunk}}) CREATE (e)-[:FROM_CHUNK]->(c)",
            id=entity_id,
            name=name,
            description=description,
            chunks=chunks,
        )
    driver.execute_query(
        f"MATCH (p:`{PERSON}` {{id: $person}}), (o:`{ORG}` {{id: $org}}) CREATE (p)-[:WORKS_AT]->(o)",
        person=f"p1-{RUN}",
        org=f"o1-{RUN}",
    )
    driver.execute_query(
        f"UNWIND $rows AS row CREATE (:`{TICKET}` {{id: row.id, title: row.title, summary: row.summary}})",
        rows=[{"id": key, "title": title, "summary": summary} for key, (title, summary) in TICKETS.items()],
    )
    driver.execute_query(
        f"MATCH (t:`{TICKET}` {{id: $ticket}}), (p:`{PERSON}` {{id: $person}}) CREATE (t)-[:relatesTo]->(p)",
        ticket=f"t1-{RUN}",
        person=f"p1-{RUN}",
    )
    driver.execute_query(
        f"UNWIND $rows AS row CREATE (:`{DUPLICATE}` {{id: row[0], text: row[1]}})",
        rows=[[f"d1-{RUN}", "first"], [f"d1-{RUN}", "second"], [f"d2-{RUN}", "third"]],
    )
    for label in (CHUNK, PERSON, ORG, TICKET):
        driver.execute_query(f"CREATE INDEX `id_{label}` IF NOT EXISTS FOR (n:`{label}`) ON (n.id)")
    driver.execute_query(
        f"CREATE VECTOR INDEX `{VECTOR_INDEX}` IF NOT EXISTS FOR (n:`{CHUNK}`) ON n.embedding "
        "OPTIONS {indexConfig: {`vector.dimensions`: $dimension, `vector.similarity_function`: 'cosine'}}",
        dimension=EMBEDDER.dimension,
    )
    driver.execute_query("CALL db.awaitIndexes(300)")


def write_collection(client: weaviate.WeaviateClient) -> None:
    """The tickets' vectors (of title and summary, as brain-graph's work profile embeds them)."""
    client.collections.create(
        COLLECTION,
        properties=[
            Property(name="nodeId", data_type=DataType.TEXT, tokenization=Tokenization.FIELD),
            Property(name="title", data_type=DataType.TEXT),
        ],
        vector_config=Configure.Vectors.self_provided(
            vector_index_config=Configure.VectorIndex.flat(distance_metric=VectorDistances.COSINE)
        ),
    )
    collection = client.collections.use(COLLECTION)
    for key, (title, summary) in TICKETS.items():
        collection.data.insert({"nodeId": key, "title": title}, vector=embed(f"{title}\n{summary}"))


def state(driver: neo4j.Driver, client: weaviate.WeaviateClient) -> dict[str, Any]:
    """What attach must leave as it was: this run's nodes (labels, keys), relationships, indexes,
    constraints, and the collection's config and count."""
    ours = "any(l IN labels(n) WHERE l ENDS WITH $run OR l ENDS WITH $run + '_ids')"
    nodes = driver.execute_query(
        f"MATCH (n) WHERE {ours} RETURN n.id AS id, labels(n) AS labels, keys(n) AS keys ORDER BY id, keys", run=RUN
    ).records
    rels = driver.execute_query(
        f"MATCH (n)-[r]->() WHERE {ours} RETURN type(r) AS t, count(r) AS c ORDER BY t", run=RUN
    ).records
    indexes = driver.execute_query(
        "SHOW INDEXES YIELD name, state, labelsOrTypes WHERE name CONTAINS $run "
        "OR any(l IN coalesce(labelsOrTypes, []) WHERE l CONTAINS $run) RETURN name, state ORDER BY name",
        run=RUN,
    ).records
    constraints = driver.execute_query(
        "SHOW CONSTRAINTS YIELD name, labelsOrTypes WHERE any(l IN labelsOrTypes WHERE l CONTAINS $run) "
        "RETURN name ORDER BY name",
        run=RUN,
    ).records
    collection = client.collections.use(COLLECTION)
    return {
        "nodes": [(r["id"], sorted(r["labels"]), sorted(r["keys"])) for r in nodes],
        "relationships": [tuple(r) for r in rels],
        "indexes": [tuple(r) for r in indexes],
        "constraints": [tuple(r) for r in constraints],
        "collection": collection.config.get().to_dict(),
        "objects": collection.aggregate.over_all(total_count=True).total_count,
    }


@pytest.fixture(scope="module")
def graph() -> Iterator[tuple[neo4j.Driver, weaviate.WeaviateClient]]:
    driver = team_driver()
    client = team_weaviate()
    try:
        write_graph(driver)
        write_collection(client)
        yield driver, client
    finally:
        try:
            client.collections.delete(COLLECTION)
            driver.execute_query(f"DROP INDEX `{VECTOR_INDEX}` IF EXISTS")
            for label in OURS:
                driver.execute_query(f"DROP INDEX `id_{label}` IF EXISTS")
                driver.execute_query(f"MATCH (n:`{label}`) DETACH DELETE n")
        finally:
            client.close()
            driver.close()


@pytest.fixture(scope="module")
def suggested(graph: tuple[neo4j.Driver, weaviate.WeaviateClient], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``attach --suggest --labels *_<run> --out FILE``, run once; the file as written."""
    driver, client = graph
    before = state(driver, client)
    path = tmp_path_factory.mktemp("attach") / "team.toml"
    done = brain_graph_cli("attach", "--suggest", "--labels", PATTERN, "--out", str(path))
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""
    assert f"wrote {path}" in done.stderr
    assert state(driver, client) == before
    return path


def search(mapping: Path, query: str, **env: str) -> dict[str, Any]:
    done = brain_graph_cli(
        "search", query, "--tenant", "default", "--public", "--json", BRAIN_GRAPH_MAPPING=str(mapping), **env
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    return result


# -- (1) the suggestion, as written, searches ----------------------------------------------------------


def test_the_suggestion_reads_the_lexical_graph(suggested: Path) -> None:
    text = suggested.read_text(encoding="utf-8")
    mapping = read_mapping(suggested)
    data = tomllib.loads(text)
    assert mapping.name == "team"
    assert mapping.id_property == "id"
    assert mapping.tenant.fixed == "default"
    assert mapping.title_properties == ["title", "name", "path"]  # a document's title is its path
    nodes = {node.label: node for node in mapping.nodes}
    assert set(nodes) == {CHUNK, PERSON, ORG, TICKET, DOCUMENT}  # no marker labels
    # documents have no text and no id: linked to the chunks, named by their element id
    assert (nodes[DOCUMENT].node_type, nodes[DOCUMENT].text) == ("kg.entity", {})
    assert mapping.id_of(DOCUMENT) == ("elementId()", "string")
    assert nodes[CHUNK].node_type == "cdm.doc"
    assert nodes[CHUNK].text == {"body": "text"}
    assert nodes[TICKET].node_type == "cdm.work_item"
    assert nodes[TICKET].text == {"summary": "summary"}
    assert nodes[PERSON].text == {"body": "description"}
    assert {(edge.type, edge.as_type) for edge in mapping.edges} == {
        ("NEXT_CHUNK", "NEXT_CHUNK"),
        ("FROM_CHUNK", "FROM_CHUNK"),
        ("WORKS_AT", "WORKS_AT"),
        ("relatesTo", "RELATES_TO"),
        ("FROM_DOCUMENT", "FROM_DOCUMENT"),
    }
    vectors = {source.profile: source.model_dump(exclude_none=True) for source in mapping.vectors}
    assert vectors == {
        "cdm.doc.body": {
            "profile": "cdm.doc.body",
            "source": "neo4j",
            "index": VECTOR_INDEX,
            "property": "embedding",
            "embedder": EMBEDDER.name,
        },
        "cdm.work.summary": {
            "profile": "cdm.work.summary",
            "source": "weaviate",
            "collection": COLLECTION,
            "id_property": "nodeId",
            "embedder": EMBEDDER.name,
        },
    }
    lines = text.splitlines()
    guessed = {line.split("#")[0].strip() for line in lines if "# guessed:" in line}
    assert 'tenant = { fixed = "default" }' in guessed
    assert 'node_type = "cdm.doc"' in guessed  # Person and Organization say nothing of their kind
    assert f'embedder = "{EMBEDDER.name}"' in guessed
    assert 'label = "' + CHUNK + '"' not in guessed
    assert 'id_property = "elementId()"' in lines
    assert any(
        "BRAIN_GRAPH_SAFE_EDGE_TYPES=" in line and "FROM_CHUNK" in line and "NEXT_CHUNK" in line
        for line in lines
        if line.startswith("#")
    )
    assert data["vectors"][0]["index"] == VECTOR_INDEX


def test_the_suggestion_written_unchanged_makes_search_find_the_chunks(suggested: Path) -> None:
    result = search(suggested, "card charges retries exponential backoff")
    hits = [hit for hit in result["hits"] if hit["nodeType"] == "cdm.doc"]
    assert hits[0]["nodeId"] == f"c1-{RUN}"
    texts = {passage["sourceNodeId"]: passage["text"] for passage in result["passages"]}
    assert "retries failed card charges" in texts[f"c1-{RUN}"]
    result = search(suggested, "account locked after failed password attempts")
    assert next(hit["nodeId"] for hit in result["hits"] if hit["nodeType"] == "cdm.doc") == f"c3-{RUN}"


def test_the_suggestion_finds_the_tickets_through_weaviate(suggested: Path) -> None:
    result = search(suggested, "checkout card charge timeout")
    work = [hit for hit in result["hits"] if hit["profileId"] == "cdm.work.summary"]
    assert work[0]["nodeId"] == f"t1-{RUN}"
    assert work[0]["title"] == "Checkout fails on card charge timeout"


def test_the_suggested_edges_are_followed_once_allowed(suggested: Path) -> None:
    query = "card charges retries exponential backoff"
    allowed = "DEPENDS_ON,DOCUMENTS,IMPLEMENTED_BY,REFERENCES,FROM_CHUNK,NEXT_CHUNK,RELATES_TO,WORKS_AT"
    result = search(suggested, query, BRAIN_GRAPH_SAFE_EDGE_TYPES=allowed)
    edges = {(edge["edgeType"], edge["fromNodeId"], edge["toNodeId"]) for edge in result["graphEdges"]}
    assert ("FROM_CHUNK", f"p1-{RUN}", f"c1-{RUN}") in edges
    assert not search(suggested, query)["graphEdges"]


def test_the_python_api_gives_the_same_mapping(
    graph: tuple[neo4j.Driver, weaviate.WeaviateClient], suggested: Path
) -> None:
    profiles = [ProfileSpec(p.profile_id, p.node_type, EMBEDDER.name, EMBEDDER.dimension) for p in DEFAULT_PROFILES]
    found = suggest_mapping(connection_settings(), labels=[PATTERN], profiles=profiles, name="team")
    assert found.mapping == read_mapping(suggested)
    assert render_toml(found) == suggested.read_text(encoding="utf-8")
    keys = {guess.key for guess in found.guesses}
    assert {"tenant", f"nodes.{PERSON}.node_type", "vectors.cdm.doc.body.embedder"} <= keys
    without = suggest_mapping(connection_settings(), False, labels=[PATTERN], profiles=profiles)
    assert [source.profile for source in without.mapping.vectors] == ["cdm.doc.body"]


# -- (2) bad mappings: one line each, naming the key ---------------------------------------------------


def good() -> dict[str, Any]:
    return {
        "name": "team",
        "id_property": "id",
        "tenant": {"fixed": "default"},
        "title_properties": ["title", "name"],
        "nodes": [
            {"label": CHUNK, "node_type": "cdm.doc", "text": {"body": "text"}},
            {"label": PERSON, "node_type": "cdm.doc", "text": {"body": "description"}},
        ],
        "edges": [{"type": "FROM_CHUNK", "as": "FROM_CHUNK"}],
        "vectors": [{"profile": "cdm.doc.body", "source": "neo4j", "index": VECTOR_INDEX, "property": "embedding"}],
    }


def changed(**changes: Any) -> Mapping:
    data = good()
    for key, value in changes.items():
        data[key] = value(data[key]) if callable(value) else value
    return parse_mapping(data)


PROFILES = [ProfileSpec(p.profile_id, p.node_type, EMBEDDER.name, EMBEDDER.dimension) for p in DEFAULT_PROFILES]
NARROW = [
    ProfileSpec(p.profile_id, p.node_type, "lexical-hash-v1/256", 256 if p.profile_id == "cdm.doc.body" else 512)
    for p in DEFAULT_PROFILES
]
BAD = {
    "unknown label": (
        changed(nodes=lambda nodes: [*nodes, {"label": f"Nope_{RUN}", "node_type": "cdm.doc"}]),
        PROFILES,
        f"nodes.Nope_{RUN}.label",
        f"label 'Nope_{RUN}' does not exist",
    ),
    "wrong dimension": (changed(), NARROW, "vectors.cdm.doc.body", "dimension 512"),
    "relationship type that does not exist": (
        changed(edges=lambda edges: [*edges, {"type": f"NOPE_{RUN}", "as": "REFERENCES"}]),
        PROFILES,
        f"edges.NOPE_{RUN}.type",
        f"relationship type 'NOPE_{RUN}' does not exist",
    ),
    "id not unique": (
        changed(nodes=lambda nodes: [*nodes, {"label": DUPLICATE, "node_type": "cdm.doc", "text": {"body": "text"}}]),
        PROFILES,
        "id_property",
        f"'id' is not unique: 1 id(s) of the sampled nodes of {DUPLICATE}",
    ),
    "text property missing on every node": (
        changed(nodes=lambda nodes: [{**nodes[0], "text": {"body": "content"}}, nodes[1]]),
        PROFILES,
        f"nodes.{CHUNK}.text.body",
        f"none of the 5 sampled nodes of {CHUNK} has 'content'",
    ),
    "vector index on another property": (
        changed(vectors=[{**good()["vectors"][0], "property": "vector"}]),
        PROFILES,
        "vectors.cdm.doc.body.property",
        f"index '{VECTOR_INDEX}' is on property embedding, not 'vector'",
    ),
}


def test_a_good_mapping_has_no_errors_and_says_what_is_missing_on_some_nodes(
    graph: tuple[neo4j.Driver, weaviate.WeaviateClient],
) -> None:
    report = check_mapping(changed(), connection_settings(), profiles=PROFILES)
    assert report.usable, report.problem_lines()
    assert report.problem_lines() == [
        f"warning: mapping team: nodes.{PERSON}.text.body: 1 of 3 sampled nodes of {PERSON} have no 'description'",
        "warning: mapping team: edges.FROM_CHUNK.as: edge type 'FROM_CHUNK' is not followed: add it to "
        "BRAIN_GRAPH_SAFE_EDGE_TYPES (now DEPENDS_ON,DOCUMENTS,IMPLEMENTED_BY,REFERENCES)",
    ]


@pytest.mark.parametrize("case", sorted(BAD))
def test_a_bad_mapping_is_one_line_naming_the_key(
    graph: tuple[neo4j.Driver, weaviate.WeaviateClient], case: str
) -> None:
    mapping, profiles, key, text = BAD[case]
    report = check_mapping(mapping, connection_settings(), profiles=profiles)
    assert not report.usable
    assert [problem.key for problem in report.errors] == [key], report.problem_lines()
    (line,) = [line for line in report.problem_lines() if line.startswith("error: ")]
    assert line.startswith(f"error: mapping team: {key}: ")
    assert text in line


def test_the_cli_check_of_a_bad_mapping_exits_2_with_one_line_per_problem(
    graph: tuple[neo4j.Driver, weaviate.WeaviateClient], tmp_path: Path
) -> None:
    path = tmp_path / "bad.toml"
    data = good()
    data["nodes"].append({"label": f"Nope_{RUN}", "node_type": "cdm.doc"})
    data["edges"].append({"type": f"NOPE_{RUN}", "as": "REFERENCES"})
    path.write_text(render_mapping(data), encoding="utf-8")
    done = brain_graph_cli("attach", "--check", str(path), BRAIN_GRAPH_EMBEDDER="lexical:256")
    assert done.returncode == 2, done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("error: ")]
    assert sorted(line.split(": ")[2] for line in errors) == sorted(
        [f"nodes.Nope_{RUN}.label", f"edges.NOPE_{RUN}.type", "vectors.cdm.doc.body"]
    )
    assert all(line.startswith("error: mapping bad: ") for line in errors)
    assert "mapping bad: not usable (3 error(s)" in done.stdout


def render_mapping(data: dict[str, Any]) -> str:
    from brain_graph.stores.mapped.attach import SuggestedMapping

    return render_toml(SuggestedMapping(parse_mapping(data)))


# -- (3) the check of the suggestion --------------------------------------------------------------------


def test_the_check_of_the_suggestion_exits_0_and_prints_counts(
    graph: tuple[neo4j.Driver, weaviate.WeaviateClient], suggested: Path
) -> None:
    driver, client = graph
    before = state(driver, client)
    done = brain_graph_cli("attach", "--check", str(suggested))
    assert done.returncode == 0, done.stderr
    out = done.stdout.splitlines()
    assert (
        f"mapping team: nodes.{CHUNK}: {CHUNK} as cdm.doc: 5 nodes (5 sampled), 5 with a string 'id', tenants default"
        in out
    )
    assert (
        f"mapping team: nodes.{TICKET}: {TICKET} as cdm.work_item: 2 nodes (2 sampled), 2 with a string 'id', "
        "tenants default"
    ) in out
    assert (
        f"mapping team: vectors.cdm.doc.body: neo4j index '{VECTOR_INDEX}' (dimension 512, cosine); "
        f"{CHUNK}: 5 of 5 sampled nodes have a vector, 0 not searchable"
    ) in out
    assert (
        f"mapping team: vectors.cdm.work.summary: weaviate collection '{COLLECTION}' (dimension 512); "
        f"{TICKET}: 2 of 2 sampled nodes have a vector; 0 of 2 sampled objects without a node"
    ) in out
    assert "mapping team: edges.NEXT_CHUNK: as NEXT_CHUNK: 2 start at, 2 end at mapped labels (not followed)" in out
    assert out[-1].startswith("mapping team: usable (0 error(s), ")
    warnings = done.stderr.splitlines()
    assert (
        f"warning: mapping team: nodes.{PERSON}.text.body: 1 of 3 sampled nodes of {PERSON} have no 'description'"
        in warnings
    )
    assert all(line.startswith("warning: mapping team: ") for line in warnings)
    assert state(driver, client) == before
