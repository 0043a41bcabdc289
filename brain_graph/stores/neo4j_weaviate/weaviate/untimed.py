"""Whether a seed filter's recency part leaves out a visible object without an update time
(:meth:`~brain_graph.stores.base.VectorIndex.untimed`), on Weaviate: ONE request for every queried
profile, sent in the same round as a search's other requests.

A gRPC search names one collection, so the request is a GraphQL ``Get`` (:func:`untimed_document`):
per profile (alias ``u<i>``) its collection in the Weaviate tenant, limit 1, filtered by the access
rule, the project, the facet parts other than recency and ``timed`` not true
(:func:`.facets.untimed_part`), returning what re-checks the object (:meth:`AccessScope.may_see` and
:meth:`SeedFilter.untimed` on its facets, :func:`untimed_found`). The ``where`` is the gRPC filter the
searches send, rendered by :func:`graphql_where`: operators and property names from the message,
every text value JSON-escaped (JSON's string escapes are GraphQL's).

A collection without the facet properties (created before them) holds objects that read as
``NodeFacets()``: with a node-type, namespace or tag part none of them is untimed (no request for it),
else each visible one of the project is (its filter has no facet part). A missing Weaviate tenant or
collection has no objects.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from weaviate.proto.v1 import base_pb2

from brain_graph.core.errors import BackendUnavailableError
from brain_graph.core.filters import SeedFilter
from brain_graph.core.security import AccessScope
from brain_graph.stores.access import weaviate_visible
from brain_graph.stores.neo4j_weaviate.weaviate.errors import BACKEND
from brain_graph.stores.neo4j_weaviate.weaviate.facets import (
    all_of,
    facet_parts,
    project_part,
    stored_facets,
    untimed_part,
)
from brain_graph.stores.neo4j_weaviate.weaviate.naming import collection_name
from brain_graph.stores.neo4j_weaviate.weaviate.schema import (
    NAMESPACE,
    NODE_TYPE,
    TAGS,
    UPDATED_AT_EXACT,
    ProfileCache,
)

_BASE_FIELDS = ("tenantId", "secured", "acl", "projectKey")
_FACET_FIELDS = (NODE_TYPE, NAMESPACE, TAGS, UPDATED_AT_EXACT)
_OPERATORS = {
    base_pb2.Filters.OPERATOR_EQUAL: "Equal",
    base_pb2.Filters.OPERATOR_NOT_EQUAL: "NotEqual",
    base_pb2.Filters.OPERATOR_CONTAINS_ANY: "ContainsAny",
    base_pb2.Filters.OPERATOR_AND: "And",
    base_pb2.Filters.OPERATOR_OR: "Or",
}
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_ALIAS = re.compile(r"u([0-9]+)")
_MISSING_MARKS = ("tenant not found", "could not find class", "class not found")
_STALE_MARKS = ("cannot query field", "no such prop")


class UntimedUnavailableError(Exception):
    """The request names a collection or property that no longer exists (the schema cache is stale)."""


@dataclass(frozen=True)
class UntimedTarget:
    """The part of the request for one collection: its filter and the properties returned."""

    collection: str
    where: Any  # a base_pb2.Filters message, or None
    fields: tuple[str, ...]


def untimed_targets(
    profile_ids: Sequence[str], cache: ProfileCache, scope: AccessScope, seed_filter: SeedFilter
) -> list[UntimedTarget]:
    """The collections of ``profile_ids`` (existing, each once) where an object could be untimed, with
    their filters (see the module docstring); none without a recency part."""
    if seed_filter.updated_after is None:
        return []
    parts = facet_parts(seed_filter, recency=False)
    if parts is None:
        return []
    visible = weaviate_visible(scope)
    common = [*project_part(seed_filter.project_key), *([] if visible is None else [visible])]
    faceted = bool(seed_filter.node_types or seed_filter.namespaces or seed_filter.tags)
    targets: dict[str, UntimedTarget] = {}
    for profile_id in profile_ids:
        name = collection_name(profile_id)
        if name not in cache.collections or name in targets:
            continue
        if cache.facets(profile_id):
            where = all_of([*common, *parts, untimed_part()])
            targets[name] = UntimedTarget(name, where, _BASE_FIELDS + _FACET_FIELDS)
        elif not faceted:
            targets[name] = UntimedTarget(name, all_of(common), _BASE_FIELDS)
    return list(targets.values())


def _string(value: str) -> str:
    """A GraphQL string literal (JSON's escapes are GraphQL's)."""
    return json.dumps(value, ensure_ascii=False)


def graphql_where(where: Any) -> str:
    """A gRPC filter as a GraphQL ``where`` value. Only what seed filters and the access rule use is
    rendered (:data:`_OPERATORS`; text, boolean and text-array values); anything else raises
    :class:`ValueError`."""
    operator = _OPERATORS.get(where.operator)
    if operator is None:
        raise ValueError(f"filter operator {where.operator} is not rendered in GraphQL")
    if where.operator in (base_pb2.Filters.OPERATOR_AND, base_pb2.Filters.OPERATOR_OR):
        operands = ", ".join(graphql_where(part) for part in where.filters)
        return f"{{operator: {operator}, operands: [{operands}]}}"
    name = where.target.property
    if not _NAME.fullmatch(name):
        raise ValueError(f"filter property {name!r} is not rendered in GraphQL")
    kind = where.WhichOneof("test_value")
    if kind == "value_text":
        value = "valueText: " + _string(where.value_text)
    elif kind == "value_boolean":
        value = "valueBoolean: " + ("true" if where.value_boolean else "false")
    elif kind == "value_text_array":
        value = "valueText: [" + ", ".join(_string(text) for text in where.value_text_array.values) + "]"
    else:
        raise ValueError(f"filter value {kind} is not rendered in GraphQL")
    return f"{{path: [{_string(name)}], operator: {operator}, {value}}}"


def untimed_document(targets: Sequence[UntimedTarget], tenant: str) -> str:
    """One GraphQL ``Get`` of at most one object per target in one Weaviate tenant (alias ``u<i>``)."""
    parts = []
    for index, target in enumerate(targets):
        arguments = [f"tenant: {_string(tenant)}", "limit: 1"]
        if target.where is not None:
            arguments.insert(1, f"where: {graphql_where(target.where)}")
        parts.append(f"u{index}: {target.collection}({', '.join(arguments)}) {{ {' '.join(target.fields)} }}")
    return "{ Get { " + " ".join(parts) + " } }"


def untimed_found(
    targets: Sequence[UntimedTarget],
    scope: AccessScope,
    seed_filter: SeedFilter,
    data: Mapping[str, Any] | None,
    errors: Sequence[Mapping[str, Any]] | None,
) -> bool:
    """Whether the reply to :func:`untimed_document` holds an object visible in ``scope`` that
    :meth:`SeedFilter.untimed` admits. Raises :class:`UntimedUnavailableError` when the document names
    a collection or property the server does not know, and
    :class:`~brain_graph.core.errors.BackendUnavailableError` on any other error."""
    for error in errors or ():
        message = str(error.get("message", "")).lower()
        path = list(error.get("path") or [])
        alias = _ALIAS.fullmatch(str(path[-1])) if len(path) >= 2 else None
        if alias is not None and any(mark in message for mark in _MISSING_MARKS):
            continue
        if any(mark in message for mark in _STALE_MARKS):
            raise UntimedUnavailableError(message[:300])
        raise BackendUnavailableError(BACKEND, f"untimed check: {message[:300]}")
    for index in range(len(targets)):
        for obj in (data or {}).get(f"u{index}") or ():
            visible = scope.may_see(str(obj.get("tenantId")), bool(obj.get("secured")), tuple(obj.get("acl") or ()))
            if visible and seed_filter.untimed(obj.get("projectKey"), stored_facets(obj)):
                return True
    return False
