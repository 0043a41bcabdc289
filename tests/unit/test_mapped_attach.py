"""``attach`` without servers: the draft mapping chosen from a live schema (built here by hand), its
TOML (valid, read back as the same mapping, guesses marked on their lines), the helpers it rests on,
the check report's lines, and the command's argument errors."""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from brain_graph.cli.main import app
from brain_graph.core.errors import ConfigurationError
from brain_graph.embedding.profiles import BASE_PROFILES
from brain_graph.stores.mapped.attach import (
    DEFAULT_PROFILES,
    CheckReport,
    Count,
    Problem,
    ProfileSpec,
    SuggestedMapping,
    exit_code,
    render_toml,
)
from brain_graph.stores.mapped.attach_check import check_live
from brain_graph.stores.mapped.attach_schema import (
    CONSTRAINTS,
    INDEXES,
    LABELS,
    REL_TYPES,
    CollectionInfo,
    ConstraintInfo,
    IndexInfo,
    LabelStats,
    LiveSchema,
    PropertyStats,
    RelCounts,
    VectorInfo,
    collection_matches,
    label_selected,
    plain_type,
    read_neo4j,
    rel_count_statement,
    split_patterns,
    usable_tenant,
)
from brain_graph.stores.mapped.attach_suggest import (
    Guess,
    node_type_of_label,
    suggest_from_schema,
    toml_string,
    upper_snake,
    words,
)
from brain_graph.stores.mapped.mapping import parse_mapping, read_mapping

PROFILES = [ProfileSpec(p.profile_id, p.node_type, "lexical-hash-v1", 512) for p in DEFAULT_PROFILES]
STRING, FLOATS, BOOL, STRINGS, INT = ("STRING",), ("LIST<FLOAT>",), ("BOOLEAN",), ("LIST<STRING>",), ("INTEGER",)


def label(
    name: str,
    count: int,
    props: dict[str, Any],
    *,
    sampled: int | None = None,
    co_labels: dict[str, int] | None = None,
    unusable_tenants: dict[str, int] | None = None,
    **ids: tuple[str, ...],
) -> LabelStats:
    """A label's stats: ``props`` name -> types (held by every sampled node) or (present, types, sizes);
    ``co_labels``: how many sampled nodes carry each other label."""
    sampled = min(count, 1000) if sampled is None else sampled
    stats = {}
    for prop, spec in props.items():
        present, types, sizes = (sampled, spec, ()) if isinstance(spec[0], str) else spec
        stats[prop] = PropertyStats(prop, present, types, sizes)
    return LabelStats(name, count, sampled, stats, co_labels or {}, ids, unusable_tenants or {})


def schema(
    labels: list[LabelStats],
    *,
    indexes: tuple[IndexInfo, ...] = (),
    constraints: tuple[ConstraintInfo, ...] = (),
    out: dict[tuple[str, str], int] | None = None,
    into: dict[tuple[str, str], int] | None = None,
    collections: tuple[CollectionInfo, ...] | None = None,
) -> LiveSchema:
    rel_types = tuple(sorted({t for _, t in {**(out or {}), **(into or {})}}))
    return LiveSchema(
        where="Neo4j bolt://test database 'neo4j'",
        labels=tuple(sorted(s.label for s in labels)),
        rel_types=rel_types,
        considered=tuple(s.label for s in labels),
        stats={s.label: s for s in labels},
        indexes=indexes,
        constraints=constraints,
        rel_counts=RelCounts(out or {}, into or {}),
        collections=collections,
    )


def vector_index(
    name: str, on: str, prop: str = "embedding", dimension: int = 512, similarity: str = "cosine"
) -> IndexInfo:
    return IndexInfo(name, "VECTOR", "NODE", (on,), (prop,), "ONLINE", dimension, similarity)


def range_index(on: str, prop: str = "id") -> IndexInfo:
    return IndexInfo(f"{on}_{prop}", "RANGE", "NODE", (on,), (prop,), "ONLINE")


# -- the profiles and small helpers -------------------------------------------------------------------


def test_the_default_profiles_are_brain_graphs() -> None:
    assert [(p.profile_id, p.node_type) for p in DEFAULT_PROFILES] == [
        (profile_id, node_types[0]) for profile_id, _, node_types, _, _ in BASE_PROFILES
    ]


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("Chunk", ("cdm.doc", False)),
        ("Document", ("cdm.doc", False)),
        ("WikiPage", ("cdm.doc", False)),
        ("Chunk_ab12cd", ("cdm.doc", False)),
        ("Ticket", ("cdm.work_item", False)),
        ("JiraIssue", ("cdm.work_item", False)),
        ("Tasks", ("cdm.work_item", False)),
        ("SourceFile", ("code.file", False)),
        ("CodeFile", ("code.file", False)),
        ("Function", ("code.file", False)),
        ("__Community__", ("kg.cluster", False)),
        ("Topic", ("kg.cluster", False)),
        ("Person", ("cdm.doc", True)),
        ("Profile", ("cdm.doc", True)),  # not a file
    ],
)
def test_a_labels_name_says_its_node_type(name: str, expected: tuple[str, bool]) -> None:
    assert node_type_of_label(name) == expected


def test_words_of_a_label() -> None:
    assert words("WikiPage") == ["wiki", "page", "wikipage"]
    assert words("HTTPRequest_2") == ["http", "request", "httprequest"]
    assert words("__Entity__") == ["entity"]


@pytest.mark.parametrize(
    ("rel_type", "edge_type"),
    [
        ("NEXT_CHUNK", "NEXT_CHUNK"),
        ("FROM_CHUNK", "FROM_CHUNK"),
        ("relatesTo", "RELATES_TO"),
        ("has-part", "HAS_PART"),
        ("mentions", "MENTIONS"),
        ("_1st", None),
        ("9LIVES", None),
    ],
)
def test_a_relationship_type_as_an_edge_type(rel_type: str, edge_type: str | None) -> None:
    assert upper_snake(rel_type) == edge_type


def test_labels_are_chosen_by_names_or_patterns() -> None:
    assert split_patterns(" Chunk, *_ab12 ,,") == ["Chunk", "*_ab12"]
    assert split_patterns(["A,B", "C"]) == ["A", "B", "C"]
    assert split_patterns("") is None
    assert split_patterns(None) is None
    assert label_selected("Chunk_ab12", ["*_ab12"])
    assert not label_selected("Chunk_ab123", ["*_ab12"])
    assert label_selected("Anything", None)


def test_value_types_and_collection_names() -> None:
    assert plain_type("LIST<FLOAT NOT NULL> NOT NULL") == "LIST<FLOAT>"
    assert collection_matches("Chunk", "Chunk")
    assert collection_matches("Chunks", "chunk")
    assert collection_matches("Wiki_page", "WikiPage")
    assert not collection_matches("ChunkEmbeddings", "Chunk")


def test_relationship_counts_come_from_the_count_store() -> None:
    statement = rel_count_statement("Chunk", ["NEXT_CHUNK", "odd`type"])
    assert "MATCH (:`Chunk`)-[r:`NEXT_CHUNK`]->() RETURN count(r) AS o0" in statement
    assert "MATCH ()-[r:`odd``type`]->(:`Chunk`) RETURN count(r) AS i1" in statement
    assert statement.endswith("RETURN [o0, o1] AS outs, [i0, i1] AS ins")


@pytest.mark.parametrize("value", ["plain", 'a "quoted" \\ value', "tab\tnew\nline", "ctrl\x01\x7fdel", "ünï € 🙂"])
def test_toml_strings_read_back(value: str) -> None:
    assert tomllib.loads(f"v = {toml_string(value)}")["v"] == value


# -- the draft -------------------------------------------------------------------------------------------


def lexical_graph(**extra: Any) -> LiveSchema:
    """A neo4j-graphrag lexical graph: documents, chunks with a vector index, entities."""
    return schema(
        [
            label("Document", 2, {"path": STRING, "createdAt": STRING}),
            label("Chunk", 10, {"id": STRING, "text": STRING, "index": INT, "embedding": (10, FLOATS, (512,))}),
            label("Person", 4, {"id": STRING, "name": STRING, "description": (3, STRING, ())}),
        ],
        indexes=(vector_index("chunk_vectors", "Chunk"), range_index("Chunk")),
        out={("Chunk", "FROM_DOCUMENT"): 10, ("Chunk", "NEXT_CHUNK"): 8, ("Person", "FROM_CHUNK"): 6},
        into={("Document", "FROM_DOCUMENT"): 10, ("Chunk", "NEXT_CHUNK"): 8, ("Chunk", "FROM_CHUNK"): 6},
        **extra,
    )


def test_the_draft_of_a_lexical_graph() -> None:
    suggested = suggest_from_schema(lexical_graph(), profiles=PROFILES)
    m = suggested.mapping
    assert m.id_property == "id"
    assert m.tenant.fixed == "default"
    assert [(n.label, n.node_type, n.text) for n in m.nodes] == [
        ("Chunk", "cdm.doc", {"body": "text"}),
        ("Person", "cdm.doc", {"body": "description"}),
        ("Document", "kg.entity", {}),
    ]
    assert [(e.type, e.as_type) for e in m.edges] == [
        ("FROM_CHUNK", "FROM_CHUNK"),
        ("FROM_DOCUMENT", "FROM_DOCUMENT"),
        ("NEXT_CHUNK", "NEXT_CHUNK"),
    ]
    assert [v.model_dump(exclude_none=True) for v in m.vectors] == [
        {
            "profile": "cdm.doc.body",
            "source": "neo4j",
            "index": "chunk_vectors",
            "property": "embedding",
            "embedder": "lexical-hash-v1",
        }
    ]
    assert {g.key for g in suggested.guesses} == {
        "tenant",
        "title_properties",
        "nodes.Person.node_type",
        "nodes.Document.node_type",
        "vectors.cdm.doc.body.embedder",
    }
    # the documents have no id property: they are linked (FROM_DOCUMENT), named by their element id
    assert m.id_of("Document") == ("elementId()", "string")
    assert m.title_properties == ["name", "path"]
    assert (
        "BRAIN_GRAPH_SAFE_EDGE_TYPES=DEPENDS_ON,DOCUMENTS,FROM_CHUNK,FROM_DOCUMENT,IMPLEMENTED_BY,NEXT_CHUNK,REFERENCES"
        in (suggested.edge_notes[0])
    )


def test_vectors_of_another_dimension_are_not_the_configured_embedders() -> None:
    graph = lexical_graph()
    graph = LiveSchema(**{**graph.__dict__, "indexes": (vector_index("chunk_vectors", "Chunk", dimension=1536),)})
    suggested = suggest_from_schema(graph, profiles=PROFILES)
    assert suggested.mapping.vectors[0].embedder is None
    assert any("dimension 1536" in note and "makes 512" in note for note in suggested.notes)
    assert "vectors.cdm.doc.body.embedder" not in {g.key for g in suggested.guesses}


def test_a_team_graph_with_tenants_clusters_and_acls() -> None:
    common = {"uid": STRING, "tenantId": STRING, "title": STRING, "url": STRING, "restricted": BOOL, "readers": STRINGS}
    graph = schema(
        [
            label("Issue", 50, {**common, "summary": STRING, "description": STRING, "vec": FLOATS}),
            label("WikiPage", 20, {**common, "body": STRING}),
            label("Topic", 5, {"uid": STRING, "tenantId": STRING, "title": STRING, "summary": STRING}),
            label("Person", 3, {"uid": STRING, "tenantId": STRING, "name": STRING}),
        ],
        indexes=(vector_index("issue_vec", "Issue", "vec"), range_index("Issue", "uid")),
        constraints=tuple(
            ConstraintInfo(f"u{name}", "UNIQUENESS", "NODE", (name,), ("uid",))
            for name in ("Issue", "WikiPage", "Topic")
        ),
        out={
            ("Issue", "IN_TOPIC"): 40,
            ("WikiPage", "IN_TOPIC"): 10,
            ("Issue", "MENTIONS"): 7,
            ("Issue", "ASSIGNED"): 9,
        },
        into={("Topic", "IN_TOPIC"): 50, ("WikiPage", "MENTIONS"): 7, ("Person", "ASSIGNED"): 9},
    )
    suggested = suggest_from_schema(graph, profiles=PROFILES)
    m = suggested.mapping
    assert m.id_property == "uid"
    assert m.tenant.property == "tenantId"
    assert (m.secured_property, m.acl_property) == ("restricted", "readers")
    assert m.url_property == "url"
    assert [(n.label, n.node_type, n.text) for n in m.nodes] == [
        ("Issue", "cdm.work_item", {"summary": "summary", "description": "description"}),
        ("WikiPage", "cdm.doc", {"body": "body"}),
        # a name and no text or vectors, but assigned to issues: reached by following edges only
        ("Person", "cdm.person", {}),
    ]
    assert suggested.guessed("nodes.Person.node_type")
    assert m.clusters is not None
    assert (m.clusters.label, m.clusters.membership, m.clusters.text) == ("Topic", "IN_TOPIC", {"summary": "summary"})
    assert sorted((e.type, e.as_type) for e in m.edges) == [("ASSIGNED", "ASSIGNED"), ("MENTIONS", "MENTIONS")]
    assert [(v.profile, v.index) for v in m.vectors if hasattr(v, "index")] == [("cdm.work.summary", "issue_vec")]
    assert {"secured_property", "acl_property"} <= {g.key for g in suggested.guesses}
    assert "id_property" not in {g.key for g in suggested.guesses}  # uniqueness constraints
    assert not any("Person" in note for note in suggested.notes)


def test_a_label_with_only_a_name_is_mapped_when_linked_to_a_searched_label() -> None:
    base = {"id": STRING, "name": STRING}
    movies = label("Movie", 4, {"id": STRING, "title": STRING, "tagline": STRING})
    linked = schema(
        [movies, label("Person", 3, base), label("Studio", 2, base), label("Tag", 2, base)],
        out={("Person", "ACTED_IN"): 5, ("Movie", "MADE_BY"): 4},
        into={("Movie", "ACTED_IN"): 5, ("Studio", "MADE_BY"): 4},
    )
    suggested = suggest_from_schema(linked, profiles=PROFILES)
    m = suggested.mapping
    assert [(n.label, n.node_type, n.text) for n in m.nodes] == [
        ("Movie", "cdm.doc", {"body": "tagline"}),  # a tagline is a short text: a doc's body when it has none
        ("Person", "cdm.person", {}),
        ("Studio", "kg.entity", {}),
    ]
    assert m.title_properties == ["title", "name"]
    assert sorted((e.type, e.as_type) for e in m.edges) == [("ACTED_IN", "ACTED_IN"), ("MADE_BY", "MADE_BY")]
    assert {g.key for g in suggested.guesses} >= {"nodes.Person.node_type", "nodes.Studio.node_type"}
    assert any("BRAIN_GRAPH_SAFE_EDGE_TYPES=" in note and "ACTED_IN" in note for note in suggested.edge_notes)
    # no relationship to a searched label (Tag): not mapped
    assert any(note.startswith("not mapped: Tag (2 nodes): no text property") for note in suggested.notes)
    isolated = suggest_from_schema(schema([movies, label("Person", 3, base)]), profiles=PROFILES)
    assert [n.label for n in isolated.mapping.nodes] == ["Movie"]
    assert any(note.startswith("not mapped: Person (3 nodes): no text property") for note in isolated.notes)


def test_a_weaviate_collection_named_like_a_label() -> None:
    tickets = CollectionInfo(
        "Tickets",
        {"nodeId": "text", "title": "text", "tenant": "text"},
        {"nodeId": "field", "title": "word", "tenant": "field"},
        (
            VectorInfo("title", "cosine", "hnsw", "none", None, False, 512),
            VectorInfo("body", "cosine", "hnsw", "none", None, False, 512),
        ),
        False,
        links={("nodeId", "Ticket", "id"): 18, ("title", "Ticket", "id"): 0},
    )
    coded = CollectionInfo(
        "Doc",
        {"ref": "text"},
        {"ref": "field"},
        (VectorInfo(None, "dot", "hnsw", "text2vec-openai", "text-embedding-3-small", False, 1536),),
        True,
        ("acme", "beta"),
        2,
    )
    graph = schema(
        [
            label("Ticket", 20, {"id": STRING, "tenant": STRING, "summary": STRING}),
            label("Doc", 20, {"id": STRING, "tenant": STRING, "text": STRING}),
        ],
        collections=(tickets, coded),
    )
    suggested = suggest_from_schema(graph, profiles=PROFILES)
    vectors = {v.profile: v.model_dump(exclude_none=True) for v in suggested.mapping.vectors}
    assert vectors == {
        "cdm.work.summary": {
            "profile": "cdm.work.summary",
            "source": "weaviate",
            "collection": "Tickets",
            "id_property": "nodeId",
            "tenant_property": "tenant",
            "vector": "body",
            "embedder": "lexical-hash-v1",
        },
        "cdm.doc.body": {
            "profile": "cdm.doc.body",
            "source": "weaviate",
            "collection": "Doc",
            "id_property": "ref",
            "tenant_name": "{tenant}",
        },
    }
    keys = {g.key for g in suggested.guesses}
    assert {
        "vectors.cdm.work.summary.vector",
        "vectors.cdm.doc.body.id_property",
        "vectors.cdm.doc.body.tenant_name",
    } <= keys
    assert any("text2vec-openai (model text-embedding-3-small)" in note for note in suggested.notes)
    assert any("ranks by dot" in note for note in suggested.notes)


def test_nothing_to_map_is_one_line() -> None:
    graph = schema([label("Document", 2, {"path": STRING})])
    with pytest.raises(ConfigurationError, match=r"^attach: nothing to map in Neo4j bolt://test database 'neo4j': "):
        suggest_from_schema(graph)


# -- graphs popular tools write ----------------------------------------------------------------------------


def llamaindex_graph(**extra: Any) -> LiveSchema:
    """A LlamaIndex ``Neo4jPropertyGraphStore`` graph: every node ``__Node__`` (unique id), entities also
    ``__Entity__`` and their type, ``(Chunk)-[:MENTIONS]->(entity)``, the vector index ``entity`` on
    ``__Entity__`` only (the chunks' vectors have none)."""
    node = {"__Node__": 3}
    entity = {"__Node__": 2, "__Entity__": 2}
    entity_props = {"id": STRING, "name": STRING, "triplet_source_id": STRING, "embedding": (2, FLOATS, (512,))}
    return schema(
        [
            label("Chunk", 3, {"id": STRING, "text": STRING, "embedding": (3, FLOATS, (512,))}, co_labels=node),
            label("PERSON", 2, entity_props, co_labels=entity),
            label("ORGANIZATION", 2, entity_props, co_labels=entity),
            # some of these carry __Entity__, not all: the index is not theirs
            label("Concept", 2, {"id": STRING, "name": STRING}, co_labels={"__Node__": 2, "__Entity__": 1}),
        ],
        indexes=(vector_index("entity", "__Entity__", dimension=None),),  # type: ignore[arg-type]
        constraints=(
            ConstraintInfo("node_id", "UNIQUENESS", "NODE", ("__Node__",), ("id",)),
            ConstraintInfo("entity_id", "UNIQUENESS", "NODE", ("__Entity__",), ("id",)),
        ),
        out={("Chunk", "MENTIONS"): 6},
        into={("PERSON", "MENTIONS"): 2, ("ORGANIZATION", "MENTIONS"): 2, ("Concept", "MENTIONS"): 2},
        **extra,
    )


def test_a_vector_index_on_a_marker_label_serves_the_labels_whose_nodes_all_carry_it() -> None:
    graph = llamaindex_graph()
    assert [index.name for index in graph.vector_indexes("PERSON")] == ["entity"]
    assert graph.vector_indexes("Concept") == []
    assert graph.vector_indexes("Chunk") == []
    assert graph.unique("Chunk", "id")  # through __Node__'s constraint
    assert graph.unique("PERSON", "id")
    assert not graph.unique("Chunk", "text")
    suggested = suggest_from_schema(graph, profiles=PROFILES)
    m = suggested.mapping
    assert m.id_property == "id"
    assert [(n.label, n.node_type, n.text) for n in m.nodes] == [
        ("Chunk", "cdm.doc", {"body": "text"}),
        ("PERSON", "cdm.doc", {}),  # searched by their vectors, in the index on __Entity__
        ("ORGANIZATION", "cdm.doc", {}),
        ("Concept", "kg.entity", {}),  # only linked: not every node of it is in the index
    ]
    # one index holds both entity types' vectors: one entry, and no note that a profile "already reads" it
    assert [v.model_dump(exclude_none=True) for v in m.vectors] == [
        {
            "profile": "cdm.doc.body",
            "source": "neo4j",
            "index": "entity",
            "property": "embedding",
            "embedder": "lexical-hash-v1",
        }
    ]
    assert not any("already reads" in note for note in suggested.notes)
    assert [(e.type, e.as_type) for e in m.edges] == [("MENTIONS", "MENTIONS")]


def test_vectors_without_an_index_are_noted_with_the_statement_that_indexes_them() -> None:
    suggested = suggest_from_schema(llamaindex_graph(), profiles=PROFILES)
    assert (
        "Chunk.embedding holds vectors but has no vector index, and brain-graph searches vectors only through one "
        "(it never writes): to search them, create it, then suggest again: CREATE VECTOR INDEX `chunk_embedding` "
        "IF NOT EXISTS FOR (n:`Chunk`) ON n.`embedding` OPTIONS {indexConfig: {`vector.dimensions`: 512, "
        "`vector.similarity_function`: 'cosine'}}"
    ) in suggested.notes
    # the entities' vectors are indexed (through their marker): no note for them
    assert [note.split(" ")[0] for note in suggested.notes if "holds vectors" in note] == ["Chunk.embedding"]
    # vectors of several dimensions: the index's dimension is left to Neo4j
    mixed = schema([label("Note", 4, {"id": STRING, "body": STRING, "vec": (4, FLOATS, (384, 512))})])
    (note,) = [note for note in suggest_from_schema(mixed, profiles=PROFILES).notes if "holds vectors" in note]
    assert note.endswith("OPTIONS {indexConfig: {`vector.similarity_function`: 'cosine'}}")
    # short lists of numbers (a point, version numbers) are no vectors to index
    short = {"id": STRING, "body": STRING, "point": (4, FLOATS, (2,)), "versions": (4, ("LIST<INTEGER>",), (300,))}
    assert not any("holds vectors" in note for note in suggest_from_schema(schema([label("Note", 4, short)])).notes)


def graphiti_graph(groups: dict[str, tuple[int, int]], **extra: Any) -> LiveSchema:
    """A Graphiti graph: ``Entity`` (name_embedding with no vector index, as Graphiti leaves it) and
    ``Episodic``, each holding ``group_id`` on all 4 sampled nodes; ``groups``: label -> (nodes with a
    blank group_id, the others)."""
    common = {"uuid": STRING, "name": STRING, "group_id": STRING, "created_at": ("ZONED DATETIME",)}
    return schema(
        [
            label(
                "Entity",
                4,
                {**common, "summary": STRING, "name_embedding": (4, FLOATS, (1024,))},
                unusable_tenants={"group_id": groups["Entity"][0]},
            ),
            label(
                "Episodic",
                4,
                {**common, "content": STRING, "source": STRING, "entity_edges": STRINGS},
                unusable_tenants={"group_id": groups["Episodic"][0]},
            ),
        ],
        indexes=(range_index("Entity", "uuid"), range_index("Episodic", "uuid")),
        out={("Episodic", "MENTIONS"): 5, ("Entity", "RELATES_TO"): 2},
        into={("Entity", "MENTIONS"): 5, ("Entity", "RELATES_TO"): 2},
        **extra,
    )


def test_a_graphiti_graph_with_graphitis_default_group_id_is_one_tenant() -> None:
    suggested = suggest_from_schema(graphiti_graph({"Entity": (4, 0), "Episodic": (4, 0)}), profiles=PROFILES)
    m = suggested.mapping
    assert m.tenant.fixed == "default"
    assert suggested.guessed("tenant") == [
        "every sampled 'group_id' is blank or no usable tenant id (Graphiti's default group_id is \"\"): the whole "
        "graph is one tenant, searched as --tenant default"
    ]
    assert (m.id_property, m.title_properties) == ("uuid", ["name"])
    assert "id_property" not in {g.key for g in suggested.guesses}
    assert [(n.label, n.node_type, n.text) for n in m.nodes] == [
        ("Entity", "cdm.doc", {"body": "summary"}),
        ("Episodic", "cdm.doc", {"body": "content"}),
    ]
    assert sorted((e.type, e.as_type) for e in m.edges) == [("MENTIONS", "MENTIONS"), ("RELATES_TO", "RELATES_TO")]
    assert m.vectors == []  # Graphiti creates no vector index: said in a note, with the statement
    assert any(
        note.startswith("Entity.name_embedding holds vectors but has no vector index")
        and note.endswith(
            "CREATE VECTOR INDEX `entity_name_embedding` IF NOT EXISTS FOR (n:`Entity`) ON n.`name_embedding` "
            "OPTIONS {indexConfig: {`vector.dimensions`: 1024, `vector.similarity_function`: 'cosine'}}"
        )
        for note in suggested.notes
    )


def test_named_groups_are_the_tenants_and_blank_ones_are_said() -> None:
    named = suggest_from_schema(graphiti_graph({"Entity": (0, 4), "Episodic": (0, 4)}), profiles=PROFILES)
    assert named.mapping.tenant.property == "group_id"
    assert named.guessed("tenant") == []
    mixed = suggest_from_schema(graphiti_graph({"Entity": (1, 3), "Episodic": (4, 0)}), profiles=PROFILES)
    assert mixed.mapping.tenant.property == "group_id"
    assert mixed.guessed("tenant") == [
        "Episodic have no 'group_id': their nodes are in no tenant",
        "5 sampled nodes of the mapped labels have a blank 'group_id' (no usable tenant id): no search finds them",
    ]
    # with the team's index on the names' vectors, they are the entities' vector source
    indexed = graphiti_graph(
        {"Entity": (0, 4), "Episodic": (0, 4)},
    )
    indexed = LiveSchema(
        **{**indexed.__dict__, "indexes": (*indexed.indexes, vector_index("names", "Entity", "name_embedding", 1024))}
    )
    found = suggest_from_schema(indexed, profiles=PROFILES)
    assert [(v.profile, getattr(v, "index", None)) for v in found.mapping.vectors] == [("cdm.doc.body", "names")]
    assert not any("holds vectors" in note for note in found.notes)


@pytest.mark.parametrize(
    ("value", "usable"),
    [("acme", True), ("team-1_a", True), ("", False), ("  ", False), (" acme", False), ("a\x00", False)],
)
def test_a_usable_tenant_id_is_one_a_search_can_name(value: str, usable: bool) -> None:
    assert usable_tenant(value) is usable


class FakeNeo4j:
    """A Neo4j client answering attach's read statements from nodes in memory (labels, properties),
    and the check's per-label statements from what those nodes hold (ids and tenants)."""

    uri = "bolt://fake"
    database = "neo4j"

    def __init__(
        self,
        nodes: list[tuple[tuple[str, ...], dict[str, Any]]],
        indexes: list[dict[str, Any]] = (),  # type: ignore[assignment]
        constraints: list[dict[str, Any]] = (),  # type: ignore[assignment]
    ) -> None:
        self.nodes = nodes
        self.indexes = list(indexes)
        self.constraints = list(constraints)
        self.statements: list[str] = []

    @staticmethod
    def value_type(value: Any) -> str:
        if isinstance(value, bool):
            return "BOOLEAN NOT NULL"
        if isinstance(value, int):
            return "INTEGER NOT NULL"
        if isinstance(value, str):
            return "STRING NOT NULL"
        inner = "FLOAT" if all(isinstance(x, float) for x in value) else "STRING"
        return f"LIST<{inner} NOT NULL> NOT NULL"

    def of(self, statement: str) -> list[dict[str, Any]]:
        found = re.match(r"MATCH \(n:`([^`]+)`\)", statement)
        assert found is not None, statement
        return [props for labels, props in self.nodes if found.group(1) in labels]

    def read(self, statement: str, params: Mapping[str, Any]) -> list[dict[str, Any]]:
        self.statements.append(statement)
        if statement == LABELS:
            return [{"labels": sorted({lb for labels, _ in self.nodes for lb in labels})}]
        if statement == REL_TYPES:
            return [{"types": []}]
        if statement == INDEXES:
            return self.indexes
        if statement == CONSTRAINTS:
            return self.constraints
        if "count(n) AS total" in statement:
            name = re.match(r"MATCH \(n:`([^`]+)`\)", statement).group(1)  # type: ignore[union-attr]
            carried = [labels for labels, _ in self.nodes if name in labels]
            others = sorted({lb for labels in carried for lb in labels})
            return [{"total": len(carried), "others": [[lb, sum(lb in ls for ls in carried)] for lb in others]}]
        nodes = self.of(statement)
        if "UNWIND keys(n)" in statement:
            keys = sorted({key for props in nodes for key in props})
            return [
                {
                    "key": key,
                    "present": sum(key in props for props in nodes),
                    "types": sorted({self.value_type(props[key]) for props in nodes if key in props}),
                    "sizes": sorted({len(props[key]) for props in nodes if isinstance(props.get(key), list)}),
                }
                for key in keys
            ]
        if "UNWIND $props AS prop" in statement:
            return [
                {"prop": prop, "values": [str(props[prop]) for props in nodes if isinstance(props.get(prop), str)]}
                for prop in params["props"]
            ]
        if "AS named" in statement:  # the check's id and tenant counts (ids and tenants as the mapping reads them)
            return [{"named": len(nodes), "dups": 0, "examples": [], "tenanted": len(nodes), "tenants": ["default"]}]
        if "AS vectors" in statement:
            prop = re.search(r"count\(n\.`([^`]+)`\) AS vectors", statement).group(1)  # type: ignore[union-attr]
            return [{"vectors": sum(prop in props for props in nodes), "orphans": 0}]
        raise AssertionError(f"unexpected statement: {statement}")


def vector_row(name: str, on: str, prop: str = "embedding") -> dict[str, Any]:
    return {
        "name": name,
        "type": "VECTOR",
        "entityType": "NODE",
        "labelsOrTypes": [on],
        "properties": [prop],
        "state": "ONLINE",
        "options": {"indexConfig": {"vector.similarity_function": "COSINE"}},
        "owningConstraint": None,
    }


def llamaindex_nodes() -> list[tuple[tuple[str, ...], dict[str, Any]]]:
    vector = [0.5, 0.5]
    return [
        (("__Node__", "Chunk"), {"id": "c1", "text": "Alice joined Acme.", "embedding": vector}),
        (("__Node__", "__Entity__", "PERSON"), {"id": "Alice", "name": "Alice", "embedding": vector}),
        (("__Node__", "__Entity__", "ORGANIZATION"), {"id": "Acme", "name": "Acme", "embedding": vector}),
        (("__Node__", "__KGBuilder__", "Document"), {"path": "a.pdf"}),
        (("Note",), {"id": "n1", "group_id": "", "body": "A note."}),
        (("Note",), {"id": "n2", "group_id": "acme", "body": "Another."}),
    ]


def test_reading_the_schema_skips_marker_labels_and_records_what_carries_them() -> None:
    client = FakeNeo4j(llamaindex_nodes(), [vector_row("entity", "__Entity__")])
    found = read_neo4j(client)  # type: ignore[arg-type]
    # LlamaIndex's __Node__, like neo4j-graphrag's __KGBuilder__ and __Entity__, is never a mapped label
    assert found.considered == ("Chunk", "Document", "Note", "ORGANIZATION", "PERSON")
    assert found.stats["PERSON"].co_labels == {"__Node__": 1, "__Entity__": 1}
    assert [index.name for index in found.vector_indexes("PERSON")] == ["entity"]
    assert found.vector_indexes("Chunk") == []
    # Graphiti's default group_id ("") is no tenant id; the sampled values are counted
    assert found.stats["Note"].unusable_tenants == {"group_id": 1}
    assert found.stats["Note"].usable_tenants("group_id") == 1
    assert not any("`__Node__`" in statement for statement in client.statements if "MATCH" in statement)


def test_the_check_reads_a_vector_index_on_a_marker_label_for_the_labels_that_carry_it() -> None:
    client = FakeNeo4j(llamaindex_nodes(), [vector_row("entity", "__Entity__")])
    mapping = parse_mapping(
        {
            "name": "li",
            "tenant": {"fixed": "default"},
            "title_properties": ["name"],
            "nodes": [
                {"label": "Chunk", "node_type": "cdm.doc", "text": {"body": "text"}},
                {"label": "PERSON", "node_type": "cdm.doc"},
                {"label": "ORGANIZATION", "node_type": "cdm.doc"},
            ],
            "vectors": [{"profile": "cdm.doc.body", "source": "neo4j", "index": "entity", "property": "embedding"}],
        }
    )
    report = check_live(mapping, client, profiles=PROFILES)  # type: ignore[arg-type]
    assert report.errors == []
    counts = {count.key: count.text for count in report.counts}
    assert counts["vectors.cdm.doc.body"] == (
        "neo4j index 'entity' (dimension ?, cosine); PERSON: 1 of 1 sampled nodes have a vector, 0 not searchable; "
        "ORGANIZATION: 1 of 1 sampled nodes have a vector, 0 not searchable"
    )
    # an index on a label no mapped label's nodes carry is still an error
    client = FakeNeo4j(llamaindex_nodes(), [vector_row("entity", "__KGBuilder__")])
    report = check_live(mapping, client, profiles=PROFILES)  # type: ignore[arg-type]
    assert [p.key for p in report.errors] == ["vectors.cdm.doc.body.index"]
    assert "no mapped label (nor a label every node of a mapped label carries)" in report.errors[0].message


# -- the TOML ------------------------------------------------------------------------------------------


def test_the_toml_reads_back_as_the_mapping_with_the_guesses_on_their_lines(tmp_path: Path) -> None:
    mapping = parse_mapping(
        {
            "name": "team",
            "id_property": "uid",
            "tenant": {"property": "tenantId"},
            "title_properties": ["title", "name"],
            "url_property": "url",
            "secured_property": "restricted",
            "acl_property": "readers",
            "nodes": [
                {"label": "Issue", "node_type": "cdm.work_item", "text": {"summary": "summary"}},
                {"label": "Thing", "node_type": "cdm.doc"},
            ],
            "edges": [{"type": "MENTIONS", "as": "MENTIONS"}, {"type": "relatesTo", "as": "RELATES_TO"}],
            "clusters": {"label": "Topic", "membership": "IN_TOPIC", "text": {"summary": "summary"}},
            "vectors": [
                {"profile": "cdm.work.summary", "source": "neo4j", "index": 'odd "index" name', "property": "vec"},
                {
                    "profile": "cdm.doc.body",
                    "source": "weaviate",
                    "collection": "Docs",
                    "id_property": "nodeId",
                    "tenant_name": "team_{tenant}",
                    "embedder": "lexical-hash-v1",
                },
            ],
        }
    )
    suggested = SuggestedMapping(
        mapping,
        (
            Guess("tenant", "a guess\nover two lines"),
            Guess("nodes.Thing.node_type", "no rule"),
            Guess("vectors.cdm.doc.body.embedder", "assumed"),
            Guess("vectors.cdm.doc.body.embedder", "twice"),
            Guess("edges.relatesTo.as", "snake"),
        ),
        ("a note", "another\nnote"),
        "Neo4j bolt://x",
        ("edges need allowing",),
    )
    text = render_toml(suggested)
    path = tmp_path / "team.toml"
    path.write_text(text, encoding="utf-8")
    assert read_mapping(path) == mapping
    lines = text.splitlines()
    assert lines[0] == "# A brain-graph mapping suggested by `brain-graph attach --suggest` from Neo4j bolt://x."
    assert "# a note" in lines
    assert "# another note" in lines
    assert "# edges need allowing" in lines
    guessed = [line for line in lines if "# guessed:" in line and not line.startswith("#")]
    assert guessed == [
        'tenant = { property = "tenantId" }  # guessed: a guess over two lines',
        'node_type = "cdm.doc"  # guessed: no rule',
        'as = "RELATES_TO"  # guessed: snake',
        'embedder = "lexical-hash-v1"  # guessed: assumed; twice',
    ]


# -- the check report -----------------------------------------------------------------------------------


def test_the_check_report_lines() -> None:
    mapping = parse_mapping(
        {"name": "team", "tenant": {"fixed": "x"}, "nodes": [{"label": "A", "node_type": "cdm.doc"}]}
    )
    report = CheckReport(
        mapping,
        (
            Problem("nodes.A.text.body", "1 of 3 sampled nodes of A have no 'body'", "warning"),
            Problem("edges.NOPE.type", "relationship type 'NOPE' does not exist"),
        ),
        (Count("nodes.A", "A as cdm.doc: 3 nodes"),),
        "Neo4j bolt://x",
    )
    assert not report.usable
    assert exit_code(report) == 2
    assert report.problem_lines() == [
        "error: mapping team: edges.NOPE.type: relationship type 'NOPE' does not exist",
        "warning: mapping team: nodes.A.text.body: 1 of 3 sampled nodes of A have no 'body'",
    ]
    assert report.count_lines() == ["mapping team: nodes.A: A as cdm.doc: 3 nodes"]
    assert report.summary() == "mapping team: not usable (1 error(s), 1 warning(s)) on Neo4j bolt://x"
    fine = CheckReport(mapping, report.warnings, (), "x")
    assert fine.usable
    assert exit_code(fine) == 0


# -- the command's arguments ------------------------------------------------------------------------


@pytest.mark.parametrize("args", [["attach"], ["attach", "--suggest", "--check", "m.toml"]])
def test_attach_needs_one_of_suggest_and_check(args: list[str]) -> None:
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2
    assert result.stderr == "error: give --suggest or --check MAPPING (one of them)\n"


def test_attach_check_of_a_missing_file(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["attach", "--check", str(tmp_path / "nope.toml")])
    assert result.exit_code == 2
    assert result.stderr == f"error: --check {str(tmp_path / 'nope.toml')!r}: no such mapping file\n"


def test_attach_check_of_a_bad_file_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.toml"
    path.write_text('tenant = { fixed = "x" }\n[[nodes]]\nlabel = "A"\nnode_type = "cdm.doc"\ntext = { bogus = "p" }\n')
    result = CliRunner().invoke(app, ["attach", "--check", str(path)])
    assert result.exit_code == 2
    assert result.stderr.startswith(
        "error: mapping bad.toml: nodes.0.text: Value error, unknown passage field 'bogus'"
    ) or (result.stderr.startswith("error: mapping bad.toml: nodes.0.text: unknown passage field 'bogus'"))
    assert result.stderr.count("\n") == 1


@pytest.mark.parametrize(
    ("graph", "weaviate", "expected"),
    [
        (["acme", "globex"], ["ws_acme", "ws_globex", "other"], ("ws_{tenant}", 2)),
        (["acme", "globex"], ["acme", "globex"], ("{tenant}", 2)),
        (["acme", "globex"], ["acme-prod", "globex-prod", "acme-dev"], ("{tenant}-prod", 2)),
        (["acme"], ["zzz"], ("{tenant}", 0)),
        ([], ["acme"], ("{tenant}", 0)),
        # the rule most graph tenants follow, not one that fits a single odd name
        (["a1", "b2", "c3"], ["t_a1", "t_b2", "t_c3", "xa1y"], ("t_{tenant}", 3)),
    ],
)
def test_the_weaviate_tenant_name_rule_is_read_from_the_tenants(
    graph: list[str], weaviate: list[str], expected: tuple[str, int]
) -> None:
    from brain_graph.stores.mapped.attach_suggest import tenant_pattern

    assert tenant_pattern(graph, weaviate) == expected


def test_of_several_named_vectors_the_one_of_the_embedders_dimension_is_taken() -> None:
    tickets = CollectionInfo(
        "Tickets",
        {"nodeId": "text"},
        {"nodeId": "field"},
        (
            VectorInfo("body", "cosine", "hnsw", "none", None, False, 1536),  # named first, made by another model
            VectorInfo("summary_vec", "cosine", "hnsw", "none", None, False, 512),
        ),
        False,
        links={("nodeId", "Ticket", "id"): 18},
    )
    graph = schema([label("Ticket", 20, {"id": STRING, "summary": STRING})], collections=(tickets,))
    suggested = suggest_from_schema(graph, profiles=PROFILES)  # the work profile's embedder makes 512
    (source,) = suggested.mapping.vectors
    assert getattr(source, "vector", None) == "summary_vec"
    assert not suggested.guessed("vectors.cdm.work.summary.vector")  # the dimension decided, not a name


def test_a_label_without_common_names_gets_its_own_id_and_a_text_named_like_one() -> None:
    # Northwind- and Stack-Overflow-like labels: ids named after the label, texts under other names
    graph = schema(
        [
            label("Category", 8, {"categoryID": INT, "categoryName": STRING, "description": STRING}),
            label("Question", 20, {"question_id": STRING, "title": STRING, "body_markdown": STRING}),
            label("ProductLine", 4, {"lineId": STRING, "shortDescription": STRING, "code": STRING}),
        ],
        out={("Question", "IN_CATEGORY"): 20},
        into={("Category", "IN_CATEGORY"): 20},
    )
    suggested = suggest_from_schema(graph, profiles=PROFILES)
    m = suggested.mapping
    assert m.id_of("Category") == ("categoryID", "integer")
    assert m.id_of("Question") == ("question_id", "string")
    assert m.id_of("ProductLine") == ("lineId", "string")
    texts = {node.label: node.text for node in m.nodes}
    assert texts["Category"] == {"body": "description"}  # a common name: not a guess
    assert texts["Question"] == {"body": "body_markdown"}
    assert texts["ProductLine"] == {"body": "shortDescription"}
    assert suggested.guessed("nodes.Question.text")
    assert suggested.guessed("nodes.ProductLine.text")
    assert not suggested.guessed("nodes.Category.text")
    # "code" is no text word; "name" alone is no id (no constraint)
    assert not any(node.text.get("body") == "code" for node in m.nodes)


# -- facets: the properties seed filters read -------------------------------------------------------------


def facet_graph() -> LiveSchema:
    """Labels with obvious facet properties, and one with look-alikes of the wrong kind."""
    from dataclasses import replace

    temporal = ("ZONED DATETIME",)
    return schema(
        [
            label("Ticket", 5, {"id": STRING, "summary": STRING, "labels": STRINGS, "updatedAt": temporal}),
            replace(
                label(
                    "Page",
                    4,
                    {"id": STRING, "body": STRING, "keywords": STRINGS, "modified": STRING, "filePath": STRING},
                ),
                time_values={"modified": ("2024-09-01T12:00:00Z", "2024-09-02")},
            ),
            replace(
                label("SourceFile", 3, {"id": STRING, "content": STRING, "lastModified": INT, "path": STRING}),
                time_values={"lastModified": ("1725192000000", "1725192000123")},
            ),
            replace(
                label("Note", 2, {"id": STRING, "text": STRING, "updated_at": STRING, "namespace": STRING}),
                time_values={"updated_at": ("2024-09-01", "yesterday")},
            ),
            replace(
                label("Post", 2, {"id": STRING, "text": STRING, "tags": STRING, "modified": INT, "path": INT}),
                time_values={"modified": ("17", "1725192000")},
            ),
        ]
    )


def test_the_draft_maps_the_obvious_facet_properties() -> None:
    suggested = suggest_from_schema(facet_graph(), profiles=PROFILES)
    facets = {
        node.label: {
            key: value
            for key in (
                "tags_property",
                "updated_at_property",
                "updated_at_unit",
                "namespace_property",
                "path_property",
            )
            if (value := getattr(node, key)) is not None
        }
        for node in suggested.mapping.nodes
    }
    assert facets == {
        "Ticket": {"tags_property": "labels", "updated_at_property": "updatedAt"},
        "Page": {"tags_property": "keywords", "updated_at_property": "modified", "path_property": "filePath"},
        "SourceFile": {
            "updated_at_property": "lastModified",
            "updated_at_unit": "milliseconds",
            "path_property": "path",
        },
        "Note": {"updated_at_property": "updated_at", "namespace_property": "namespace"},
        "Post": {},  # tags one string, numbers of no one unit, a path that is no string
    }
    assert suggested.guessed("nodes.SourceFile.updated_at_unit") == ["integers of the size of milliseconds since 1970"]
    assert suggested.guessed("nodes.Note.updated_at_property") == [
        "1 of 2 sampled strings are no ISO-8601 time brain-graph reads: those nodes have no update time"
    ]


def test_the_facet_keys_read_back_from_the_toml(tmp_path: Path) -> None:
    suggested = suggest_from_schema(facet_graph(), profiles=PROFILES)
    text = render_toml(suggested)
    path = tmp_path / "facets.toml"
    path.write_text(text, encoding="utf-8")
    assert read_mapping(path).model_copy(update={"name": "suggested"}) == suggested.mapping
    assert 'updated_at_unit = "milliseconds"  # guessed: integers of the size of milliseconds since 1970' in text
    assert 'tags_property = "labels"' in text


def test_the_check_warns_of_facet_properties_no_sampled_node_has() -> None:
    nodes = [(("Chunk",), {"id": f"c{i}", "text": "t", "path": "docs/a.md", "tags": "one"}) for i in range(3)]
    mapping = parse_mapping(
        {
            "name": "f",
            "tenant": {"fixed": "default"},
            "nodes": [
                {
                    "label": "Chunk",
                    "node_type": "cdm.doc",
                    "text": {"body": "text"},
                    "tags_property": "keywords",
                    "updated_at_property": "updatedAt",
                    "path_property": "path",
                    "namespace_property": "tags",
                }
            ],
        }
    )
    report = check_live(mapping, FakeNeo4j(nodes), profiles=PROFILES)  # type: ignore[arg-type]
    warnings = {p.key: p.message for p in report.warnings}
    assert (
        warnings["nodes.Chunk.tags_property"]
        == "none of the 3 sampled nodes of Chunk has 'keywords': filter.tags leaves them out"
    )
    assert warnings["nodes.Chunk.updated_at_property"] == (
        "none of the 3 sampled nodes of Chunk has 'updatedAt': a recency filter leaves them out"
    )
    assert "nodes.Chunk.path_property" not in warnings  # strings, as a path is
    assert "nodes.Chunk.namespace_property" not in warnings
    assert report.usable
