"""Pure naming rules of the server backend: Weaviate tenant/collection names, Cypher edge types."""

from __future__ import annotations

import re

import pytest

from brain_graph.errors import ConfigurationError
from brain_graph.stores.cypher import merge_edges
from brain_graph.stores.weaviate_index import collection_name, object_uuid, tenant_name

WEAVIATE_TENANT = re.compile(r"^[A-Za-z0-9\-_]{1,64}$")
WEAVIATE_CLASS = re.compile(r"^[A-Z][_0-9A-Za-z]*$")
TRICKY_TENANTS = [
    "acme",
    "Acme",
    "a_b",
    "a_5fb",
    "a.b",
    "a-b",
    "a b",
    "ünïcode",
    "租户",
    "x" * 64,
    "x" * 65,
    "y" * 200,
    "_",
    "__",
    "a/../b",
]


def test_tenant_names_are_valid_deterministic_and_injective() -> None:
    names = [tenant_name(t) for t in TRICKY_TENANTS]
    assert all(WEAVIATE_TENANT.match(name) for name in names), names
    assert len(set(names)) == len(TRICKY_TENANTS)
    assert [tenant_name(t) for t in TRICKY_TENANTS] == names
    assert tenant_name("acme") == "acme"
    assert tenant_name("a_b") == "a_5fb"
    assert tenant_name("a.b") == "a_2eb"
    assert tenant_name("x" * 64) == "x" * 64
    assert tenant_name("x" * 65).startswith("__")


def test_collection_names_are_valid_and_distinct() -> None:
    ids = ["cdm.work.summary", "cdm.work_summary", "cdm_work.summary", "CDM.work.summary", "x" * 300]
    names = [collection_name(p) for p in ids]
    assert all(WEAVIATE_CLASS.match(name) for name in names), names
    assert len(set(names)) == len(ids)
    assert collection_name("cdm.work.summary").startswith("BrainGraph_cdm_work_summary_")


def test_object_ids_are_deterministic_and_distinct() -> None:
    assert object_uuid("t", "p", "n") == object_uuid("t", "p", "n")
    assert len({object_uuid("t", "p", "n"), object_uuid("t", "p", "n2"), object_uuid("t2", "p", "n")}) == 3
    assert object_uuid("a", "b,c", "d") != object_uuid("a,b", "c", "d")


@pytest.mark.parametrize("edge_type", ["REFERENCES]->(x) DETACH DELETE x //", "lower", "A-B", "`X`", ""])
def test_edge_types_are_validated_before_interpolation(edge_type: str) -> None:
    with pytest.raises(ConfigurationError):
        merge_edges(edge_type)
    assert "MERGE (a)-[r:`HAS_SIGNAL`]->(b)" in merge_edges("HAS_SIGNAL")
