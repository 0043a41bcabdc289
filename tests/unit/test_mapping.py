"""A mapping file is validated once, and each problem is one line naming the mapping and the key."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from brain_graph.core.errors import ConfigurationError
from brain_graph.stores.mapped.mapping import parse_mapping, read_mapping

GOOD = """
id_property = "key"
tenant = { property = "tenantId" }
title_properties = ["title", "name"]
secured_property = "secured"
acl_property = "acl"

[[nodes]]
label = "Ticket"
node_type = "cdm.work_item"
text = { summary = "summary", description = "body" }

[[edges]]
type = "MENTIONS"
as = "REFERENCES"

[clusters]
label = "Topic"
membership = "IN_TOPIC"

[[vectors]]
profile = "cdm.work.summary"
source = "weaviate"
collection = "Tickets"
id_property = "key"
tenant_property = "tenantId"
vector = "summary"
"""


def base() -> dict[str, Any]:
    return {"tenant": {"fixed": "acme"}, "nodes": [{"label": "Doc", "node_type": "cdm.doc"}]}


def test_a_good_mapping_reads_with_its_file_name(tmp_path: Path) -> None:
    path = tmp_path / "team-graph.toml"
    path.write_text(GOOD, encoding="utf-8")
    mapping = read_mapping(path)
    assert mapping.name == "team-graph"
    assert mapping.labels == ["Ticket", "Topic"]
    assert mapping.node_type_of("Topic") == "kg.cluster"
    assert mapping.edges[0].as_type == "REFERENCES"
    assert mapping.vectors[0].source == "weaviate"


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"tenant": {}}, r"^mapping: tenant: give exactly one of property or fixed$"),
        (
            {"id_property": "key`) DETACH DELETE n //"},
            r"^mapping: id_property: 'key.*' is not a name brain-graph reads",
        ),
        (
            {"nodes": [{"label": "Doc\nNode", "node_type": "cdm.doc"}]},
            r"^mapping: nodes\.0\.label: 'Doc\\nNode' is not",
        ),
        ({"nodes": [{"label": " ", "node_type": "cdm.doc"}]}, r"^mapping: nodes\.0\.label: ' ' is not"),
        ({"nodes": []}, r"^mapping: nodes: List should have at least 1 item"),
        ({"edges": [{"type": "X", "as": "references"}]}, r"^mapping: edges\.0\.as: edge type 'references' is not"),
        (
            {"nodes": [{"label": "D", "node_type": "cdm.doc", "text": {"sumary": "s"}}]},
            r"unknown passage field 'sumary'",
        ),
        ({"extra": 1}, r"^mapping: extra: Extra inputs are not permitted$"),
        (
            {
                "vectors": [
                    {"profile": "p", "source": "weaviate", "collection": "C", "id_property": "id", "tenant_name": "x"}
                ]
            },
            r"tenant_name must contain \{tenant\}",
        ),
        ({"vectors": [{"profile": "p", "source": "pinecone"}]}, r"^mapping: vectors\.0: Input tag 'pinecone'"),
        (
            {"nodes": [{"label": "D", "node_type": "cdm.doc", "tags_property": "tags`) DETACH DELETE n //"}]},
            r"^mapping: nodes\.0\.tags_property: 'tags`\) DETACH DELETE n //' is not a name brain-graph reads",
        ),
        (
            {"nodes": [{"label": "D", "node_type": "cdm.doc", "updated_at_property": ""}]},
            r"^mapping: nodes\.0\.updated_at_property: String should have at least 1 character$",
        ),
        (
            {"nodes": [{"label": "D", "node_type": "cdm.doc", "updated_at_property": "t", "updated_at_unit": "days"}]},
            r"^mapping: nodes\.0\.updated_at_unit: Input should be 'seconds', 'milliseconds' or 'microseconds'$",
        ),
        (
            {"nodes": [{"label": "D", "node_type": "cdm.doc", "updated_at_unit": "seconds"}]},
            r"^mapping: nodes\.0: updated_at_unit needs updated_at_property",
        ),
        (
            {"nodes": [{"label": "D", "node_type": "cdm.doc", "namespace_property": ["team"]}]},
            r"^mapping: nodes\.0\.namespace_property: Input should be a valid string$",
        ),
        (
            {"nodes": [{"label": "D", "node_type": "cdm.doc", "path_property": "file\npath"}]},
            r"^mapping: nodes\.0\.path_property: 'file\\npath' is not a name brain-graph reads",
        ),
        (
            {"nodes": [{"label": "D", "node_type": "cdm.doc", "tag_property": "tags"}]},
            r"^mapping: nodes\.0\.tag_property: Extra inputs are not permitted$",
        ),
    ],
)
def test_a_bad_mapping_is_one_line_naming_the_key(change: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigurationError, match=message) as info:
        parse_mapping({**base(), **change})
    assert "\n" not in str(info.value)


def test_a_file_that_is_not_toml_or_missing_is_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("nodes = [", encoding="utf-8")
    with pytest.raises(ConfigurationError, match=r"^mapping bad\.toml: not valid TOML"):
        read_mapping(bad)
    with pytest.raises(ConfigurationError, match=r"^BRAIN_GRAPH_MAPPING '.*missing\.toml': "):
        read_mapping(tmp_path / "missing.toml")


def test_a_collection_must_keep_tenants_apart_when_the_tenant_is_a_property() -> None:
    source = {"profile": "p", "source": "weaviate", "collection": "C", "id_property": "id"}
    with pytest.raises(ConfigurationError, match=r"^mapping: vectors\.0: the tenant is a node property"):
        parse_mapping({**base(), "tenant": {"property": "org"}, "vectors": [source]})
    assert parse_mapping({**base(), "vectors": [source]}).vectors  # one fixed tenant: the whole collection is it


# -- ids: a property of strings or integers, or the element id; per label ---------------------------------


def ids_mapping(**extra: Any) -> dict[str, Any]:
    return {
        "tenant": {"fixed": "t"},
        "nodes": [
            {"label": "Chunk", "node_type": "cdm.doc", "id_property": "elementId()"},
            {"label": "Ticket", "node_type": "cdm.work_item", "id_property": "number", "id_type": "integer"},
            {"label": "Doc", "node_type": "cdm.doc"},
        ],
        **extra,
    }


def test_each_label_has_its_id() -> None:
    mapping = parse_mapping(ids_mapping(id_property="key"))
    assert mapping.id_of("Chunk") == ("elementId()", "string")
    assert mapping.id_of("Ticket") == ("number", "integer")
    assert mapping.id_of("Doc") == ("key", "string")


@pytest.mark.parametrize(
    ("data", "where"),
    [
        ({"id_property": "elementId()", "id_type": "integer"}, "id_type: element ids are strings"),
        ({"id_property": "elementId"}, None),  # a property that happens to be named so
        ({"id_property": "element`Id"}, "id_property: 'element`Id' is not a name brain-graph reads"),
        ({"id_type": "float"}, "id_type: Input should be 'string' or 'integer'"),
    ],
)
def test_id_settings_are_checked(data: dict[str, Any], where: str | None) -> None:
    if where is None:
        assert parse_mapping(ids_mapping(**data)).id_of("Doc") == (data["id_property"], "string")
        return
    with pytest.raises(ConfigurationError) as error:
        parse_mapping(ids_mapping(**data))
    assert where in str(error.value)


def test_ids_of_mixed_labels_are_read_by_the_first_mapped_label() -> None:
    from brain_graph.stores.mapped.cypher import MappedStatements

    statements = MappedStatements(parse_mapping(ids_mapping()))
    assert statements.node_id("n") == (
        "CASE WHEN n:`Chunk` THEN elementId(n) WHEN n:`Ticket` THEN toString(n.`number`) "
        "WHEN n:`Doc` THEN n.`id` ELSE null END"
    )
    seek = statements.seek("n", "$ids")
    assert "MATCH (n:`Chunk`) WHERE elementId(n) = soughtId" in seek
    # integer ids are sought only from their decimal form, as integers
    assert "UNWIND [x IN $ids WHERE toString(toInteger(x)) = x | toInteger(x)] AS soughtId" in seek
    # a node found by one label's id but named by another's is left out
    assert seek.endswith(f"WITH n WHERE {statements.node_id('n')} IN $ids ")
    uniform = MappedStatements(parse_mapping({"tenant": {"fixed": "t"}, "nodes": ids_mapping()["nodes"][2:]}))
    assert uniform.node_id("n") == "n.`id`"
    assert "IN $ids" not in uniform.seek("n", "$ids").split("}")[-1]


def test_untyped_acl_entries_get_their_kind() -> None:
    from brain_graph.stores.mapped.cypher import MappedStatements

    mapping = parse_mapping(
        ids_mapping(secured_property="secured", acl_user_property="readers", acl_group_property="teams")
    )
    statements = MappedStatements(mapping)
    assert "any(entry IN n.`readers` WHERE 'user:' + entry IN $identities)" in statements.visible("n")
    assert "any(entry IN n.`teams` WHERE 'group:' + entry IN $identities)" in statements.visible("n")
    assert statements.acl("n") == (
        "CASE WHEN n.`readers` IS :: LIST<STRING NOT NULL> NOT NULL THEN [entry IN n.`readers` | 'user:' + entry] "
        "ELSE [] END + CASE WHEN n.`teams` IS :: LIST<STRING NOT NULL> NOT NULL "
        "THEN [entry IN n.`teams` | 'group:' + entry] ELSE [] END"
    )


def test_a_type_property_maps_values_to_node_types() -> None:
    node = {"label": "Item", "node_type": "cdm.doc", "type_property": "kind", "types": {"ticket": "cdm.work_item"}}
    mapping = parse_mapping({"tenant": {"fixed": "t"}, "nodes": [node]})
    assert mapping.node_type_of("Item", {"kind": "ticket"}) == "cdm.work_item"
    assert mapping.node_type_of("Item", {"kind": "page"}) == "cdm.doc"
    assert mapping.node_type_of("Item", {"kind": 3}) == "cdm.doc"
    assert mapping.node_type_of("Item") == "cdm.doc"
    assert mapping.type_properties == ["kind"]
    untyped = {**node, "type_property": None}
    with pytest.raises(ConfigurationError, match=r"nodes\.0: types needs type_property"):
        parse_mapping({"tenant": {"fixed": "t"}, "nodes": [untyped]})


def test_graph_names_may_have_spaces_and_dashes_but_weaviate_names_are_identifiers() -> None:
    mapping = parse_mapping(
        {
            "tenant": {"property": "tenant id"},
            "id_property": "doc-id",
            "nodes": [{"label": "Work Item", "node_type": "cdm.work_item", "text": {"summary": "short text"}}],
            "edges": [{"type": "RELATES-TO", "as": "REFERENCES"}],
        }
    )
    assert mapping.labels == ["Work Item"]
    assert mapping.id_of("Work Item") == ("doc-id", "string")
    weaviate = {"profile": "p", "source": "weaviate", "collection": "Work Items", "id_property": "id"}
    with pytest.raises(ConfigurationError, match=r"vectors\.0\.weaviate\.collection: 'Work Items' is not a plain"):
        parse_mapping(
            {"tenant": {"fixed": "t"}, "nodes": [{"label": "A", "node_type": "cdm.doc"}], "vectors": [weaviate]}
        )


def test_the_facet_properties_of_a_label() -> None:
    node = {
        "label": "Page",
        "node_type": "cdm.doc",
        "tags_property": "keywords",
        "updated_at_property": "modified",
        "updated_at_unit": "milliseconds",
        "namespace_property": "team space",
        "path_property": "file-path",
    }
    (entry,) = parse_mapping({"tenant": {"fixed": "t"}, "nodes": [node]}).nodes
    assert (entry.tags_property, entry.updated_at_property, entry.updated_at_unit) == (
        "keywords",
        "modified",
        "milliseconds",
    )
    assert (entry.namespace_property, entry.path_property) == ("team space", "file-path")
    (bare,) = parse_mapping(base()).nodes
    assert (bare.tags_property, bare.updated_at_property, bare.namespace_property, bare.path_property) == (None,) * 4
