"""Seed filters on Weaviate: the facet properties of an object, how they read back, and the gRPC
filters of a :class:`~brain_graph.core.filters.SeedFilter`.

An object holds its vector's :class:`~brain_graph.core.filters.NodeFacets` (normalised, as
:func:`~brain_graph.stores.base.node_facets` makes them) in the properties of
:data:`.schema.FACETS`: ``nodeType`` and ``namespace`` (text, ``field`` tokenization; no namespace:
none), ``tags`` (text[], ``field`` tokenization), ``updatedAt`` (int: what the recency filter
compares), ``updatedAtExact`` (the same microseconds in decimal, not indexed: what is read back) and
``timed`` (whether it has an update time: what :meth:`~brain_graph.stores.base.VectorIndex.untimed`
looks for). An object written before these properties reads as ``NodeFacets()``.

Exactness: Weaviate keeps an int as the nearest float64, exact within 2**53 microseconds of the epoch
(years 1685 to 2255); so the exact time is read from ``updatedAtExact`` and the recency filter compares
``updatedAt`` with the cutoff rounded the same way, which admits every object at or after the cutoff
(outside those years, possibly some a few microseconds before it). ``field`` tokenization trims white
space at both ends of stored and filter values; a stored facet has none (it is folded), so the filters
ask only for values without any (:func:`exact_values`), for which Weaviate's comparison is the rule's
equality. Whatever Weaviate returns is then re-checked with :meth:`SeedFilter.matches` (or
:meth:`SeedFilter.untimed`) on the values read back.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from weaviate.proto.v1 import base_pb2

from brain_graph.core.filters import NodeFacets, SeedFilter
from brain_graph.stores.neo4j_weaviate.weaviate.schema import (
    NAMESPACE,
    NODE_TYPE,
    TAGS,
    TIMED,
    UPDATED_AT,
    UPDATED_AT_EXACT,
)

Filters = Any  # a weaviate.proto.v1.base_pb2.Filters message


def all_of(parts: Sequence[Filters]) -> Filters | None:
    """The conjunction of gRPC filters (None when there is none)."""
    if not parts:
        return None
    return parts[0] if len(parts) == 1 else base_pb2.Filters(operator=base_pb2.Filters.OPERATOR_AND, filters=parts)


def facet_properties(facets: NodeFacets) -> dict[str, Any]:
    """The facet properties of an object (None: the property is not set)."""
    updated_at = facets.updated_at
    return {
        NODE_TYPE: facets.node_type,
        NAMESPACE: facets.namespace,
        TAGS: list(facets.tags),
        UPDATED_AT: updated_at,
        UPDATED_AT_EXACT: None if updated_at is None else str(updated_at),
        TIMED: updated_at is not None,
    }


def stored_facets(properties: Mapping[str, Any]) -> NodeFacets:
    """The facets of an object from its properties as the client returns them (a property
    missing or None reads as unset: an object written before the facet properties is ``NodeFacets()``)."""
    namespace = properties.get(NAMESPACE)
    exact = properties.get(UPDATED_AT_EXACT)
    return NodeFacets(
        node_type=str(properties.get(NODE_TYPE) or ""),
        namespace=None if namespace is None else str(namespace),
        tags=tuple(properties.get(TAGS) or ()),
        updated_at=int(exact) if exact else None,
    )


def reply_facets(fields: Any) -> NodeFacets:
    """The facets of an object in a gRPC ``SearchReply`` (``fields``: its non-reference properties);
    the properties not returned read as unset."""
    exact = reply_text(fields, UPDATED_AT_EXACT)
    return NodeFacets(
        node_type=reply_text(fields, NODE_TYPE) or "",
        namespace=reply_text(fields, NAMESPACE),
        tags=reply_texts(fields, TAGS),
        updated_at=int(exact) if exact else None,
    )


def reply_text(fields: Any, name: str) -> str | None:
    """A text property of a gRPC reply's object (None: not returned, or not a text)."""
    value = fields.get(name)
    if value is None or value.WhichOneof("kind") != "text_value":
        return None
    return str(value.text_value)


def reply_texts(fields: Any, name: str) -> tuple[str, ...]:
    """A text-array property of a gRPC reply's object (empty: not returned, or not a text array)."""
    value = fields.get(name)
    if value is None or value.WhichOneof("kind") != "list_value":
        return ()
    return tuple(value.list_value.text_values.values)


def returned_facets(seed_filter: SeedFilter) -> list[str]:
    """The facet properties a search returns to re-check ``seed_filter``: those of the parts it sets
    (every returned property is decoded for every object)."""
    names = []
    if seed_filter.node_types:
        names.append(NODE_TYPE)
    if seed_filter.namespaces:
        names.append(NAMESPACE)
    if seed_filter.tags:
        names.append(TAGS)
    if seed_filter.updated_after is not None:
        names.append(UPDATED_AT_EXACT)
    return names


def exact_values(values: Iterable[str]) -> list[str]:
    """The values of a filter part that a stored facet can equal, in first-seen order: not empty and
    without white space at either end (``field`` tokenization compares such a value exactly)."""
    return [value for value in dict.fromkeys(values) if value and value == value.strip()]


def _any_of(name: str, values: Iterable[str]) -> Filters | None:
    """``name`` holds one of ``values`` (None: none of them can be stored, nothing matches)."""
    exact = exact_values(values)
    if not exact:
        return None
    return base_pb2.Filters(
        operator=base_pb2.Filters.OPERATOR_CONTAINS_ANY,
        target=base_pb2.FilterTarget(property=name),
        value_text_array=base_pb2.TextArray(values=exact),
    )


def project_part(project_key: str | None) -> list[Filters]:
    """The filter of the project part (none without a project)."""
    if project_key is None:
        return []
    return [
        base_pb2.Filters(
            operator=base_pb2.Filters.OPERATOR_EQUAL,
            target=base_pb2.FilterTarget(property="projectKey"),
            value_text=project_key,
        )
    ]


def facet_parts(seed_filter: SeedFilter, *, recency: bool = True) -> list[Filters] | None:
    """The filters of ``seed_filter``'s facet parts, to AND (with ``recency`` False, without its recency
    part); None when a part can match no stored value, so nothing matches."""
    parts: list[Filters] = []
    for name, values in (
        (NODE_TYPE, seed_filter.node_types),
        (NAMESPACE, seed_filter.namespaces),
        (TAGS, seed_filter.tags),
    ):
        if values:
            part = _any_of(name, values)
            if part is None:
                return None
            parts.append(part)
    if recency and seed_filter.updated_after is not None:
        parts.append(
            base_pb2.Filters(
                operator=base_pb2.Filters.OPERATOR_GREATER_THAN_EQUAL,
                target=base_pb2.FilterTarget(property=UPDATED_AT),
                value_int=int(float(seed_filter.updated_after)),  # rounded as Weaviate keeps the stored value
            )
        )
    return parts


def untimed_part() -> Filters:
    """The objects without an update time: ``timed`` is not true (false, or missing on an object
    written before the facet properties)."""
    return base_pb2.Filters(
        operator=base_pb2.Filters.OPERATOR_NOT_EQUAL,
        target=base_pb2.FilterTarget(property=TIMED),
        value_boolean=True,
    )
