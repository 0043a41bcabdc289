"""Pure naming rules of the server backend: Weaviate tenant/collection names, Cypher edge types."""

from __future__ import annotations

import re

import pytest

from brain_graph.core.errors import ConfigurationError
from brain_graph.stores.neo4j_weaviate.neo4j.cypher import merge_edges
from brain_graph.stores.neo4j_weaviate.weaviate.naming import (
    collection_name,
    legacy_tenant_name,
    object_uuid,
    split_tenant_name,
    tenant_id_of,
    tenant_name,
)

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
    "x" * 40,
    "x" * 41,
    "x" * 64,
    "x" * 65,
    "a_g1",
    "a_5fg1",
    "g1",
    "_g",
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
    assert tenant_name("x" * 40) == "x" * 40
    assert tenant_name("x" * 41).startswith("__")
    assert len(tenant_name("x" * 41)) == 40


GENERATIONS = [1, 2, 10, 12, 10**18, 10**19 - 1]


def test_generation_names_are_valid_injective_and_parse_back() -> None:
    pairs = [(tenant, generation) for tenant in TRICKY_TENANTS for generation in GENERATIONS]
    names = [tenant_name(tenant, generation) for tenant, generation in pairs]
    assert all(WEAVIATE_TENANT.match(name) for name in names), [n for n in names if not WEAVIATE_TENANT.match(n)]
    assert len(set(names)) == len(pairs)
    for (tenant, generation), name in zip(pairs, names, strict=True):
        assert split_tenant_name(name) == (tenant_name(tenant), generation)
        base = tenant_name(tenant)
        assert tenant_id_of(base) == (tenant if not base.startswith("__") else base)
    # a generation name is never a base name nor a name from before generations
    bases = {tenant_name(t) for t in TRICKY_TENANTS} | {legacy_tenant_name(t) for t in TRICKY_TENANTS}
    assert bases.isdisjoint(names)
    assert all(split_tenant_name(base) == (base, None) for base in bases)
    assert tenant_name("a_b", 7) == "a_5fb_g7"
    for bad in (0, -1, 10**19):
        with pytest.raises(ValueError, match="generation"):
            tenant_name("acme", bad)


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
