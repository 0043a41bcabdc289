"""The GraphQL SDL of ``brainSearch``, derived from the wire contracts (:mod:`brain_graph.core.contracts`).

:func:`render_sdl` builds the schema with graphql-core from the models and prints it. Each model of
:data:`INPUT_TYPES` and :data:`OUTPUT_TYPES` is a type described by the model's docstring, with the
model's fields by their camelCase names, typed and described as
:class:`~brain_graph.core.contracts.GraphQL` says; an input field's default is the model's.
``brainSearch`` takes the fields of :class:`~brain_graph.core.contracts.BrainSearchRequest` as its
arguments and returns a :class:`~brain_graph.core.contracts.BrainSearchResult`.

``scripts/generate_wire.py`` writes it to ``schema.graphql``, the file the server loads
(:mod:`.schema`), and a test checks the committed file is what it prints: the served schema changes
only with a reviewed change of that file.
"""

from __future__ import annotations

import inspect
import types
import typing
from collections.abc import Callable, Iterable
from typing import Annotated, Any, Literal, cast, get_args, get_origin

from graphql import (
    GraphQLArgument,
    GraphQLBoolean,
    GraphQLField,
    GraphQLFloat,
    GraphQLID,
    GraphQLInputField,
    GraphQLInputObjectType,
    GraphQLInputType,
    GraphQLInt,
    GraphQLList,
    GraphQLNamedType,
    GraphQLNonNull,
    GraphQLNullableType,
    GraphQLObjectType,
    GraphQLOutputType,
    GraphQLScalarType,
    GraphQLSchema,
    GraphQLString,
    GraphQLType,
    Undefined,
    print_schema,
)
from pydantic import BaseModel
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from brain_graph.core.contracts import (
    BrainCandidateSupport,
    BrainCandidateVia,
    BrainFiltersApplied,
    BrainGraphEdge,
    BrainGraphNode,
    BrainPromptPack,
    BrainRagPassage,
    BrainScoringBreakdown,
    BrainSearchCandidate,
    BrainSearchEpisode,
    BrainSearchFilterInput,
    BrainSearchHit,
    BrainSearchOptionsInput,
    BrainSearchRequest,
    BrainSearchResult,
    BrainSearchWarning,
    GraphQL,
)

QUERY_FIELD = "brainSearch"
QUERY_DESCRIPTION = "Deterministic GraphRAG search: vector hits, graph expansion, episodes, passages and a prompt pack."
JSON_DESCRIPTION = "Any JSON value (node and edge properties, citations)."
INPUT_TYPES: tuple[type[BaseModel], ...] = (BrainSearchFilterInput, BrainSearchOptionsInput)
# The models served as GraphQL types, in the order the SDL prints them (after the JSON scalar): the inputs
# of the arguments, then every model the result reaches, except through a field served as JSON.
OUTPUT_TYPES: tuple[type[BaseModel], ...] = (
    BrainSearchHit,
    BrainGraphNode,
    BrainGraphEdge,
    BrainSearchEpisode,
    BrainRagPassage,
    BrainPromptPack,
    BrainCandidateVia,
    BrainCandidateSupport,
    BrainScoringBreakdown,
    BrainSearchCandidate,
    BrainFiltersApplied,
    BrainSearchWarning,
    BrainSearchResult,
)
_Named = GraphQLScalarType | GraphQLInputObjectType | GraphQLObjectType
_SCALARS: dict[Any, GraphQLScalarType] = {
    str: GraphQLString,
    int: GraphQLInt,
    float: GraphQLFloat,
    bool: GraphQLBoolean,
}


def _graphql_marks(metadata: Iterable[Any]) -> GraphQL:
    """The :class:`GraphQL` annotations among ``metadata``, merged (a later one wins field by field)."""
    merged = GraphQL()
    for mark in metadata:
        if isinstance(mark, GraphQL):
            merged = GraphQL(
                type=mark.type if mark.type is not None else merged.type,
                nullable=mark.nullable if mark.nullable is not None else merged.nullable,
                description=mark.description if mark.description is not None else merged.description,
            )
    return merged


def _nullable(annotation: Any) -> tuple[bool, Any]:
    """Whether ``annotation`` allows None, and the annotation without it."""
    if get_origin(annotation) in (typing.Union, types.UnionType):
        members = [arg for arg in get_args(annotation) if arg is not type(None)]
        if len(members) == 1:
            return len(members) < len(get_args(annotation)), members[0]
        raise TypeError(f"no GraphQL type for the union {annotation!r}")
    return False, annotation


def _values(annotation: Any) -> str:
    """``a, b or c.``: the values of a ``Literal``."""
    values = [str(value) for value in get_args(annotation)]
    return f"{', '.join(values[:-1])} or {values[-1]}." if len(values) > 1 else f"{values[0]}."


class _Builder:
    """The graphql-core types of the served models."""

    def __init__(self) -> None:
        self.json = GraphQLScalarType("JSON", description=JSON_DESCRIPTION)
        self.by_name: dict[str, GraphQLScalarType] = {"ID": GraphQLID, "JSON": self.json}  # GraphQL(type=...)
        self.inputs = {
            model: GraphQLInputObjectType(model.__name__, self._input_fields(model), description=_doc(model))
            for model in INPUT_TYPES
        }
        self.outputs = {
            model: GraphQLObjectType(model.__name__, self._output_fields(model), description=_doc(model))
            for model in OUTPUT_TYPES
        }

    def named_type(self, annotation: Any) -> _Named:
        """The GraphQL type of a value that is neither None nor a list."""
        marks = GraphQL()
        if get_origin(annotation) is Annotated:
            marks = _graphql_marks(annotation.__metadata__)
            annotation = get_args(annotation)[0]
        if marks.type is not None:
            return self.by_name[marks.type]
        if get_origin(annotation) is Literal:
            return GraphQLString
        if get_origin(annotation) is dict:
            return self.json
        if annotation in _SCALARS:
            return _SCALARS[annotation]
        served = self.inputs.get(annotation) or self.outputs.get(annotation)
        if served is None:
            raise TypeError(f"no GraphQL type for {annotation!r} (a model missing from OUTPUT_TYPES?)")
        return served

    def field_type(self, field: FieldInfo, *, is_input: bool) -> tuple[GraphQLType, str | None]:
        """The GraphQL type of a model field (of an input field or argument: nullable when it has a
        default) and its description, if any."""
        marks = _graphql_marks(field.metadata)
        optional, annotation = _nullable(field.annotation)
        nullable = not field.is_required() if is_input else optional
        if marks.nullable is not None:
            nullable = marks.nullable
        description = marks.description if marks.description is not None else field.description
        graphql_type: GraphQLNullableType
        if marks.type is not None:  # the whole value is one value of the named type
            graphql_type = self.by_name[marks.type]
            if get_origin(annotation) is list:  # a list of models served as one JSON value
                fields = f"[{{{', '.join(_aliases(get_args(annotation)[0]))}}}]"
                description = f"{fields} {description}" if description else fields
        elif get_origin(annotation) is list:
            graphql_type = GraphQLList(GraphQLNonNull(self.named_type(get_args(annotation)[0])))
        else:
            graphql_type = self.named_type(annotation)
            if description is None and get_origin(annotation) is Literal:
                description = _values(annotation)
        return (graphql_type if nullable else GraphQLNonNull(graphql_type)), description or None

    def _input_fields(self, model: type[BaseModel]) -> Callable[[], dict[str, GraphQLInputField]]:
        """The fields of an input type, built once every type exists."""

        def fields() -> dict[str, GraphQLInputField]:
            built = {}
            for name, field in model.model_fields.items():
                graphql_type, description = self.field_type(field, is_input=True)
                built[field.alias or name] = GraphQLInputField(
                    cast(GraphQLInputType, graphql_type), default_value=_default(field), description=description
                )
            return built

        return fields

    def _output_fields(self, model: type[BaseModel]) -> Callable[[], dict[str, GraphQLField]]:
        """The fields of an object type, built once every type exists."""

        def fields() -> dict[str, GraphQLField]:
            built = {}
            for name, field in model.model_fields.items():
                graphql_type, description = self.field_type(field, is_input=False)
                built[field.alias or name] = GraphQLField(
                    cast(GraphQLOutputType, graphql_type), description=description
                )
            return built

        return fields

    def query(self) -> GraphQLObjectType:
        arguments = {}
        for name, field in BrainSearchRequest.model_fields.items():
            graphql_type, description = self.field_type(field, is_input=True)
            arguments[field.alias or name] = GraphQLArgument(
                cast(GraphQLInputType, graphql_type), default_value=_default(field), description=description
            )
        result = GraphQLNonNull(self.outputs[BrainSearchResult])
        return GraphQLObjectType("Query", {QUERY_FIELD: GraphQLField(result, arguments, description=QUERY_DESCRIPTION)})


def _doc(model: type[BaseModel]) -> str:
    return inspect.cleandoc(model.__doc__ or "")


def _aliases(model: type[BaseModel]) -> list[str]:
    return [field.alias or name for name, field in model.model_fields.items()]


def _default(field: FieldInfo) -> Any:
    """An input field's default as the SDL states it: a plain value; none for None or a factory."""
    if field.default_factory is not None or field.default in (None, PydanticUndefined):
        return Undefined
    return field.default


def sdl_schema() -> GraphQLSchema:
    """The ``brainSearch`` schema of the contracts (types only; :mod:`.schema` binds the resolver)."""
    builder = _Builder()
    served: list[GraphQLNamedType] = [builder.json, *builder.inputs.values(), *builder.outputs.values()]
    return GraphQLSchema(query=builder.query(), types=served)


def render_sdl() -> str:
    """The text of ``schema.graphql`` (:data:`.schema.SCHEMA_PATH`)."""
    return print_schema(sdl_schema()) + "\n"
