"""The facets of a mapped node: the Python side of :mod:`brain_graph.stores.mapped.facets` (the ISO
strings read, the parameters of a filter, the facets a record keeps) and the shape of the Cypher (names
quoted, values never in the text). The Cypher itself runs on the real server in
``tests/integration/test_mapped_filters.py``."""

from __future__ import annotations

from typing import Any

import pytest

from brain_graph.core.filters import SeedFilter, parse_timestamp
from brain_graph.stores.mapped.cypher import MappedStatements
from brain_graph.stores.mapped.facets import MappedFacets, read_iso, record_facets
from brain_graph.stores.mapped.mapping import parse_mapping


def mapping(**node: Any) -> Any:
    return parse_mapping(
        {
            "tenant": {"fixed": "t"},
            "nodes": [
                {"label": "Odd Label-1", "node_type": "cdm.doc", **node},
                {"label": "Item", "node_type": "cdm.doc", "type_property": "kind", "types": {"t": "cdm.work_item"}},
            ],
            "clusters": {"label": "Topic", "membership": "IN"},
        }
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2024-09-01", "2024-09-01"),
        ("2024-09-01T12:00", "2024-09-01T12:00"),
        ("2024-09-01 12:00:00.1234567+05:30", "2024-09-01T12:00:00.1234567+05:30"),
        (" 2024-09-01T12:00:00Z\t", "2024-09-01T12:00:00Z"),
        ("2024-09-01T12", None),  # parse_timestamp reads it; the form searches read does not
        ("20240901", None),
        ("2024-W36-1", None),
        ("2024-02-30", None),
        ("2024-09-01T12:00+24:00", None),
        ("2024-09-01T12:00:00.", None),
        ("last tuesday", None),
        ("2024-09-01" + " " * 60, None),  # longer than parse_timestamp reads
    ],
)
def test_the_iso_strings_read_are_parse_timestamps_of_one_form(text: str, expected: str | None) -> None:
    assert read_iso(text) == (parse_timestamp(expected) if expected is not None else None)


def test_filter_values_are_kept_only_when_they_are_their_own_fold() -> None:
    facets = MappedFacets(mapping(tags_property="tags"))
    params = facets.params(SeedFilter(project_key="P", tags=("payments", "Ꭰ", "ǰ"), namespaces=("api",)))
    assert params["filter"] == {
        "nodeTypes": None,
        "namespaces": ["api"],
        "tags": ["payments", "Ꭰ"],  # "ǰ" folds to another string, and no node's folded tag is it
        "updatedAfter": None,
    }
    assert params["nodeTyping"] == [
        {"default": "cdm.doc", "types": {}},
        {"default": "cdm.doc", "types": {"t": "cdm.work_item"}},
        {"default": "kg.cluster", "types": {}},
    ]
    narrowed = facets.params(SeedFilter(node_types=("cdm.doc",), updated_after=0, tags=("ǰ",)))["filter"]
    assert narrowed == {"nodeTypes": ["cdm.doc"], "namespaces": None, "tags": [], "updatedAfter": 0}


def test_a_record_keeps_the_facets_that_are_their_own_fold() -> None:
    read = {"namespace": "api", "tags": ["ops", "ǰ", "ops", "", 3], "updatedAt": 5}
    assert record_facets(read) == ("api", ("ops",), 5)
    assert record_facets({"namespace": None, "tags": None, "updatedAt": None}) == ("", (), None)
    assert record_facets({"namespace": "ǰ", "tags": [], "updatedAt": 1.5}) == ("", (), None)


def test_the_cypher_quotes_the_mappings_names_and_holds_no_value() -> None:
    statements = MappedStatements(
        mapping(tags_property="my tags", updated_at_property="up-dated", namespace_property="ns", path_property="p")
    )
    candidates = statements.candidates()
    assert "`Odd Label-1`" in candidates
    assert "n.`my tags`" in candidates
    assert "n.`up-dated`" in candidates
    assert "$filter.tags" in candidates
    assert "$nodeTyping[1].types" in candidates  # the types map travels as a parameter
    assert "cdm.work_item" not in candidates
    assert "cdm.doc" not in candidates
    # the mapped labels are read in order for an untimed node, until the first one; the predicate once
    untimed = statements.untimed_node()
    assert "MATCH (n:`Odd Label-1`) RETURN n UNION ALL MATCH (n:`Item`) RETURN n UNION ALL MATCH (n:`Topic`)" in untimed
    assert untimed.count("LIMIT 1") == 1
    assert untimed.count("bgHit IN $filter.tags") == 1
    assert candidates.count("bgHit IN $filter.tags") == 2  # the candidates' predicate once, the untimed node's once


def test_labels_without_facet_properties_have_none() -> None:
    facets = MappedFacets(parse_mapping({"tenant": {"fixed": "t"}, "nodes": [{"label": "D", "node_type": "cdm.doc"}]}))
    assert facets.tags("n") == "[]"
    assert facets.namespace("n") == "null"
    assert facets.updated_at("n") == "null"
    assert facets.node_type("n") == "$nodeTyping[0].default"
