"""The committed SDL (brain_graph/serving/graphql/schema.graphql) is the one the server serves and the one
derived from the pydantic contracts: it is the printed form of the executable schema and what
scripts/generate_wire.py writes. The derivation serves every model the query reaches, in its fields'
order, with the models' defaults and descriptions."""

from __future__ import annotations

from typing import Any, get_args, get_origin

from graphql import (
    GraphQLInputObjectType,
    GraphQLNamedType,
    GraphQLObjectType,
    print_schema,
    value_from_ast_untyped,
)
from pydantic import BaseModel

from brain_graph.core.contracts import BrainSearchOptionsInput, BrainSearchRequest, BrainSearchResult, GraphQL
from brain_graph.serving.graphql import SCHEMA_PATH, build_schema
from brain_graph.serving.graphql.sdl import INPUT_TYPES, OUTPUT_TYPES, render_sdl, sdl_schema

SCHEMA = build_schema()


def test_the_committed_sdl_is_the_printed_schema() -> None:
    assert SCHEMA_PATH.read_text(encoding="utf-8") == print_schema(SCHEMA) + "\n"


def test_the_committed_sdl_is_what_the_generator_writes() -> None:
    assert SCHEMA_PATH.read_text(encoding="utf-8") == render_sdl(), "run scripts/generate_wire.py"


def _reached(model: type[BaseModel], found: list[type[BaseModel]]) -> list[type[BaseModel]]:
    """``model`` and the models its fields reach, except through a field served as one JSON value."""
    if model not in found:
        found.append(model)
        for field in model.model_fields.values():
            if any(isinstance(mark, GraphQL) and mark.type == "JSON" for mark in field.metadata):
                continue
            for nested in _models(field.annotation):
                _reached(nested, found)
    return found


def _models(annotation: Any) -> list[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [model for arg in get_args(annotation) for model in _models(arg)] if get_origin(annotation) else []


def test_the_served_types_are_the_models_the_query_reaches() -> None:
    arguments = [model for field in BrainSearchRequest.model_fields.values() for model in _models(field.annotation)]
    assert set(INPUT_TYPES) == set(arguments)
    assert set(OUTPUT_TYPES) == set(_reached(BrainSearchResult, []))
    served = {name for name, graphql_type in SCHEMA.type_map.items() if name.startswith("Brain")}
    assert served == {model.__name__ for model in (*INPUT_TYPES, *OUTPUT_TYPES)}


def test_each_served_type_has_its_models_fields_in_order() -> None:
    schema = sdl_schema()
    for model in (*INPUT_TYPES, *OUTPUT_TYPES):
        graphql_type: GraphQLNamedType = schema.type_map[model.__name__]
        assert isinstance(graphql_type, GraphQLInputObjectType | GraphQLObjectType)
        assert list(graphql_type.fields) == [field.alias or name for name, field in model.model_fields.items()]
        assert graphql_type.description == (model.__doc__ or "").strip()


def test_the_served_option_defaults_are_the_models() -> None:
    options = SCHEMA.type_map["BrainSearchOptionsInput"]
    assert isinstance(options, GraphQLInputObjectType)
    defaults = {
        name: value_from_ast_untyped(field.ast_node.default_value)
        for name, field in options.fields.items()
        if field.ast_node is not None and field.ast_node.default_value is not None
    }
    assert defaults == {key: value for key, value in BrainSearchOptionsInput().to_wire().items() if value is not None}
