"""The seed-filter facets of a mapped node, computed in Cypher from the properties the mapping names
(``tags_property``, ``updated_at_property`` with ``updated_at_unit``, ``namespace_property``,
``path_property`` of its first mapped label), and the filter predicate over them. The same
expressions give the facets of the records a search returns and decide which nodes a filter admits,
so a returned record's :func:`~brain_graph.stores.base.node_facets` always agree with the filter
(:meth:`~brain_graph.core.filters.SeedFilter.matches`).

* **Tags**: a list of strings (one string: one tag); anything else, none. **Namespace**: the
  namespace property when it is a non-blank string, else :func:`~brain_graph.core.filters.path_namespace`
  of the path property. Both case-folded as Neo4j can: NFKC, ``toLower``, ``ß`` as ``ss``, final sigma as
  sigma, trimmed. A value whose form so folded is not brain-graph's case fold
  (:func:`~brain_graph.core.filters.fold`: a few letters such as Cherokee or ``ǰ`` fold differently)
  is dropped (:func:`record_facets`), and filter values are compared only with values so folded.
* **Update time**, in microseconds since the epoch, UTC: a Neo4j ``DATETIME`` (its instant),
  ``LOCAL DATETIME`` (read as UTC) or ``DATE`` (midnight UTC) of years 1 to 9999; an ISO-8601 string
  of the form :data:`ISO_PATTERN` (``YYYY-MM-DD``, or a date, ``T`` or a space, ``HH:MM``, optional
  ``:SS`` and fraction, optional ``Z`` or ``±HH:MM`` of at most 18 hours; without an offset, UTC;
  surrounding white space ignored), read as :func:`~brain_graph.core.filters.parse_timestamp` reads
  it (fractions cut to the microsecond); an integer or float when the label names
  ``updated_at_unit`` (seconds, milliseconds, microseconds since the epoch; a float rounded to the
  microsecond), within years 1 to 9999. Any other value (another string form, a number without a
  unit, a time of day, a duration) is no time.

No expression can fail on a node's values: every conversion is guarded, so a bad value gives none.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from brain_graph.core.filters import SeedFilter, fold, parse_timestamp
from brain_graph.stores.mapped.mapping import Mapping as GraphMapping
from brain_graph.stores.mapped.mapping import NodeMapping, quoted
from brain_graph.stores.write_checks import MAX_TIMESTAMP, MIN_TIMESTAMP

# The ISO-8601 strings read as times (the same regular expression for Neo4j and Python, full match):
# a date of years 0001 to 9999, optionally a time and an offset of at most 18 hours (Neo4j's limit).
# The day is also checked against its month (Feb 29 in leap years only).
ISO_PATTERN = (
    "(?!0000)[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])"
    "([Tt ]([01][0-9]|2[0-3]):[0-5][0-9](:[0-5][0-9]([.][0-9]{1,9})?)?"
    "(Z|[+-]((0[0-9]|1[0-7]):[0-5][0-9]|18:00))?)?"
)
MAX_TIME_CHARS = 64  # parse_timestamp's limit, white space included
UNIT_FACTORS: dict[str, int] = {"seconds": 1_000_000, "milliseconds": 1_000, "microseconds": 1}
_ISO = re.compile(ISO_PATTERN)
_WHITE = " \t\n\r\x0b\x0c"


def read_iso(text: str) -> int | None:
    """What the Cypher of :func:`micros` gives a string, in Python: the microseconds of an ISO-8601
    string of the form :data:`ISO_PATTERN` (as :func:`~brain_graph.core.filters.parse_timestamp`
    reads it), else None."""
    value = text.strip(_WHITE)
    if len(text) > MAX_TIME_CHARS or not _ISO.fullmatch(value):
        return None
    try:
        return parse_timestamp(value)
    except ValueError:
        return None


def folded(expression: str) -> str:
    """Cypher of a string's case fold, as far as Neo4j can (see the module docstring)."""
    return f"trim(replace(replace(toLower(normalize({expression}, NFKC)), 'ß', 'ss'), 'ς', 'σ'))"


def _iso(v: str) -> str:
    """Cypher: the microseconds of the string ``v`` (:data:`ISO_PATTERN`, a day its month has), else
    null: read by Neo4j's ``datetime`` once written in its full form (``T``, ``Z`` when it has no
    offset, midnight for a date). Variables: ``bgIso`` the trimmed string, ``bgAt`` its date-time."""
    text = "bgIso"
    year = f"toInteger(left({text}, 4))"
    leap = f"({year} % 4 = 0 AND {year} % 100 <> 0 OR {year} % 400 = 0)"
    day = f"substring({text}, 5, 5)"
    valid = (
        f"size({v}) <= {MAX_TIME_CHARS} AND {text} =~ '{ISO_PATTERN}' "
        f"AND NOT {day} IN ['02-30', '02-31', '04-31', '06-31', '09-31', '11-31'] AND ({day} <> '02-29' OR {leap})"
    )
    zoned = f"{text} ENDS WITH 'Z' OR substring({text}, size({text}) - 6, 1) IN ['+', '-']"
    full = (
        f"CASE WHEN size({text}) = 10 THEN {text} + 'T00:00Z' "
        f"ELSE left({text}, 10) + 'T' + substring({text}, 11) + CASE WHEN {zoned} THEN '' ELSE 'Z' END END"
    )
    return (
        f"head([{text} IN [trim({v})] WHERE {valid} | "
        f"head([bgAt IN [datetime({full})] | bgAt.epochMillis * 1000 + (bgAt.nanosecond / 1000) % 1000])])"
    )


def micros(v: str, factor: str) -> str:
    """Cypher: the update time of the value ``v`` in microseconds (see the module docstring), with
    ``factor`` the microseconds of the epoch unit of numbers (null: numbers are no time); null when
    ``v`` is none. ``v`` and ``factor`` are expressions without side effects (evaluated often)."""
    years = f"{v}.year >= 1 AND {v}.year <= 9999"
    low, high = MIN_TIMESTAMP, MAX_TIMESTAMP
    return (
        f"CASE WHEN {v} IS :: ZONED DATETIME THEN CASE WHEN {years} "
        f"THEN {v}.epochMillis * 1000 + ({v}.nanosecond / 1000) % 1000 END "
        f"WHEN {v} IS :: LOCAL DATETIME THEN CASE WHEN {years} "
        f"THEN datetime({{datetime: {v}, timezone: 'Z'}}).epochMillis * 1000 + ({v}.nanosecond / 1000) % 1000 END "
        f"WHEN {v} IS :: DATE THEN CASE WHEN {years} "
        f"THEN datetime({{date: {v}, timezone: 'Z'}}).epochMillis * 1000 END "
        f"WHEN {v} IS :: STRING THEN {_iso(v)} "
        f"WHEN {v} IS :: INTEGER THEN CASE WHEN {factor} IS NOT NULL AND {v} >= {low} / {factor} "
        f"AND {v} <= {high} / {factor} THEN {v} * {factor} END "
        f"WHEN {v} IS :: FLOAT THEN CASE WHEN {factor} IS NOT NULL AND {v} >= {low}.0 / {factor} "
        f"AND {v} <= {high}.0 / {factor} THEN toInteger(round({v} * {factor})) END END"
    )


def path_namespace(path: str) -> str:
    """Cypher: :func:`~brain_graph.core.filters.path_namespace` of the value ``path`` when it is a
    string (folded as :func:`folded`), else null."""
    parts = f"[bgPathPart IN split(replace({path}, '\\\\', '/'), '/') WHERE bgPathPart <> '' AND bgPathPart <> '.']"
    chosen = "CASE WHEN toLower(bgPath[0]) = 'src' AND size(bgPath) > 2 THEN bgPath[1] ELSE bgPath[0] END"
    return (
        f"CASE WHEN {path} IS :: STRING THEN head([bgPath IN [{parts}] WHERE size(bgPath) >= 2 | "
        f"head([bgNs IN [{folded(chosen)}] WHERE bgNs <> ''])]) END"
    )


def record_facets(data: Mapping[str, Any]) -> tuple[str, tuple[str, ...], int | None]:
    """The ``namespace``, ``tags`` and ``updated_at`` of a :class:`~brain_graph.stores.base.NodeRecord`
    from the facets :meth:`MappedFacets.fields` read: values whose Neo4j fold is not brain-graph's
    fold dropped, tags sorted and unique. The namespace is ``""`` when there is none, so that
    :func:`~brain_graph.stores.base.node_facets` derives none from the node's path or title."""
    namespace = data.get("namespace")
    tags = data.get("tags")
    updated = data.get("updatedAt")
    kept = sorted({tag for tag in tags if _fixed(tag)}) if isinstance(tags, list) else []
    return (
        namespace if isinstance(namespace, str) and _fixed(namespace) else "",
        tuple(kept),
        updated if type(updated) is int else None,
    )


def _fixed(value: Any) -> bool:
    """Whether ``value`` is a non-empty string that is its own case fold."""
    return isinstance(value, str) and value != "" and fold(value) == value


class MappedFacets:
    """The facet expressions of a mapping's nodes (built once) and their parameters."""

    def __init__(self, mapping: GraphMapping) -> None:
        self.mapping = mapping
        self._entries: list[NodeMapping | None] = [
            next((node for node in mapping.nodes if node.label == label), None) for label in mapping.labels
        ]

    def _by_label(self, var: str, expression: Callable[[int, NodeMapping | None], str]) -> str:
        """``expression`` of ``var``'s first mapped label (its index and entry; None: the cluster
        label), one ``CASE`` on the labels unless every label gives the same expression."""
        found = [expression(index, entry) for index, entry in enumerate(self._entries)]
        if len(set(found)) == 1:
            return found[0]
        cases = " ".join(
            f"WHEN {var}:{quoted(label)} THEN {value}" for label, value in zip(self.mapping.labels, found, strict=True)
        )
        return f"CASE {cases} END"

    def node_type(self, var: str) -> str:
        """Cypher: the node type of ``var`` (as :meth:`~.mapping.Mapping.node_type_of`), from ``$nodeTyping``."""

        def of(index: int, entry: NodeMapping | None) -> str:
            default = f"$nodeTyping[{index}].default"
            if entry is None or entry.type_property is None:
                return default
            value = f"{var}.{quoted(entry.type_property)}"
            return f"coalesce($nodeTyping[{index}].types[CASE WHEN {value} IS :: STRING THEN {value} END], {default})"

        return self._by_label(var, of)

    def _raw(self, var: str, keys: Callable[[NodeMapping], Sequence[str | None]]) -> str | None:
        """Cypher: the list of ``var``'s values of the properties ``keys`` gives its first mapped
        label's entry (null for a key it has not); None when no label has any."""

        def of(_: int, entry: NodeMapping | None) -> str:
            props = keys(entry) if entry is not None else ()
            if not any(props):
                return "null"
            return "[" + ", ".join(f"{var}.{quoted(p)}" if p else "null" for p in props) + "]"

        raw = self._by_label(var, of)
        return None if raw == "null" else raw

    def tags(self, var: str) -> str:
        """Cypher: the folded tags of ``var`` (a list, empty when none)."""
        raw = self._raw(var, lambda entry: [entry.tags_property])
        if raw is None:
            return "[]"
        tags = "bgTags[0]"
        return (
            f"head([bgTags IN [coalesce({raw}, [null])] | CASE WHEN {tags} IS :: STRING THEN [{folded(tags)}] "
            f"WHEN {tags} IS :: LIST<STRING NOT NULL> THEN [bgTag IN {tags} | {folded('bgTag')}] ELSE [] END])"
        )

    def namespace(self, var: str) -> str:
        """Cypher: the folded namespace of ``var`` (null when none): its namespace property when that
        is a non-blank string, else its path's."""
        raw = self._raw(var, lambda entry: [entry.namespace_property, entry.path_property])
        if raw is None:
            return "null"
        given, path = "bgNames[0]", "bgNames[1]"
        named = f"CASE WHEN {given} IS :: STRING THEN head([bgNs IN [{folded(given)}] WHERE bgNs <> '']) END"
        return f"head([bgNames IN [coalesce({raw}, [null, null])] | coalesce({named}, {path_namespace(path)})])"

    def updated_at(self, var: str) -> str:
        """Cypher: the update time of ``var`` in microseconds (null when none)."""

        def of(_: int, entry: NodeMapping | None) -> str:
            if entry is None or entry.updated_at_property is None:
                return "null"
            factor = UNIT_FACTORS[entry.updated_at_unit] if entry.updated_at_unit is not None else "null"
            return f"[{var}.{quoted(entry.updated_at_property)}, {factor}]"

        raw = self._by_label(var, of)
        if raw == "null":
            return "null"
        return f"head([bgTime IN [coalesce({raw}, [null, null])] | {micros('bgTime[0]', 'bgTime[1]')}])"

    def fields(self, var: str) -> list[str]:
        """The facets of ``var`` as fields of a map projection: ``namespace``, ``tags``, ``updatedAt``."""
        return [
            f"namespace: {self.namespace(var)}",
            f"tags: {self.tags(var)}",
            f"updatedAt: {self.updated_at(var)}",
        ]

    def _parts(self, var: str) -> list[str]:
        return [
            f"($filter.nodeTypes IS NULL OR {self.node_type(var)} IN $filter.nodeTypes)",
            f"($filter.namespaces IS NULL OR {self.namespace(var)} IN $filter.namespaces)",
            f"($filter.tags IS NULL OR any(bgHit IN {self.tags(var)} WHERE bgHit IN $filter.tags))",
        ]

    def admitted(self, var: str) -> str:
        """Cypher: ``var`` passes the facet parts of ``$filter`` (node types, namespaces, tags, update
        time at or after ``$filter.updatedAfter``); the project is checked apart."""
        recency = f"($filter.updatedAfter IS NULL OR {self.updated_at(var)} >= $filter.updatedAfter)"
        return "(" + " AND ".join([*self._parts(var), recency]) + ")"

    def untimed(self, var: str) -> str:
        """Cypher: ``$filter`` has a recency part, and ``var`` passes its other facet parts but has no
        update time (:meth:`~brain_graph.core.filters.SeedFilter.untimed`, the project apart)."""
        timeless = f"($filter.updatedAfter IS NOT NULL AND {self.updated_at(var)} IS NULL)"
        return "(" + " AND ".join([*self._parts(var), timeless]) + ")"

    def params(self, seed_filter: SeedFilter) -> dict[str, Any]:
        """``$filter`` and ``$nodeTyping`` of ``seed_filter``: its facet parts (None: not set),
        namespaces and tags kept only when they are their own case fold (no folded node value
        equals another)."""

        def values(found: Sequence[str]) -> list[str] | None:
            return [value for value in found if _fixed(value)] if found else None

        typing = [
            {"default": self.mapping.node_type_of(label), "types": dict(entry.types) if entry is not None else {}}
            for label, entry in zip(self.mapping.labels, self._entries, strict=True)
        ]
        return {
            "filter": {
                "nodeTypes": list(seed_filter.node_types) or None,
                "namespaces": values(seed_filter.namespaces),
                "tags": values(seed_filter.tags),
                "updatedAfter": seed_filter.updated_after,
            },
            "nodeTyping": typing,
        }
