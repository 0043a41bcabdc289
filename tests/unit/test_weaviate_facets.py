"""Seed filters on Weaviate without a server: the facet filters (:mod:`.weaviate.facets`), the untimed
check's request and its re-check (:mod:`.weaviate.untimed`). The GraphQL the check sends is parsed
back with graphql-core, so every value it carries is the one the filter holds."""

from __future__ import annotations

import time
from typing import Any

import pytest
from graphql import parse
from graphql.language import ObjectValueNode, StringValueNode
from weaviate.proto.v1 import base_pb2

from brain_graph.core.errors import BackendUnavailableError
from brain_graph.core.filters import NodeFacets, SeedFilter
from brain_graph.core.security import AccessScope
from brain_graph.stores.neo4j_weaviate.weaviate.facets import (
    exact_values,
    facet_parts,
    facet_properties,
    stored_facets,
)
from brain_graph.stores.neo4j_weaviate.weaviate.naming import collection_name
from brain_graph.stores.neo4j_weaviate.weaviate.schema import FACETS, ProfileCache
from brain_graph.stores.neo4j_weaviate.weaviate.untimed import (
    UntimedTarget,
    UntimedUnavailableError,
    graphql_where,
    untimed_document,
    untimed_found,
    untimed_targets,
)

NEW, OLD = "p.new", "p.old"
FAR = 253_402_300_799_999_999  # 9999-12-31T23:59:59.999999Z: beyond what a float64 holds exactly


def cache() -> ProfileCache:
    """A collection with the facet properties (NEW) and one created before them (OLD)."""
    return ProfileCache(
        {}, {collection_name(NEW), collection_name(OLD)}, time.monotonic(), {collection_name(OLD): set(FACETS)}
    )


def test_facets_are_written_and_read_back_unchanged() -> None:
    for facets in (
        NodeFacets(),
        NodeFacets("cdm.doc", "billing", ("ops", "\u00e9t\u00e9"), FAR),
        NodeFacets("code.file", None, (), -62_135_596_800_000_000),
    ):
        written = facet_properties(facets)
        assert written["timed"] is (facets.updated_at is not None)
        assert stored_facets(written) == facets
    assert stored_facets({"nodeId": "n", "acl": []}) == NodeFacets()  # written before the facet properties


def test_filter_values_are_those_a_stored_facet_can_equal() -> None:
    assert exact_values(["ops", "", " ops", "ops ", "ops", "a b"]) == ["ops", "a b"]
    assert facet_parts(SeedFilter(tags=(" ops", ""))) is None  # nothing can match
    assert facet_parts(SeedFilter()) == []
    assert facet_parts(SeedFilter(project_key="P")) == []  # the project is a part of its own


def test_the_recency_part_compares_the_cutoff_as_weaviate_keeps_it() -> None:
    (part,) = facet_parts(SeedFilter(updated_after=FAR)) or []
    assert part.operator == base_pb2.Filters.OPERATOR_GREATER_THAN_EQUAL
    assert part.value_int == int(float(FAR)) != FAR
    assert int(float(FAR - 1)) >= part.value_int  # an object just before the cutoff may pass: re-checked
    (small,) = facet_parts(SeedFilter(updated_after=1_767_225_600_000_001)) or []
    assert small.value_int == 1_767_225_600_000_001  # exact within 2**53
    assert facet_parts(SeedFilter(updated_after=FAR), recency=False) == []


def where_of(rendered: str) -> Any:
    """The ``where`` argument of a one-field GraphQL query holding ``rendered`` (parsed by graphql-core)."""
    document = parse("{ Get { C(where: " + rendered + ") { x } } }")
    field = document.definitions[0].selection_set.selections[0].selection_set.selections[0]  # type: ignore[attr-defined]
    return field.arguments[0].value


def plain(node: Any) -> Any:
    """A parsed GraphQL value as Python values (enum values as their names)."""
    if isinstance(node, ObjectValueNode):
        return {item.name.value: plain(item.value) for item in node.fields}
    if isinstance(node, StringValueNode):
        return node.value
    if hasattr(node, "values"):
        return [plain(value) for value in node.values]
    return node.value


HOSTILE = ['a"b', "back\\slash\\", "new\nline", "}) { injected }", "\u00e9t\u00e9 \U0001f600", "\u2028"]


def test_the_untimed_where_carries_every_value_exactly() -> None:
    scope = AccessScope("t", identities=frozenset({'user:a"lice\\'}))
    seed_filter = SeedFilter(project_key='P"}', tags=tuple(HOSTILE), namespaces=("x",), updated_after=0)
    (target,) = untimed_targets([NEW], cache(), scope, seed_filter)
    where = plain(where_of(graphql_where(target.where)))
    assert where["operator"] == "And"
    operands = {tuple(operand.get("path", ())): operand for operand in where["operands"]}
    assert operands[("projectKey",)] == {"path": ["projectKey"], "operator": "Equal", "valueText": 'P"}'}
    assert operands[("tags",)]["valueText"] == [value for value in HOSTILE if value == value.strip()]
    assert operands[("namespace",)]["operator"] == "ContainsAny"
    assert operands[("timed",)] == {"path": ["timed"], "operator": "NotEqual", "valueBoolean": True}
    (access,) = [operand for operand in where["operands"] if operand.get("operator") == "Or"]
    assert access["operands"][1]["valueText"] == ['user:a"lice\\']


def test_the_untimed_document_asks_one_object_per_collection() -> None:
    targets = untimed_targets([NEW, OLD, NEW, "p.missing"], cache(), AccessScope("t"), SeedFilter(updated_after=5))
    assert [target.collection for target in targets] == [collection_name(NEW), collection_name(OLD)]
    assert "timed" not in graphql_where(targets[1].where)  # objects without facets: no update time
    assert targets[1].fields == ("tenantId", "secured", "acl", "projectKey")
    document = parse(untimed_document(targets, 'tenant "x"'))
    fields = document.definitions[0].selection_set.selections[0].selection_set.selections  # type: ignore[attr-defined]
    assert [(field.alias.value, field.name.value) for field in fields] == [
        ("u0", collection_name(NEW)),
        ("u1", collection_name(OLD)),
    ]
    assert plain(fields[0].arguments[0].value) == 'tenant "x"'
    assert {argument.name.value: plain(argument.value) for argument in fields[1].arguments}["limit"] == "1"


def test_without_a_recency_part_or_with_a_facet_part_old_collections_are_not_asked() -> None:
    assert untimed_targets([NEW], cache(), AccessScope("t"), SeedFilter(tags=("ops",))) == []
    faceted = untimed_targets([NEW, OLD], cache(), AccessScope("t"), SeedFilter(tags=("ops",), updated_after=5))
    assert [target.collection for target in faceted] == [collection_name(NEW)]


def found(objects: list[dict[str, Any]], seed_filter: SeedFilter, scope: AccessScope | None = None) -> bool:
    target = UntimedTarget("C", None, ())
    return untimed_found([target], scope or AccessScope("t"), seed_filter, {"u0": objects}, None)


def test_an_untimed_object_is_re_checked_in_python() -> None:
    recency = SeedFilter(updated_after=5)
    untimed = {"tenantId": "t", "secured": False, "acl": [], "projectKey": "P", "nodeType": "cdm.doc"}
    assert found([untimed], recency)
    assert found([{"tenantId": "t", "secured": False}], recency)  # written before facets: NodeFacets()
    assert not found([{**untimed, "tenantId": "other"}], recency)
    assert not found([{**untimed, "secured": True, "acl": ["user:a"]}], recency)
    assert found([{**untimed, "secured": True, "acl": ["user:a"]}], recency, AccessScope("t", frozenset({"user:a"})))
    assert not found([{**untimed, "updatedAtExact": "7"}], recency)
    assert not found([untimed], SeedFilter(project_key="Q", updated_after=5))
    assert not found([untimed], SeedFilter(node_types=("cdm.page",), updated_after=5))
    assert not found([], recency)


def test_missing_tenants_have_no_objects_and_other_errors_are_raised() -> None:
    target = UntimedTarget("C", None, ())
    missing = [{"message": 'explorer: tenant not found: "t_g1"', "path": ["Get", "u0"]}]
    assert not untimed_found([target], AccessScope("t"), SeedFilter(updated_after=5), {"u0": None}, missing)
    stale = [{"message": 'Cannot query field "nodeType" on type "C".', "path": None}]
    with pytest.raises(UntimedUnavailableError):
        untimed_found([target], AccessScope("t"), SeedFilter(updated_after=5), {}, stale)
    with pytest.raises(BackendUnavailableError, match="untimed check"):
        untimed_found([target], AccessScope("t"), SeedFilter(updated_after=5), {}, [{"message": "boom", "path": None}])


def test_filters_that_graphql_does_not_render_are_refused() -> None:
    ranged = base_pb2.Filters(
        operator=base_pb2.Filters.OPERATOR_GREATER_THAN_EQUAL,
        target=base_pb2.FilterTarget(property="updatedAt"),
        value_int=5,
    )
    with pytest.raises(ValueError, match="operator"):
        graphql_where(ranged)
    odd_name = base_pb2.Filters(
        operator=base_pb2.Filters.OPERATOR_EQUAL, target=base_pb2.FilterTarget(property='x"]'), value_text="v"
    )
    with pytest.raises(ValueError, match="property"):
        graphql_where(odd_name)
