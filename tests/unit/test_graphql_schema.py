"""The committed SDL (brain_graph/serving/graphql/schema.graphql) against the code: it is the printed form of
the executable schema, and every GraphQL type matches the pydantic contract the graph's output is
validated with, field for field (name, list, nullability, scalar, input defaults)."""

from __future__ import annotations

import types
import typing
from typing import Any, Literal, get_args, get_origin

import pytest
from graphql import (
    GraphQLEnumType,
    GraphQLInputObjectType,
    GraphQLList,
    GraphQLNonNull,
    GraphQLObjectType,
    GraphQLScalarType,
    print_schema,
    value_from_ast_untyped,
)
from pydantic import BaseModel, JsonValue

from brain_graph.core import contracts
from brain_graph.serving.graphql import SCHEMA_PATH, build_schema

SCHEMA = build_schema()
SCALARS: dict[Any, set[str]] = {str: {"String", "ID"}, int: {"Int"}, float: {"Float"}, bool: {"Boolean"}}
# GraphQL types whose JSON-typed fields hold a list of contract objects (the seed's `citations: JSON!`).
JSON_FIELDS = {("BrainPromptPack", "citations")}


def test_the_committed_sdl_is_the_printed_schema() -> None:
    assert SCHEMA_PATH.read_text(encoding="utf-8") == print_schema(SCHEMA) + "\n"


def _describe_annotation(annotation: Any) -> tuple[bool, bool, Any]:
    """(nullable, is_list, inner type) of a pydantic field annotation."""
    nullable = False
    origin = get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        members = [arg for arg in get_args(annotation) if arg is not type(None)]
        nullable = len(members) < len(get_args(annotation))
        annotation = members[0] if len(members) == 1 else annotation
        origin = get_origin(annotation)
    if origin is list:
        return nullable, True, get_args(annotation)[0]
    return nullable, False, annotation


def _describe_graphql(field_type: Any) -> tuple[bool, bool, Any, bool]:
    """(nullable, is_list, named type, items nullable) of a GraphQL field type."""
    nullable = not isinstance(field_type, GraphQLNonNull)
    inner = field_type.of_type if isinstance(field_type, GraphQLNonNull) else field_type
    if isinstance(inner, GraphQLList):
        item = inner.of_type
        return nullable, True, getattr(item, "of_type", item), not isinstance(item, GraphQLNonNull)
    return nullable, False, inner, False


def _contract_models() -> dict[str, type[BaseModel]]:
    return {
        name: model
        for name, model in vars(contracts).items()
        if isinstance(model, type) and issubclass(model, contracts.WireModel) and name.startswith("Brain")
    }


GRAPHQL_TYPES = sorted(
    name
    for name, graphql_type in SCHEMA.type_map.items()
    if isinstance(graphql_type, GraphQLObjectType | GraphQLInputObjectType) and name.startswith("Brain")
)


def test_every_graphql_type_has_a_contract() -> None:
    assert set(GRAPHQL_TYPES) <= set(_contract_models())
    assert "BrainSearchCandidate" in GRAPHQL_TYPES  # additive fields of the graph-aware context are served


@pytest.mark.parametrize("name", GRAPHQL_TYPES)
def test_graphql_fields_match_the_contract(name: str) -> None:
    graphql_type = SCHEMA.type_map[name]
    model = _contract_models()[name]
    contract_fields = {field.alias or key: field for key, field in model.model_fields.items()}
    assert set(graphql_type.fields) == set(contract_fields), name  # type: ignore[attr-defined]
    for field_name, graphql_field in graphql_type.fields.items():  # type: ignore[attr-defined]
        field = contract_fields[field_name]
        gql_nullable, gql_list, gql_named, items_nullable = _describe_graphql(graphql_field.type)
        nullable, is_list, inner = _describe_annotation(field.annotation)
        where = f"{name}.{field_name}"
        if isinstance(gql_named, GraphQLScalarType) and gql_named.name == "JSON":
            assert (name, field_name) in JSON_FIELDS or inner is JsonValue or get_origin(inner) is dict, where
            continue
        if isinstance(graphql_type, GraphQLInputObjectType):
            assert gql_nullable == (not field.is_required()), where  # optional input <=> has a default
        else:
            assert gql_nullable == nullable, where
        assert gql_list == is_list, where
        if is_list:
            assert not items_nullable, where
        if isinstance(inner, type) and issubclass(inner, BaseModel):
            assert gql_named.name == inner.__name__, where
        elif get_origin(inner) is Literal:
            assert gql_named.name == "String", where
        else:
            assert isinstance(gql_named, GraphQLScalarType | GraphQLEnumType), where
            assert gql_named.name in SCALARS[inner], where
        if isinstance(graphql_type, GraphQLInputObjectType) and not field.is_required():
            assert _graphql_default(graphql_field) == field.get_default(call_default_factory=True), where


def _graphql_default(field: Any) -> Any:
    """The SDL default of an input field (``None`` without one)."""
    default = field.default
    if default is None:
        return None
    return value_from_ast_untyped(default.literal) if default.literal is not None else default.value
