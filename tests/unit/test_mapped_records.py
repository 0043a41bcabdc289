"""What the mapped backend takes of a foreign node: only values brain-graph would have loaded, so data
it did not write can never put a forged line, link or identity into a pack."""

from __future__ import annotations

from typing import Any, cast

import pytest

from brain_graph.stores.mapped.graph import MappedGraph
from brain_graph.stores.mapped.mapping import parse_mapping
from brain_graph.stores.neo4j_weaviate.neo4j.client import Neo4jClient

MAPPING = parse_mapping(
    {
        "tenant": {"property": "org"},
        "nodes": [{"label": "Doc", "node_type": "cdm.doc"}, {"label": "Ticket", "node_type": "cdm.work_item"}],
        "clusters": {"label": "Topic", "membership": "IN_TOPIC"},
        "properties": ["status", "tags"],
    }
)
GRAPH = MappedGraph(cast(Neo4jClient, object()), MAPPING)  # record() reads nothing


def meta(**changes: Any) -> dict[str, Any]:
    base = {
        "id": "d1",
        "labels": ["Ticket", "Doc"],
        "project": "AUTH",
        "title": "A title",
        "url": "https://example.com/d1",
        "secured": False,
        "acl": [],
        "properties": {"status": "open", "tags": ["a", "b"]},
    }
    return {**base, **changes}


def test_a_node_reads_as_its_first_mapped_label() -> None:
    record = GRAPH.record(meta(), "acme")
    assert record is not None
    assert (record.node_id, record.node_type, record.title, record.url) == (
        "d1",
        "cdm.doc",
        "A title",
        "https://example.com/d1",
    )
    assert dict(record.properties) == {"status": "open", "tags": ["a", "b"]}


@pytest.mark.parametrize("node_id", ["a\nb", "a\u202eb", "  ", "", 42, None, "x" * 600])
def test_an_id_brain_graph_could_not_print_safely_is_no_node(node_id: Any) -> None:
    assert GRAPH.record(meta(id=node_id), "acme") is None


@pytest.mark.parametrize(
    ("changes", "field", "expected"),
    [
        ({"url": "javascript:alert(1)"}, "url", None),
        ({"url": "/relative"}, "url", None),
        ({"title": 12}, "title", None),
        ({"project": "AUTH\n# forged"}, "project_key", None),
        ({"secured": "false"}, "secured", True),  # anything but false or absent is secured: fail closed
        ({"secured": None}, "secured", False),
        ({"acl": ["group:security", 3, None]}, "acl", ("group:security",)),
        ({"acl": "group:security"}, "acl", ()),
        ({"properties": {"status": float("nan"), "tags": [["nested"]]}}, "properties", {}),
    ],
)
def test_values_brain_graph_would_not_load_are_left_out(changes: dict[str, Any], field: str, expected: Any) -> None:
    record = GRAPH.record(meta(**changes), "acme")
    assert record is not None
    value = getattr(record, field)
    assert (dict(value) if field == "properties" else value) == expected


def test_an_unmapped_label_is_no_node() -> None:
    assert GRAPH.record(meta(labels=["Person"]), "acme") is None
    cluster = GRAPH.record(meta(labels=["Topic"]), "acme")
    assert cluster is not None
    assert cluster.node_type == "kg.cluster"
