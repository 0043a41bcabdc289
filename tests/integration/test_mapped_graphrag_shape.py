"""Graphs with no string id property, on the real servers, written here with plain Cypher:

* the lexical graph exactly as neo4j-graphrag's writer leaves it: ``Document{path, createdAt}``,
  ``Chunk{text, index}`` with its vector set by ``db.create.setNodeVectorProperty``,
  ``FROM_DOCUMENT``, ``NEXT_CHUNK``, entities ``__Entity__`` + their type + ``__KGBuilder__`` with
  ``FROM_CHUNK``, and its temporary ``__tmp_internal_id`` removed at the end: no node has an id
  property. ``attach --suggest``'s mapping, unchanged, names nodes by their element ids and searches it;
* notes with **integer** ids, a tenant property and an ACL that is two untyped lists (user ids and
  group names), read through a mapping with ``id_type = "integer"``, ``acl_user_property`` and
  ``acl_group_property``.

Nothing is written by brain-graph: the run's nodes, relationships, indexes and constraints are the
same before and after.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import neo4j
import pytest

from brain_graph.core.security import AccessScope
from brain_graph.embedding.lexical import LexicalHashEmbeddings
from brain_graph.stores.mapped.attach import connection_settings, render_toml, suggest_mapping
from brain_graph.stores.mapped.attach_suggest import DEFAULT_PROFILES, ProfileSpec
from brain_graph.stores.mapped.cypher import MappedStatements
from brain_graph.stores.mapped.graph import MappedGraph
from brain_graph.stores.mapped.mapping import parse_mapping, read_mapping
from brain_graph.stores.neo4j_weaviate.neo4j.client import Neo4jClient
from tests.integration.servers import brain_graph_cli, server_settings, team_driver

pytestmark = pytest.mark.integration

RUN = uuid.uuid4().hex[:8]
DOCUMENT, CHUNK, PERSON, NOTE = (f"{name}_{RUN}" for name in ("Document", "Chunk", "Person", "Note"))
OURS = (DOCUMENT, CHUNK, PERSON, NOTE)
CHUNK_INDEX = f"chunk_embedding_{RUN}"
NOTE_INDEX = f"note_embedding_{RUN}"
EMBEDDER = LexicalHashEmbeddings()
PROFILES = [ProfileSpec(p.profile_id, p.node_type, EMBEDDER.name, EMBEDDER.dimension) for p in DEFAULT_PROFILES]

CHUNKS = [  # (document, text), in document order
    ("payments.pdf", "The payment service retries failed card charges with exponential backoff and jitter."),
    ("payments.pdf", "Refunds are issued within five business days after a dispute is closed by the bank."),
    ("auth.pdf", "The login page locks an account after five failed password attempts in ten minutes."),
    ("auth.pdf", "Session cookies expire after thirty minutes of inactivity on every device."),
]
PEOPLE = {"Alice Martin": [0], "Bob Chen": [2, 3]}  # name -> the chunks it was extracted from
NOTES = [  # (id, tenant, title, body, secured, readers, teams)
    (
        1,
        "acme",
        "Backup policy",
        "Nightly database backups are kept for thirty days in cold storage.",
        False,
        None,
        None,
    ),
    (2, "acme", "Salary bands", "Salary bands for engineers are reviewed every spring.", True, ["alice"], None),
    (
        3,
        "acme",
        "Incident drill",
        "The incident drill rehearses a database failover every quarter.",
        True,
        None,
        ["sre"],
    ),
    (4, "acme", "Odd ACL", "Backups of the payroll database are encrypted at rest.", True, "alice", None),
    (1, "globex", "Globex backups", "Globex keeps database backups for seven days only.", False, None, None),
]

KINDS: dict[int, Any] = {2: 7, 3: "drill", 4: "memo"}  # a note's kind, by id (7: not a string)


def embed(text: str) -> list[float]:
    return [float(x) for x in EMBEDDER.embed_query(text)]


def write_lexical_graph(driver: neo4j.Driver) -> None:
    """The lexical graph and entities the way neo4j-graphrag's writer writes them (its queries: CREATE
    with a temporary id, ``db.create.setNodeVectorProperty``, relationships matched by that id, then
    the temporary id removed)."""
    rows: list[dict[str, Any]] = []
    for path in sorted({document for document, _ in CHUNKS}):
        rows.append({"id": f"doc:{path}", "labels": [DOCUMENT], "properties": {"path": path}, "vector": None})
    for i, (_, text) in enumerate(CHUNKS):
        rows.append(
            {"id": f"chunk:{i}", "labels": [CHUNK], "properties": {"text": text, "index": i}, "vector": embed(text)}
        )
    for name in PEOPLE:
        rows.append({"id": f"person:{name}", "labels": [PERSON, "__Entity__"], "properties": {"name": name}})
    for row in rows:
        labels = ":".join(f"`{label}`" for label in row["labels"])
        driver.execute_query(
            f"CREATE (n:__KGBuilder__:{labels} {{__tmp_internal_id: $id}}) SET n += $properties "
            "WITH n WHERE $vector IS NOT NULL CALL db.create.setNodeVectorProperty(n, 'embedding', $vector)",
            id=row["id"],
            properties=row["properties"],
            vector=row.get("vector"),
        )
    rels = [(f"chunk:{i}", "FROM_DOCUMENT", f"doc:{document}") for i, (document, _) in enumerate(CHUNKS)]
    rels += [
        (f"chunk:{i}", "NEXT_CHUNK", f"chunk:{i + 1}")
        for i in range(len(CHUNKS) - 1)
        if CHUNKS[i][0] == CHUNKS[i + 1][0]
    ]
    rels += [(f"person:{name}", "FROM_CHUNK", f"chunk:{i}") for name, chunks in PEOPLE.items() for i in chunks]
    for start, rel_type, end in rels:
        driver.execute_query(
            "MATCH (a:__KGBuilder__ {__tmp_internal_id: $start}), (b:__KGBuilder__ {__tmp_internal_id: $end}) "
            f"WHERE any(l IN labels(a) WHERE l ENDS WITH $run) CREATE (a)-[:`{rel_type}`]->(b)",
            start=start,
            end=end,
            run=RUN,
        )
    driver.execute_query(
        "MATCH (n:__KGBuilder__) WHERE n.__tmp_internal_id IS NOT NULL AND any(l IN labels(n) WHERE l ENDS WITH $run) "
        "SET n.__tmp_internal_id = NULL",
        run=RUN,
    )
    driver.execute_query(
        f"CREATE VECTOR INDEX `{CHUNK_INDEX}` IF NOT EXISTS FOR (n:`{CHUNK}`) ON n.embedding "
        "OPTIONS {indexConfig: {`vector.dimensions`: $dimension, `vector.similarity_function`: 'cosine'}}",
        dimension=EMBEDDER.dimension,
    )


def write_notes(driver: neo4j.Driver) -> None:
    """Notes keyed by integers, two tenants, ACLs as untyped lists (one of them not a list)."""
    driver.execute_query(
        f"UNWIND $rows AS row CREATE (n:`{NOTE}` {{id: row[0], tenant_id: row[1], title: row[2], body: row[3], "
        "secured: row[4]}) SET n.readers = row[5], n.teams = row[6], n.embedding = row[7], n.kind = row[8]",
        rows=[[*note, embed(f"{note[2]}\n{note[3]}"), KINDS.get(note[0])] for note in NOTES],
    )
    driver.execute_query(
        f"MATCH (a:`{NOTE}` {{id: 1, tenant_id: 'acme'}}), (b:`{NOTE}` {{id: 3, tenant_id: 'acme'}}) "
        "CREATE (a)-[:SEE_ALSO]->(b)"
    )
    driver.execute_query(f"CREATE INDEX `note_id_{RUN}` IF NOT EXISTS FOR (n:`{NOTE}`) ON (n.id)")
    driver.execute_query(
        f"CREATE VECTOR INDEX `{NOTE_INDEX}` IF NOT EXISTS FOR (n:`{NOTE}`) ON n.embedding "
        "OPTIONS {indexConfig: {`vector.dimensions`: $dimension, `vector.similarity_function`: 'cosine'}}",
        dimension=EMBEDDER.dimension,
    )


def state(driver: neo4j.Driver) -> dict[str, Any]:
    ours = "any(l IN labels(n) WHERE l ENDS WITH $run)"
    nodes = driver.execute_query(
        f"MATCH (n) WHERE {ours} RETURN elementId(n) AS id, labels(n) AS labels, properties(n) AS p ORDER BY id",
        run=RUN,
    ).records
    rels = driver.execute_query(
        f"MATCH (n)-[r]->() WHERE {ours} RETURN type(r) AS t, count(r) AS c ORDER BY t", run=RUN
    ).records
    schema = driver.execute_query(
        "SHOW INDEXES YIELD name, state WHERE name CONTAINS $run RETURN name, state ORDER BY name", run=RUN
    ).records
    constraints = driver.execute_query("SHOW CONSTRAINTS YIELD name RETURN name ORDER BY name").records
    return {
        "nodes": [(r["id"], sorted(r["labels"]), sorted(r["p"].items(), key=lambda kv: kv[0])) for r in nodes],
        "relationships": [tuple(r) for r in rels],
        "indexes": [tuple(r) for r in schema],
        "constraints": [tuple(r) for r in constraints],
    }


@pytest.fixture(scope="module")
def driver() -> Iterator[neo4j.Driver]:
    driver = team_driver()
    try:
        write_lexical_graph(driver)
        write_notes(driver)
        driver.execute_query("CALL db.awaitIndexes(300)")
        before = state(driver)
        yield driver
        assert state(driver) == before  # nothing any test did wrote to the graph
    finally:
        try:
            for index in (CHUNK_INDEX, NOTE_INDEX, f"note_id_{RUN}"):
                driver.execute_query(f"DROP INDEX `{index}` IF EXISTS")
            for label in OURS:
                driver.execute_query(f"MATCH (n:`{label}`) DETACH DELETE n")
        finally:
            driver.close()


def neo4j_client() -> Neo4jClient:
    settings = server_settings()
    return Neo4jClient(uri=settings.neo4j_uri, user=settings.neo4j_user, password=settings.neo4j_password)


def element_ids(driver: neo4j.Driver, label: str, key: str) -> dict[Any, str]:
    rows = driver.execute_query(f"MATCH (n:`{label}`) RETURN n[$key] AS key, elementId(n) AS id", key=key).records
    return {r["key"]: r["id"] for r in rows}


# -- the neo4j-graphrag lexical graph, through the suggestion as it is ------------------------------------


@pytest.fixture(scope="module")
def suggested(driver: neo4j.Driver, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("graphrag") / "graphrag.toml"
    labels = f"{DOCUMENT},{CHUNK},{PERSON}"
    done = brain_graph_cli("attach", "--suggest", "--labels", labels, "--no-weaviate", "--out", str(path))
    assert done.returncode == 0, done.stderr
    return path


def test_the_suggestion_names_the_nodes_by_their_element_ids(suggested: Path) -> None:
    mapping = read_mapping(suggested)
    assert mapping.id_property == "elementId()"
    assert {node.label: node.node_type for node in mapping.nodes} == {
        CHUNK: "cdm.doc",
        PERSON: "cdm.person",
        DOCUMENT: "kg.entity",
    }
    assert [(v.profile, v.source, getattr(v, "index", None)) for v in mapping.vectors] == [
        ("cdm.doc.body", "neo4j", CHUNK_INDEX)
    ]
    assert "no id property" in suggested.read_text(encoding="utf-8")


def test_the_check_of_the_suggestion_exits_0(suggested: Path) -> None:
    done = brain_graph_cli("attach", "--check", str(suggested))
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"{CHUNK} as cdm.doc: 4 nodes (4 sampled), 4 with an element id" in done.stdout


def test_the_suggestion_as_it_is_finds_chunks_and_follows_the_lexical_graph(
    driver: neo4j.Driver, suggested: Path
) -> None:
    chunks = element_ids(driver, CHUNK, "index")
    people = element_ids(driver, PERSON, "name")
    documents = element_ids(driver, DOCUMENT, "path")
    allowed = "FROM_CHUNK,FROM_DOCUMENT,NEXT_CHUNK"
    done = brain_graph_cli(
        "search",
        "account locked after failed password attempts",
        "--tenant",
        "default",
        "--public",
        "--json",
        "--depth",
        "2",
        BRAIN_GRAPH_MAPPING=str(suggested),
        BRAIN_GRAPH_SAFE_EDGE_TYPES=allowed,
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["hits"][0]["nodeId"] == chunks[2]
    texts = {passage["sourceNodeId"]: passage["text"] for passage in result["passages"]}
    assert "locks an account" in texts[chunks[2]]
    edges = {(edge["edgeType"], edge["fromNodeId"], edge["toNodeId"]) for edge in result["graphEdges"]}
    assert ("FROM_CHUNK", people["Bob Chen"], chunks[2]) in edges
    assert ("FROM_DOCUMENT", chunks[2], documents["auth.pdf"]) in edges
    assert ("NEXT_CHUNK", chunks[2], chunks[3]) in edges
    # an element id of a node of another label, or no element id at all, names nothing
    client = neo4j_client()
    graph = MappedGraph(client, read_mapping(suggested))
    try:
        scope = AccessScope(tenant_id="default", all_secured=False)
        found = graph.get_nodes([chunks[2], "4:nope:1", people["Alice Martin"]], scope=scope)
        assert sorted(record.node_id for record in found) == sorted([chunks[2], people["Alice Martin"]])
        assert graph.get_nodes([chunks[2]], scope=AccessScope(tenant_id="acme", all_secured=False)) == []
    finally:
        client.close()


# -- integer ids and untyped ACLs -------------------------------------------------------------------------


NOTES_MAPPING = {
    "name": "notes",
    "id_property": "id",
    "id_type": "integer",
    "tenant": {"property": "tenant_id"},
    "title_properties": ["title"],
    "secured_property": "secured",
    "acl_user_property": "readers",
    "acl_group_property": "teams",
    "nodes": [
        {
            "label": NOTE,
            "node_type": "cdm.doc",
            "text": {"body": "body"},
            "type_property": "kind",
            "types": {"drill": "cdm.work_item"},
        }
    ],
    "edges": [{"type": "SEE_ALSO", "as": "REFERENCES"}],
    "vectors": [{"profile": "cdm.doc.body", "source": "neo4j", "index": NOTE_INDEX, "property": "embedding"}],
}


@pytest.fixture(scope="module")
def notes(driver: neo4j.Driver) -> Iterator[MappedGraph]:
    client = neo4j_client()
    yield MappedGraph(client, parse_mapping(NOTES_MAPPING))
    client.close()


def seen(graph: MappedGraph, ids: list[str], **scope: Any) -> list[str]:
    found = graph.get_nodes(ids, scope=AccessScope(**scope))
    return sorted(record.node_id for record in found)


def test_integer_ids_are_read_in_decimal_and_only_in_decimal(notes: MappedGraph) -> None:
    ids = ["1", "01", "1.0", " 1", "3", "99", "x"]
    assert seen(notes, ids, tenant_id="acme", all_secured=True) == ["1", "3"]
    assert seen(notes, ids, tenant_id="globex", all_secured=True) == ["1"]
    (record,) = notes.get_nodes(["1"], scope=AccessScope(tenant_id="globex", all_secured=False))
    assert record.title == "Globex backups"


@pytest.mark.parametrize(
    ("principal", "groups", "expected"),
    [
        (None, (), ["1"]),
        ("alice", (), ["1", "2"]),  # a reader; the note whose readers is not a list admits nobody
        ("bob", ("sre",), ["1", "3"]),  # a group
        ("sre", (), ["1"]),  # a user named like a group is not the group
    ],
)
def test_untyped_acl_entries_are_users_and_groups(
    notes: MappedGraph, principal: str | None, groups: tuple[str, ...], expected: list[str]
) -> None:
    identities = ({f"user:{principal}"} if principal else set()) | {f"group:{group}" for group in groups}
    scope = {"tenant_id": "acme", "all_secured": False, "identities": frozenset(identities)}
    assert seen(notes, ["1", "2", "3", "4"], **scope) == expected


def test_acl_entries_are_typed_in_the_records(notes: MappedGraph) -> None:
    records = notes.get_nodes(["2", "3", "4"], scope=AccessScope(tenant_id="acme", all_secured=True))
    assert {r.node_id: r.acl for r in records} == {"2": ("user:alice",), "3": ("group:sre",), "4": ()}


def test_a_type_property_chooses_the_node_type(notes: MappedGraph) -> None:
    records = notes.get_nodes(["1", "2", "3", "4"], scope=AccessScope(tenant_id="acme", all_secured=True))
    # note 3's kind is listed in types, note 4's is not, the others have none (or a number)
    assert {r.node_id: r.node_type for r in records} == {
        "1": "cdm.doc",
        "2": "cdm.doc",
        "3": "cdm.work_item",
        "4": "cdm.doc",
    }
    heads = notes.get_passage_heads(["3"], scope=AccessScope(tenant_id="acme", all_secured=True))
    assert list(heads) == ["3"]


def test_a_search_through_integer_ids_finds_and_expands(driver: neo4j.Driver, tmp_path: Path) -> None:
    path = tmp_path / "notes.toml"
    from brain_graph.stores.mapped.attach_suggest import SuggestedMapping

    path.write_text(render_toml(SuggestedMapping(parse_mapping(NOTES_MAPPING))), encoding="utf-8")
    done = brain_graph_cli(
        "search", "nightly database backups", "--tenant", "acme", "--json", "--depth", "1",
        "--principal", "bob", "--group", "sre",
        BRAIN_GRAPH_MAPPING=str(path),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["hits"][0]["nodeId"] == "1"
    assert {"1", "3"} <= {hit["nodeId"] for hit in result["hits"]}
    assert "2" not in {hit["nodeId"] for hit in result["hits"]}  # alice's, not bob's
    assert all(hit["title"] != "Globex backups" for hit in result["hits"])


def test_the_suggestion_takes_integer_ids_as_integers(driver: neo4j.Driver) -> None:
    found = suggest_mapping(connection_settings(), False, labels=[NOTE], profiles=PROFILES)
    assert (found.mapping.id_property, found.mapping.id_type) == ("id", "integer")
    assert MappedStatements(found.mapping).node_id("n") == "toString(n.`id`)"
