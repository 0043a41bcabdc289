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
        ({"id_property": "key`) DETACH DELETE n //"}, r"^mapping: id_property: 'key.*' is not a plain identifier"),
        ({"nodes": [{"label": "Doc Node", "node_type": "cdm.doc"}]}, r"^mapping: nodes\.0\.label: 'Doc Node' is not"),
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
