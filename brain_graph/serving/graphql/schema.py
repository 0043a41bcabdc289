"""The executable ``brainSearch`` schema: the committed SDL (``schema.graphql``, derived from the wire
contracts by :mod:`.sdl`), the ``JSON`` scalar and one resolver that invokes the compiled brain_search
graph (no second implementation of the pipeline). The descriptions of ``filter.profileKindIn`` and
``filter.nodeTypes`` are the deployment's: its profile kinds and embedded node types (:func:`configured_docs`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ariadne import QueryType, ScalarType, load_schema_from_path, make_executable_schema
from graphql import (
    GraphQLError,
    GraphQLInputObjectType,
    GraphQLResolveInfo,
    GraphQLSchema,
    ValueNode,
    value_from_ast_untyped,
)

from brain_graph.auth.credentials import READER, Credentials
from brain_graph.core.contracts import filter_docs
from brain_graph.core.errors import AuthenticationError, ConfigurationError
from brain_graph.pipeline.config import configured_profiles_file, load_settings
from brain_graph.pipeline.state import BrainSearchContext
from brain_graph.serving.graphql.errors import TENANT_REQUIRED

SCHEMA_PATH = Path(__file__).with_name("schema.graphql")
GRAPH_KEY = "graph"
CREDENTIALS_KEY = "credentials"
INSECURE_KEY = "insecure"


def _same(value: Any) -> Any:
    return value


def _literal(node: ValueNode, variables: dict[str, Any] | None = None) -> Any:
    return value_from_ast_untyped(node, variables)


json_scalar = ScalarType("JSON", serializer=_same, value_parser=_same, literal_parser=_literal)
query = QueryType()


@query.field("brainSearch")
async def resolve_brain_search(
    _: Any,
    info: GraphQLResolveInfo[Any],
    queryText: str,  # noqa: N803 - GraphQL argument names
    filter: dict[str, Any],
    options: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Run the graph for the caller's principal; its output is the result, field for field."""
    credentials: Credentials | None = info.context.get(CREDENTIALS_KEY)
    if not isinstance(filter.get("tenantId"), str) or not filter["tenantId"].strip():
        raise GraphQLError(
            "filter.tenantId is required: name the tenant to search", extensions={"code": TENANT_REQUIRED}
        )
    if credentials is not None:
        credentials.require(READER, "brainSearch")
    elif not info.context.get(INSECURE_KEY, False):
        raise AuthenticationError("missing bearer token: send 'Authorization: Bearer <token>'")
    request: dict[str, Any] = {"queryText": queryText, "filter": _present(filter)}
    if options is not None:
        request["options"] = _present(options)
    context = BrainSearchContext(principal=credentials.principal if credentials is not None else None)
    output: dict[str, Any] = await info.context[GRAPH_KEY].ainvoke(request, context=context)
    return output


def _present(arguments: dict[str, Any]) -> dict[str, Any]:
    """Input fields without explicit nulls: ``null`` means "not given", so the default applies
    (``secured: null`` is secured)."""
    return {key: value for key, value in arguments.items() if value is not None}


FILTER_TYPE = "BrainSearchFilterInput"


def configured_docs() -> tuple[str, str] | None:
    """The descriptions of ``profileKindIn`` and ``nodeTypes`` for the profiles file of the environment
    (``BRAIN_GRAPH_PROFILES``, else the shipped one); None when the configuration cannot be read (the
    committed descriptions are served, and searches answer with the configuration's error)."""
    try:
        file = configured_profiles_file(load_settings())
    except ConfigurationError:
        return None
    return filter_docs(file.kinds(), file.default_kinds(), file.embedded_types())


def build_schema(docs: tuple[str, str] | None = None) -> GraphQLSchema:
    """The executable schema of :data:`SCHEMA_PATH`, with ``docs`` (the descriptions of
    ``filter.profileKindIn`` and ``filter.nodeTypes``) when given."""
    schema = make_executable_schema(load_schema_from_path(str(SCHEMA_PATH)), query, json_scalar)
    if docs is not None:
        filter_type = schema.type_map[FILTER_TYPE]
        assert isinstance(filter_type, GraphQLInputObjectType)
        fields = filter_type.fields
        fields["profileKindIn"].description, fields["nodeTypes"].description = docs
    return schema
