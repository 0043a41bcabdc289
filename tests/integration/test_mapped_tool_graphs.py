"""Graphs as three popular tools write them into Neo4j, searched through ``brain-graph attach --suggest``'s
mapping as it is, on the real servers. Each graph is written here with plain Cypher the way the tool's
own code writes it (read in the projects' sources: langchain-neo4j ``Neo4jVector``, LlamaIndex
``Neo4jPropertyGraphStore`` with ``PropertyGraphIndex``, graphiti-core's Neo4j queries), under labels
and schema names unique to the run, with vectors made by the CLI's default embedder
(:class:`LexicalHashEmbeddings`) where the tool's embedder would put them:

* **LangChain** ``Neo4jVector.from_texts``: ``Chunk{id: md5 of the text, text, embedding, <metadata>}``
  MERGEd by id, the vector set by ``db.create.setNodeVectorProperty``, a uniqueness constraint on
  ``Chunk.id``, the cosine vector index ``vector`` and (hybrid search) the full-text index ``keyword``;
  no relationships. The suggestion as it is finds a chunk by the words of its text.
* **LlamaIndex** ``Neo4jPropertyGraphStore``: every node ``__Node__`` (unique ``id``); chunks
  ``__Node__:Chunk{id, text, embedding, <node metadata>}``; entities ``__Node__:__Entity__:<TYPE>{id =
  name, name, embedding, triplet_source_id}``; ``(chunk)-[:MENTIONS]->(entity)``; extracted relations
  as their own types; uniqueness constraints on ``__Node__.id`` and ``__Entity__.id``; the one vector
  index ``entity`` on ``__Entity__.embedding`` (created without options), so the chunks' vectors have
  no index. Neo4j allows one vector index per label and property, so the run's marker labels are
  ``__Node_<run>__``/``__Entity_<run>__`` (the real ``__Node__``/``__Entity__`` are skipped by name,
  unit-tested). The suggestion maps the entity types as searched through the index on their marker
  label (an index on a label every node of a mapped label carries), so a search finds an entity by
  its name, as LlamaIndex's own ``VectorContextRetriever`` does (an entity has no text: its passage
  is its name), and follows ``MENTIONS`` to the chunk that mentions it, whose passage is its text.
  A note says the chunks' vectors have no index (they are still read to score chunks reached by
  expansion).
* **Graphiti** (``graphiti_core``): ``Entity{uuid, name, summary, group_id, created_at,
  name_embedding}``, ``Episodic{uuid, name, content, source, source_description, group_id,
  entity_edges, created_at, valid_at}``, ``(episodic)-[:MENTIONS]->(entity)``,
  ``(entity)-[:RELATES_TO {fact, fact_embedding, valid_at, invalid_at, ...}]->(entity)``, Graphiti's
  range and full-text indexes and NO vector index: Graphiti ranks by ``vector.similarity.cosine`` in
  Cypher over the properties. Two graphs: one written with Graphiti's default ``group_id`` (the empty
  string on Neo4j, not a usable tenant id: the suggestion makes the graph one tenant, ``default``), and
  one with two named groups (the suggestion's tenant is ``group_id``, searches never cross groups).
  ``group_id`` mapped by hand as the tenant of the default-group graph fails ``attach --check``.

  brain-graph never writes, so it cannot create the missing index, and a vector search needs one. So
  on the graph as Graphiti leaves it the suggestion maps the labels, edges and tenant, has no
  ``[[vectors]]``, and says in a note which statement creates the index (the check exits 0; a search
  has no hits). That is the accepted outcome: the index is the team's one write. The test then runs
  exactly the statement of the note (the team's write), and a new suggestion, unchanged, finds an
  entity by its name, cites its summary and follows ``MENTIONS``/``RELATES_TO``. A fact on a
  ``RELATES_TO`` relationship is not read (brain-graph's edges carry no text).

For each: ``attach --suggest --labels <the run's labels> --no-weaviate --out F`` (nothing edited),
``attach --check F`` exits 0, and ``search`` through F finds the expected node first, with its text in
its passage, and follows the suggested edges when ``BRAIN_GRAPH_SAFE_EDGE_TYPES`` is set as the
suggestion's comment says. Nothing is written by brain-graph: the run's nodes, properties,
relationships, indexes and constraints are the same before and after (the team's own index aside).
"""

from __future__ import annotations

import hashlib
import json
import re
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import neo4j
import pytest

from brain_graph.embedding.lexical import LexicalHashEmbeddings
from brain_graph.stores.mapped.mapping import Mapping, Neo4jVectors, read_mapping
from tests.integration.servers import brain_graph_cli, team_driver

pytestmark = pytest.mark.integration

RUN = uuid.uuid4().hex[:8]
EMBEDDER = LexicalHashEmbeddings()  # what the CLI embeds queries with by default
GUESSED = "# guessed:"
SAFE_EDGE_NOTE = re.compile(r"^# .*set BRAIN_GRAPH_SAFE_EDGE_TYPES=(\S+)$", re.MULTILINE)
CREATED_AT = datetime(2025, 3, 1, 9, 30, tzinfo=UTC)  # a fixed time: the test reads no clock


def embed(text: str) -> list[float]:
    return [float(x) for x in EMBEDDER.embed_query(text)]


def state(driver: neo4j.Driver) -> dict[str, Any]:
    """The run's nodes (labels, properties), relationships (type, ends, properties), indexes and
    constraints."""
    ours = "any(l IN labels(n) WHERE l CONTAINS $run)"
    nodes = driver.execute_query(
        f"MATCH (n) WHERE {ours} RETURN elementId(n) AS id, labels(n) AS labels, properties(n) AS p ORDER BY id",
        run=RUN,
    ).records
    rels = driver.execute_query(
        f"MATCH (n)-[r]->(m) WHERE {ours} RETURN type(r) AS t, elementId(n) AS a, elementId(m) AS b, "
        "properties(r) AS p ORDER BY t, a, b",
        run=RUN,
    ).records
    indexes = driver.execute_query(
        "SHOW INDEXES YIELD name, type, labelsOrTypes, properties, state WHERE name CONTAINS $run "
        "RETURN name, type, labelsOrTypes, properties, state ORDER BY name",
        run=RUN,
    ).records
    constraints = driver.execute_query(
        "SHOW CONSTRAINTS YIELD name, labelsOrTypes, properties WHERE name CONTAINS $run "
        "RETURN name, labelsOrTypes, properties ORDER BY name",
        run=RUN,
    ).records

    def props(p: dict[str, Any]) -> list[tuple[str, Any]]:
        return sorted(((k, str(v)) for k, v in p.items()), key=lambda kv: kv[0])

    return {
        "nodes": [(r["id"], sorted(r["labels"]), props(r["p"])) for r in nodes],
        "relationships": [(r["t"], r["a"], r["b"], props(r["p"])) for r in rels],
        "indexes": [tuple(str(x) for x in r.values()) for r in indexes],
        "constraints": [tuple(str(x) for x in r.values()) for r in constraints],
    }


@dataclass
class Database:
    """The driver and the state the run's graphs are expected to be in (only the test writes)."""

    driver: neo4j.Driver
    expected: dict[str, Any] = field(default_factory=dict)

    def team_writes(self, statement: str, **params: Any) -> None:
        """A write of the team's own (not brain-graph's): the expected state follows it."""
        assert state(self.driver) == self.expected
        self.driver.execute_query(statement, params)
        self.driver.execute_query("CALL db.awaitIndexes(300)")
        self.expected = state(self.driver)

    def unchanged(self) -> None:
        assert state(self.driver) == self.expected


def suggest(labels: list[str], path: Path) -> str:
    done = brain_graph_cli("attach", "--suggest", "--labels", ",".join(labels), "--no-weaviate", "--out", str(path))
    assert done.returncode == 0, done.stderr
    return path.read_text(encoding="utf-8")


def check(path: Path, **env: str) -> list[str]:
    done = brain_graph_cli("attach", "--check", str(path), **env)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout.splitlines()


def search(path: Path, query: str, *, tenant: str | None = None, depth: int = 1, **env: str) -> dict[str, Any]:
    mapping = read_mapping(path)
    tenant = tenant or mapping.tenant.fixed
    assert tenant is not None
    done = brain_graph_cli(
        "search", query, "--tenant", tenant, "--public", "--json", "--depth", str(depth),
        BRAIN_GRAPH_MAPPING=str(path), **env,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def allowed_edges(text: str) -> str:
    """The ``BRAIN_GRAPH_SAFE_EDGE_TYPES`` value the suggestion's comment gives."""
    (allowed,) = SAFE_EDGE_NOTE.findall(text)
    return str(allowed)


def passages(result: dict[str, Any]) -> dict[str, str]:
    return {passage["sourceNodeId"]: passage["text"] for passage in result["passages"]}


def edges(result: dict[str, Any]) -> set[tuple[str, str, str]]:
    return {(edge["edgeType"], edge["fromNodeId"], edge["toNodeId"]) for edge in result["graphEdges"]}


def neo4j_vectors(mapping: Mapping) -> list[dict[str, Any]]:
    return [v.model_dump(exclude_none=True) for v in mapping.vectors if isinstance(v, Neo4jVectors)]


# -- the graphs -------------------------------------------------------------------------------------------

# LangChain Neo4jVector (node_label "Chunk", index_name "vector", keyword_index_name "keyword")
LC_CHUNK = f"Chunk_{RUN}_lc"
LC_VECTOR, LC_KEYWORD, LC_CONSTRAINT = f"vector_{RUN}", f"keyword_{RUN}", f"chunk_id_{RUN}"
LC_TEXTS = [
    ("The payment service retries failed card charges with exponential backoff and jitter.", "payments.md", 1),
    ("Refunds are issued within five business days after a dispute is closed by the bank.", "payments.md", 2),
    ("The login page locks an account after five failed password attempts in ten minutes.", "auth.md", 1),
    ("Session cookies expire after thirty minutes of inactivity on every device.", "auth.md", 2),
]


def lc_id(text: str) -> str:
    return hashlib.md5(text.encode("utf-8")).hexdigest()  # Neo4jVector.add_embeddings' default ids


def write_langchain(driver: neo4j.Driver) -> None:
    """``Neo4jVector.from_texts(texts, embedding, metadatas=..., search_type="hybrid")``: its index,
    constraint and import query (``MERGE (c:Chunk {id: row.id}) ... setNodeVectorProperty ... SET
    c.text = row.text SET c += row.metadata``, without ``IN TRANSACTIONS``: one small batch)."""
    driver.execute_query(
        f"CREATE VECTOR INDEX `{LC_VECTOR}` IF NOT EXISTS FOR (m:`{LC_CHUNK}`) ON m.`embedding` "
        "OPTIONS {indexConfig: {`vector.dimensions`: toInteger($dimension), `vector.similarity_function`: 'cosine'}}",
        dimension=EMBEDDER.dimension,
    )
    driver.execute_query(f"CREATE FULLTEXT INDEX `{LC_KEYWORD}` IF NOT EXISTS FOR (n:`{LC_CHUNK}`) ON EACH [n.`text`]")
    driver.execute_query(
        f"CREATE CONSTRAINT `{LC_CONSTRAINT}` IF NOT EXISTS FOR (n:`{LC_CHUNK}`) REQUIRE n.id IS UNIQUE"
    )
    data = [
        {"text": text, "metadata": {"source": source, "page": page}, "embedding": embed(text), "id": lc_id(text)}
        for text, source, page in LC_TEXTS
    ]
    driver.execute_query(
        f"UNWIND $data AS row MERGE (c:`{LC_CHUNK}` {{id: row.id}}) WITH c, row "
        "CALL db.create.setNodeVectorProperty(c, 'embedding', row.embedding) "
        "SET c.`text` = row.text SET c += row.metadata",
        data=data,
    )


# LlamaIndex Neo4jPropertyGraphStore (BASE_NODE_LABEL "__Node__", BASE_ENTITY_LABEL "__Entity__",
# VECTOR_INDEX_NAME "entity"); entity types as SchemaLLMPathExtractor names them
LI_NODE, LI_ENTITY = f"__Node_{RUN}__", f"__Entity_{RUN}__"
LI_CHUNK, LI_PERSON, LI_ORG = f"Chunk_{RUN}_li", f"PERSON_{RUN}", f"ORGANIZATION_{RUN}"
LI_INDEX = f"entity_{RUN}"
LI_CONSTRAINTS = (f"li_node_id_{RUN}", f"li_entity_id_{RUN}")
LI_CHUNKS = [  # (id, file, text)
    (f"{RUN}-c0", "team.txt", "Alice Martin joined Acme Payments in 2019 to lead the card processing team."),
    (f"{RUN}-c1", "team.txt", "Bob Chen maintains the login service and its password lockout rules."),
    (f"{RUN}-c2", "history.txt", "Acme Payments moved its settlement jobs to a nightly batch in 2021."),
]
LI_ENTITIES = [  # (name, type, the chunk it was extracted from)
    ("Alice Martin", LI_PERSON, f"{RUN}-c0"),
    ("Bob Chen", LI_PERSON, f"{RUN}-c1"),
    ("Acme Payments", LI_ORG, f"{RUN}-c0"),
]
LI_RELATIONS = [("Alice Martin", "WORKS_AT", "Acme Payments", f"{RUN}-c0")]


def li_properties(chunk_id: str, file_name: str, text: str) -> dict[str, Any]:
    """A chunk's properties as ``node_to_metadata_dict`` leaves them (the node's metadata, its JSON
    and type, the ids of its document)."""
    document = f"{RUN}-doc-{file_name}"
    content = {"id_": chunk_id, "metadata": {"file_name": file_name}, "text": "", "class_name": "TextNode"}
    return {
        "file_name": file_name,
        "file_path": f"/data/{file_name}",
        "_node_content": json.dumps(content),
        "_node_type": "TextNode",
        "document_id": document,
        "doc_id": document,
        "ref_doc_id": document,
    }


def write_llamaindex(driver: neo4j.Driver) -> None:
    """``Neo4jPropertyGraphStore()`` (its constraints and vector index), then ``upsert_llama_nodes``
    (chunks), ``upsert_nodes`` (entities, MENTIONS from their source chunk) and ``upsert_relations``
    as its queries write them; ``apoc.create.addLabels``/``apoc.merge.relationship`` as plain Cypher."""
    node, entity = LI_NODE, LI_ENTITY
    driver.execute_query(
        f"CREATE CONSTRAINT `{LI_CONSTRAINTS[0]}` IF NOT EXISTS FOR (n:`{node}`) REQUIRE n.id IS UNIQUE"
    )
    driver.execute_query(
        f"CREATE CONSTRAINT `{LI_CONSTRAINTS[1]}` IF NOT EXISTS FOR (n:`{entity}`) REQUIRE n.id IS UNIQUE"
    )
    driver.execute_query(f"CREATE VECTOR INDEX `{LI_INDEX}` IF NOT EXISTS FOR (m:`{entity}`) ON m.embedding")
    chunks = [
        {
            "id": chunk_id,
            "text": text,
            "properties": li_properties(chunk_id, file_name, text),
            # get_content(metadata_mode=EMBED): the metadata, then the text
            "embedding": embed(f"file_name: {file_name}\nfile_path: /data/{file_name}\n\n{text}"),
        }
        for chunk_id, file_name, text in LI_CHUNKS
    ]
    driver.execute_query(
        f"UNWIND $data AS row MERGE (c:`{node}` {{id: row.id}}) SET c.text = row.text, c:`{LI_CHUNK}` "
        "WITH c, row SET c += row.properties WITH c, row.embedding AS embedding WHERE embedding IS NOT NULL "
        "CALL db.create.setNodeVectorProperty(c, 'embedding', embedding) RETURN count(*)",
        data=chunks,
    )
    entities = []
    for name, label, source in LI_ENTITIES:
        properties = {"triplet_source_id": source}
        # str(EntityNode) with properties: "<name> (<properties>)", what PropertyGraphIndex embeds
        entities.append(
            {
                "id": name,
                "name": name,
                "label": label,
                "properties": properties,
                "embedding": embed(f"{name} ({properties})"),
            }
        )
    for row in entities:
        driver.execute_query(
            f"MERGE (e:`{node}` {{id: $row.id}}) SET e += $row.properties SET e.name = $row.name, e:`{entity}` "
            f"SET e:`{row['label']}` "
            "WITH e CALL db.create.setNodeVectorProperty(e, 'embedding', $row.embedding) "
            f"WITH e MERGE (c:`{node}` {{id: $row.properties.triplet_source_id}}) MERGE (e)<-[:MENTIONS]-(c)",
            row=row,
        )
    for source, rel_type, target, chunk in LI_RELATIONS:
        driver.execute_query(
            f"MERGE (s:`{node}` {{id: $source}}) ON CREATE SET s:`{LI_CHUNK}` "
            f"MERGE (t:`{node}` {{id: $target}}) ON CREATE SET t:`{LI_CHUNK}` "
            f"MERGE (s)-[r:`{rel_type}`]->(t) SET r += $properties",
            source=source,
            target=target,
            properties={"triplet_source_id": chunk},
        )


# Graphiti (graphiti_core: Entity, Episodic, MENTIONS, RELATES_TO; build_indices_and_constraints)
@dataclass(frozen=True)
class GraphitiGraph:
    """One Graphiti graph: its labels and the group of its episodes."""

    variant: str  # "default": Graphiti's default group id (""), "groups": two named groups

    @property
    def entity(self) -> str:
        return f"Entity_{RUN}_{self.variant}"

    @property
    def episodic(self) -> str:
        return f"Episodic_{RUN}_{self.variant}"

    @property
    def labels(self) -> list[str]:
        return [self.entity, self.episodic]

    def group(self, index: int) -> str:
        return "" if self.variant == "default" else ("alpha", "beta")[index % 2]

    def uuid(self, kind: str, name: str) -> str:
        return str(uuid.uuid5(uuid.NAMESPACE_URL, f"{RUN}/{self.variant}/{kind}/{name}"))

    def index(self, name: str) -> str:
        return f"{name}_{RUN}_{self.variant}"


GRAPHITI = (GraphitiGraph("default"), GraphitiGraph("groups"))
# (name, summary); episodes: (name, content, the entities it mentions); facts: (source, name, target, fact)
G_ENTITIES = [
    ("Alice Martin", "Alice Martin leads the card processing team and owns the retry policy for failed charges."),
    ("Card Retry Policy", "The card retry policy retries failed card charges with exponential backoff."),
    ("Bob Chen", "Bob Chen maintains the login service and its password lockout rules."),
]
G_EPISODES = [
    (
        "episode 0",
        "Alice Martin: we retry failed card charges with exponential backoff now.",
        ["Alice Martin", "Card Retry Policy"],
    ),
    ("episode 1", "Bob Chen: accounts lock after five failed password attempts.", ["Bob Chen"]),
]
G_FACTS = [("Alice Martin", "OWNS", "Card Retry Policy", "Alice Martin owns the card retry policy")]


def write_graphiti(driver: neo4j.Driver, graph: GraphitiGraph) -> None:
    """``build_indices_and_constraints`` (the node range and full-text indexes; no vector index), then
    ``EntityNode.save``, ``EpisodicNode.save``, ``EpisodicEdge.save`` and ``EntityEdge.save`` as their
    Neo4j queries write them. Entities and episodes in group ``graph.group(i)``."""
    entity, episodic = graph.entity, graph.episodic
    for statement in (
        f"CREATE INDEX `{graph.index('entity_uuid')}` IF NOT EXISTS FOR (n:`{entity}`) ON (n.uuid)",
        f"CREATE INDEX `{graph.index('episode_uuid')}` IF NOT EXISTS FOR (n:`{episodic}`) ON (n.uuid)",
        f"CREATE INDEX `{graph.index('entity_group_id')}` IF NOT EXISTS FOR (n:`{entity}`) ON (n.group_id)",
        f"CREATE INDEX `{graph.index('episode_group_id')}` IF NOT EXISTS FOR (n:`{episodic}`) ON (n.group_id)",
        f"CREATE INDEX `{graph.index('name_entity_index')}` IF NOT EXISTS FOR (n:`{entity}`) ON (n.name)",
        f"CREATE INDEX `{graph.index('created_at_entity_index')}` IF NOT EXISTS FOR (n:`{entity}`) ON (n.created_at)",
        f"CREATE FULLTEXT INDEX `{graph.index('episode_content')}` IF NOT EXISTS FOR (e:`{episodic}`) "
        "ON EACH [e.content, e.source, e.source_description, e.group_id]",
        f"CREATE FULLTEXT INDEX `{graph.index('node_name_and_summary')}` IF NOT EXISTS FOR (n:`{entity}`) "
        "ON EACH [n.name, n.summary, n.group_id]",
    ):
        driver.execute_query(statement)
    groups: dict[str, str] = {}
    for i, (_name, _content, mentioned) in enumerate(G_EPISODES):
        for entity_name in mentioned:
            groups.setdefault(entity_name, graph.group(i))
    for name, summary in G_ENTITIES:
        entity_data = {
            "uuid": graph.uuid("entity", name),
            "name": name,
            "name_embedding": embed(name),  # Graphiti embeds the name
            "group_id": groups[name],
            "summary": summary,
            "created_at": CREATED_AT,
        }
        driver.execute_query(
            f"MERGE (n:`{entity}` {{uuid: $entity_data.uuid}}) SET n:`{entity}` SET n = $entity_data "
            'WITH n CALL db.create.setNodeVectorProperty(n, "name_embedding", $entity_data.name_embedding) '
            "RETURN n.uuid AS uuid",
            entity_data=entity_data,
        )
    for i, (name, content, mentioned) in enumerate(G_EPISODES):
        episode = graph.uuid("episode", name)
        driver.execute_query(
            f"MERGE (n:`{episodic}` {{uuid: $uuid}}) SET n = {{uuid: $uuid, name: $name, group_id: $group_id, "
            "source_description: $source_description, source: $source, content: $content, "
            "entity_edges: $entity_edges, created_at: $created_at, valid_at: $valid_at} RETURN n.uuid AS uuid",
            uuid=episode,
            name=name,
            group_id=graph.group(i),
            source_description="team chat",
            source="message",
            content=content,
            entity_edges=[graph.uuid("fact", fact[3]) for fact in G_FACTS if fact[0] in mentioned],
            created_at=CREATED_AT,
            valid_at=CREATED_AT,
        )
        for entity_name in mentioned:
            driver.execute_query(
                f"MATCH (episode:`{episodic}` {{uuid: $episode_uuid}}) MATCH (node:`{entity}` {{uuid: $entity_uuid}}) "
                "MERGE (episode)-[e:MENTIONS {uuid: $uuid}]->(node) "
                "SET e.group_id = $group_id, e.created_at = $created_at RETURN e.uuid AS uuid",
                episode_uuid=episode,
                entity_uuid=graph.uuid("entity", entity_name),
                uuid=graph.uuid("mention", f"{name}/{entity_name}"),
                group_id=graph.group(i),
                created_at=CREATED_AT,
            )
    for source, rel_name, target, fact in G_FACTS:
        edge_data = {
            "uuid": graph.uuid("fact", fact),
            "source_uuid": graph.uuid("entity", source),
            "target_uuid": graph.uuid("entity", target),
            "name": rel_name,
            "group_id": groups[source],
            "fact": fact,
            "fact_embedding": embed(fact),
            "episodes": [graph.uuid("episode", "episode 0")],
            "created_at": CREATED_AT,
            "expired_at": None,
            "valid_at": CREATED_AT,
            "invalid_at": None,
            "reference_time": CREATED_AT,
        }
        driver.execute_query(
            f"MATCH (source:`{entity}` {{uuid: $edge_data.source_uuid}}) "
            f"MATCH (target:`{entity}` {{uuid: $edge_data.target_uuid}}) "
            "MERGE (source)-[e:RELATES_TO {uuid: $edge_data.uuid}]->(target) SET e = $edge_data "
            'WITH e CALL db.create.setRelationshipVectorProperty(e, "fact_embedding", $edge_data.fact_embedding) '
            "RETURN e.uuid AS uuid",
            edge_data=edge_data,
        )


def drop_everything(driver: neo4j.Driver) -> None:
    """The run's indexes and constraints, then its nodes (each carries a label of the run)."""
    names = driver.execute_query(
        "SHOW CONSTRAINTS YIELD name WHERE name CONTAINS $run RETURN collect(name) AS names", run=RUN
    ).records[0]["names"]
    for name in names:
        driver.execute_query(f"DROP CONSTRAINT `{name}` IF EXISTS")
    names = driver.execute_query(
        "SHOW INDEXES YIELD name WHERE name CONTAINS $run RETURN collect(name) AS names", run=RUN
    ).records[0]["names"]
    for name in names:
        driver.execute_query(f"DROP INDEX `{name}` IF EXISTS")
    driver.execute_query("MATCH (n) WHERE any(l IN labels(n) WHERE l CONTAINS $run) DETACH DELETE n", run=RUN)


@pytest.fixture(scope="module")
def database() -> Iterator[Database]:
    driver = team_driver()
    try:
        write_langchain(driver)
        write_llamaindex(driver)
        for graph in GRAPHITI:
            write_graphiti(driver, graph)
        driver.execute_query("CALL db.awaitIndexes(300)")
        db = Database(driver, state(driver))
        yield db
        db.unchanged()  # nothing brain-graph did wrote to the graph
    finally:
        try:
            drop_everything(driver)
        finally:
            driver.close()


# -- LangChain Neo4jVector ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def langchain(database: Database, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("langchain") / "langchain.toml"
    suggest([LC_CHUNK], path)
    database.unchanged()
    return path


def test_langchain_the_suggestion_maps_the_chunks_and_their_index(langchain: Path) -> None:
    mapping = read_mapping(langchain)
    assert (mapping.id_property, mapping.tenant.fixed) == ("id", "default")  # unique by constraint: not a guess
    assert [(n.label, n.node_type, n.text) for n in mapping.nodes] == [(LC_CHUNK, "cdm.doc", {"body": "text"})]
    assert neo4j_vectors(mapping) == [
        {
            "profile": "cdm.doc.body",
            "source": "neo4j",
            "index": LC_VECTOR,
            "property": "embedding",
            "embedder": EMBEDDER.name,
        }
    ]
    assert mapping.edges == []
    lines = langchain.read_text(encoding="utf-8").splitlines()
    guessed = [line for line in lines if GUESSED in line and not line.startswith("#")]
    assert [line.split(" = ")[0] for line in guessed] == ["tenant", "embedder"]


def test_langchain_the_check_exits_0(database: Database, langchain: Path) -> None:
    out = check(langchain)
    assert (
        f"mapping langchain: nodes.{LC_CHUNK}: {LC_CHUNK} as cdm.doc: 4 nodes (4 sampled), 4 with a string 'id', "
        "tenants default"
    ) in out
    database.unchanged()


def test_langchain_a_search_finds_the_chunk_by_its_words(database: Database, langchain: Path) -> None:
    for text, _, _ in LC_TEXTS:
        expected = lc_id(text)
        result = search(langchain, " ".join(text.split()[:8]))
        assert result["hits"][0]["nodeId"] == expected
        assert text in passages(result)[expected]
        assert result["graphEdges"] == []  # Neo4jVector writes no relationships
    database.unchanged()


# -- LlamaIndex property graph ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def llamaindex(database: Database, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("llamaindex") / "llamaindex.toml"
    suggest([LI_CHUNK, LI_PERSON, LI_ORG], path)
    database.unchanged()
    return path


def test_llamaindex_the_entities_are_searched_through_the_index_on_their_marker_label(llamaindex: Path) -> None:
    text = llamaindex.read_text(encoding="utf-8")
    mapping = read_mapping(llamaindex)
    assert (mapping.id_property, mapping.tenant.fixed, mapping.title_properties) == ("id", "default", ["name"])
    assert {n.label: (n.node_type, n.text) for n in mapping.nodes} == {
        LI_CHUNK: ("cdm.doc", {"body": "text"}),
        LI_PERSON: ("cdm.doc", {}),  # searched: their vectors are in the index on the marker label
        LI_ORG: ("cdm.doc", {}),
    }
    # one entry for the one index that holds both entity types' vectors
    assert neo4j_vectors(mapping) == [
        {
            "profile": "cdm.doc.body",
            "source": "neo4j",
            "index": LI_INDEX,
            "property": "embedding",
            "embedder": EMBEDDER.name,
        }
    ]
    assert sorted((e.type, e.as_type) for e in mapping.edges) == [("MENTIONS", "MENTIONS"), ("WORKS_AT", "WORKS_AT")]
    assert "already reads" not in text
    # the chunks' own vectors have no index: said, with the statement that would make one
    assert f"# {LI_CHUNK}.embedding holds vectors but has no vector index" in text


def test_llamaindex_the_check_exits_0(database: Database, llamaindex: Path) -> None:
    out = check(llamaindex, BRAIN_GRAPH_SAFE_EDGE_TYPES=allowed_edges(llamaindex.read_text(encoding="utf-8")))
    assert (
        f"mapping llamaindex: vectors.cdm.doc.body: neo4j index {LI_INDEX!r} (dimension ?, cosine); "
        f"{LI_ORG}: 1 of 1 sampled nodes have a vector, 0 not searchable; "
        f"{LI_PERSON}: 2 of 2 sampled nodes have a vector, 0 not searchable"
    ) in out
    assert "mapping llamaindex: edges.MENTIONS: as MENTIONS: 3 start at, 3 end at mapped labels" in out
    database.unchanged()


def test_llamaindex_a_search_finds_the_entity_and_follows_mentions_to_its_chunk(
    database: Database, llamaindex: Path
) -> None:
    allowed = allowed_edges(llamaindex.read_text(encoding="utf-8"))
    for name, _, chunk in LI_ENTITIES:
        result = search(llamaindex, name, BRAIN_GRAPH_SAFE_EDGE_TYPES=allowed)
        assert result["hits"][0]["nodeId"] == name
        assert passages(result)[name] == name  # an entity's passage is its name: it has no text
        assert ("MENTIONS", chunk, name) in edges(result)
        text = next(text for chunk_id, _, text in LI_CHUNKS if chunk_id == chunk)
        assert passages(result)[chunk] == text  # the chunk that mentions it, reached by MENTIONS
    result = search(llamaindex, "Alice Martin", BRAIN_GRAPH_SAFE_EDGE_TYPES=allowed)
    assert ("WORKS_AT", "Alice Martin", "Acme Payments") in edges(result)
    # without the allowlist of the suggestion's comment, nothing is followed
    assert edges(search(llamaindex, "Alice Martin")) == set()
    database.unchanged()


# -- Graphiti -----------------------------------------------------------------------------------------------

INDEX_NOTE = re.compile(r"^# (\S+) holds vectors but has no vector index.*: (CREATE VECTOR INDEX .*)$", re.MULTILINE)


@dataclass(frozen=True)
class GraphitiRun:
    """A Graphiti graph's suggestion as Graphiti leaves it, the statement its note gives, and the new
    suggestion once the team ran that statement."""

    graph: GraphitiGraph
    as_written: Path
    statement: str
    indexed: Path

    def tenant(self, group: int = 0) -> str:
        return "default" if self.graph.variant == "default" else self.graph.group(group)


@pytest.fixture(scope="module", params=GRAPHITI, ids=lambda graph: graph.variant)
def graphiti(
    request: pytest.FixtureRequest, database: Database, tmp_path_factory: pytest.TempPathFactory
) -> GraphitiRun:
    graph: GraphitiGraph = request.param
    as_written = tmp_path_factory.mktemp(f"graphiti-{graph.variant}") / "graphiti.toml"
    notes = INDEX_NOTE.findall(suggest(graph.labels, as_written))
    database.unchanged()
    assert [where for where, _ in notes] == [f"{graph.entity}.name_embedding"]
    statement = notes[0][1]
    database.team_writes(statement)  # the team's one write: the index Graphiti does not create
    indexed = tmp_path_factory.mktemp(f"graphiti-{graph.variant}-indexed") / "graphiti.toml"
    suggest(graph.labels, indexed)
    database.unchanged()
    return GraphitiRun(graph, as_written, statement, indexed)


def test_graphiti_as_written_the_suggestion_maps_it_without_vectors(graphiti: GraphitiRun) -> None:
    graph, text = graphiti.graph, graphiti.as_written.read_text(encoding="utf-8")
    mapping = read_mapping(graphiti.as_written)
    assert mapping.id_property == "uuid"
    if graph.variant == "default":  # every group_id is "": no tenant id, one tenant
        assert mapping.tenant.fixed == "default"
        assert re.search(
            r'^tenant = \{ fixed = "default" \}  # guessed: every sampled \'group_id\' is blank', text, re.M
        )
    else:
        assert mapping.tenant.property == "group_id"
        assert GUESSED not in next(line for line in text.splitlines() if line.startswith("tenant = "))
    assert [(n.label, n.node_type, n.text) for n in mapping.nodes] == [
        (graph.entity, "cdm.doc", {"body": "summary"}),
        (graph.episodic, "cdm.doc", {"body": "content"}),
    ]
    assert sorted((e.type, e.as_type) for e in mapping.edges) == [
        ("MENTIONS", "MENTIONS"),
        ("RELATES_TO", "RELATES_TO"),
    ]
    assert mapping.vectors == []
    # the note's statement: a cosine index of the vectors' dimension on the entities' name_embedding
    assert graphiti.statement == (
        f"CREATE VECTOR INDEX `{graph.entity.lower()}_name_embedding` IF NOT EXISTS FOR (n:`{graph.entity}`) "
        f"ON n.`name_embedding` OPTIONS {{indexConfig: {{`vector.dimensions`: {EMBEDDER.dimension}, "
        "`vector.similarity_function`: 'cosine'}}"
    )


def test_graphiti_as_written_the_check_exits_0_and_a_search_finds_nothing(
    database: Database, graphiti: GraphitiRun
) -> None:
    out = check(graphiti.as_written)
    assert any(line.startswith(f"mapping graphiti: nodes.{graphiti.graph.entity}: ") for line in out)
    result = search(graphiti.as_written, "Alice Martin", tenant=graphiti.tenant())
    assert result["hits"] == []  # no vector source: nothing to start from
    database.unchanged()


def test_graphiti_the_check_reads_group_id_as_the_tenant_only_where_it_is_a_tenant_id(
    database: Database, graphiti: GraphitiRun, tmp_path: Path
) -> None:
    """Named groups are the tenants the check counts; Graphiti's default group id ``""`` mapped as the
    tenant by hand is an error of the check (no search could name that tenant)."""
    entity = graphiti.graph.entity
    if graphiti.graph.variant == "groups":
        out = check(graphiti.as_written)
        assert (
            f"mapping graphiti: nodes.{entity}: {entity} as cdm.doc: 3 nodes (3 sampled), 3 with a string 'uuid', "
            "tenants alpha, beta"
        ) in out
        database.unchanged()
        return
    text = graphiti.as_written.read_text(encoding="utf-8")
    edited = re.sub(r"^tenant = .*$", 'tenant = { property = "group_id" }', text, count=1, flags=re.M)
    path = tmp_path / "graphiti.toml"
    path.write_text(edited, encoding="utf-8")
    done = brain_graph_cli("attach", "--check", str(path))
    assert done.returncode == 2, done.stdout + done.stderr
    assert (
        f"error: mapping graphiti: tenant.property: none of the 3 sampled nodes of {entity} has a usable 'group_id'"
    ) in done.stdout + done.stderr
    database.unchanged()


def test_graphiti_with_the_teams_index_a_new_suggestion_maps_its_vectors(graphiti: GraphitiRun) -> None:
    before, after = read_mapping(graphiti.as_written), read_mapping(graphiti.indexed)
    index = graphiti.statement.split("`")[1]
    assert neo4j_vectors(after) == [
        {
            "profile": "cdm.doc.body",
            "source": "neo4j",
            "index": index,
            "property": "name_embedding",
            "embedder": EMBEDDER.name,
        }
    ]
    assert after.model_dump(exclude={"vectors"}) == before.model_dump(exclude={"vectors"})
    assert INDEX_NOTE.findall(graphiti.indexed.read_text(encoding="utf-8")) == []


def test_graphiti_the_check_of_the_new_suggestion_exits_0(database: Database, graphiti: GraphitiRun) -> None:
    text = graphiti.indexed.read_text(encoding="utf-8")
    out = check(graphiti.indexed, BRAIN_GRAPH_SAFE_EDGE_TYPES=allowed_edges(text))
    entity = graphiti.graph.entity
    assert any(
        line.startswith("mapping graphiti: vectors.cdm.doc.body: neo4j index")
        and f"{entity}: 3 of 3 sampled nodes have a vector, 0 not searchable" in line
        for line in out
    ), out
    database.unchanged()


def test_graphiti_a_search_finds_the_entity_by_its_name_and_follows_its_episode_and_facts(
    database: Database, graphiti: GraphitiRun
) -> None:
    graph = graphiti.graph
    allowed = allowed_edges(graphiti.indexed.read_text(encoding="utf-8"))
    alice, policy = graph.uuid("entity", "Alice Martin"), graph.uuid("entity", "Card Retry Policy")
    episode = graph.uuid("episode", "episode 0")
    result = search(graphiti.indexed, "Alice Martin", tenant=graphiti.tenant(0), BRAIN_GRAPH_SAFE_EDGE_TYPES=allowed)
    assert result["hits"][0]["nodeId"] == alice
    assert dict(G_ENTITIES)["Alice Martin"] in passages(result)[alice]  # the summary is the entity's text
    assert ("MENTIONS", episode, alice) in edges(result)
    assert ("RELATES_TO", alice, policy) in edges(result)
    assert G_EPISODES[0][1] in passages(result)[episode]
    bob = graph.uuid("entity", "Bob Chen")
    found = {node["nodeId"] for node in result["graphNodes"]} | {hit["nodeId"] for hit in result["hits"]}
    if graph.variant == "groups":  # Bob is in the other group: never found from this one
        assert bob not in found
        other = search(graphiti.indexed, "Alice Martin", tenant=graphiti.tenant(1), BRAIN_GRAPH_SAFE_EDGE_TYPES=allowed)
        assert alice not in {hit["nodeId"] for hit in other["hits"]}
        assert other["hits"][0]["nodeId"] == bob
    else:
        assert bob in found  # one tenant: every node is searched
    database.unchanged()
