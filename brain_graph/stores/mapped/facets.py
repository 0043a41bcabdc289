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
  ``:SS`` and fraction, optional ``Z`` or ``±HH:MM``; without an offset, UTC; surrounding white space
  ignored), read as :func:`~brain_graph.core.filters.parse_timestamp` reads it (fractions cut to the
  microsecond); an integer or float when the label names ``updated_at_unit`` (seconds, milliseconds,
  microseconds since the epoch; a float rounded to the microsecond), within years 1 to 9999. Any
  other value (another string form, a number without a unit, a time of day, a duration) is no time.

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

# The ISO-8601 strings read as times (Neo4j and Python regular expressions alike: full match).
ISO_PATTERN = (
    "[0-9]{4}-[0-9]{2}-[0-9]{2}([Tt ][0-9]{2}:[0-9]{2}(:[0-9]{2}([.][0-9]{1,9})?)?(Z|[+-][0-9]{2}:[0-9]{2})?)?"
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
    """Cypher: the microseconds of the string ``v`` (:data:`ISO_PATTERN`), else null. Variables:
    ``bgIso`` the trimmed string, ``bgZone`` the length of its offset (0, 1 for ``Z``, 6 for
    ``±HH:MM``), ``bgPart`` its numbers (year, month, day, hour, minute, second, microsecond, offset
    hours, offset minutes, offset sign)."""
    text, zone, part = "bgIso", "bgZone", "bgPart"
    body = f"size({text}) - {zone}"
    numbers = ", ".join(
        [
            f"toInteger(substring({text}, 0, 4))",
            f"toInteger(substring({text}, 5, 2))",
            f"toInteger(substring({text}, 8, 2))",
            f"CASE WHEN {body} >= 16 THEN toInteger(substring({text}, 11, 2)) ELSE 0 END",
            f"CASE WHEN {body} >= 16 THEN toInteger(substring({text}, 14, 2)) ELSE 0 END",
            f"CASE WHEN {body} >= 19 THEN toInteger(substring({text}, 17, 2)) ELSE 0 END",
            f"CASE WHEN {body} > 20 THEN toInteger(left(substring({text}, 20, {body} - 20) + '00000', 6)) ELSE 0 END",
            f"CASE WHEN {zone} = 6 THEN toInteger(substring({text}, size({text}) - 5, 2)) ELSE 0 END",
            f"CASE WHEN {zone} = 6 THEN toInteger(substring({text}, size({text}) - 2, 2)) ELSE 0 END",
            f"CASE WHEN {zone} = 6 AND substring({text}, size({text}) - 6, 1) = '-' THEN -1 ELSE 1 END",
        ]
    )
    y, month, day = f"{part}[0]", f"{part}[1]", f"{part}[2]"
    leap = f"({y} % 4 = 0 AND {y} % 100 <> 0) OR {y} % 400 = 0"
    days = f"[31, CASE WHEN {leap} THEN 29 ELSE 28 END, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][{month} - 1]"
    valid = (
        f"{y} >= 1 AND {month} >= 1 AND {month} <= 12 AND {day} >= 1 AND {day} <= {days} "
        f"AND {part}[3] <= 23 AND {part}[4] <= 59 AND {part}[5] <= 59 AND {part}[7] <= 23 AND {part}[8] <= 59"
    )
    instant = (
        f"datetime({{year: {y}, month: {month}, day: {day}, hour: {part}[3], minute: {part}[4], "
        f"second: {part}[5], timezone: 'Z'}}).epochMillis * 1000 + {part}[6] "
        f"- {part}[9] * ({part}[7] * 60 + {part}[8]) * 60000000"
    )
    offset = (
        f"CASE WHEN {text} ENDS WITH 'Z' THEN 1 "
        f"WHEN size({text}) > 16 AND substring({text}, size({text}) - 6, 1) IN ['+', '-'] THEN 6 ELSE 0 END"
    )
    return (
        f"head([{text} IN [trim({v})] WHERE size({v}) <= {MAX_TIME_CHARS} AND {text} =~ '{ISO_PATTERN}' | "
        f"head([{zone} IN [{offset}] | head([{part} IN [[{numbers}]] WHERE {valid} | {instant}])])])"
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

    def tags(self, var: str) -> str:
        """Cypher: the folded tags of ``var`` (a list, empty when none)."""

        def of(_: int, entry: NodeMapping | None) -> str:
            if entry is None or entry.tags_property is None:
                return "[]"
            value = f"{var}.{quoted(entry.tags_property)}"
            return (
                f"CASE WHEN {value} IS :: STRING THEN [{folded(value)}] "
                f"WHEN {value} IS :: LIST<STRING NOT NULL> THEN [bgTag IN {value} | {folded('bgTag')}] ELSE [] END"
            )

        return self._by_label(var, of)

    def namespace(self, var: str) -> str:
        """Cypher: the folded namespace of ``var`` (null when none)."""

        def of(_: int, entry: NodeMapping | None) -> str:
            options = []
            if entry is not None and entry.namespace_property is not None:
                value = f"{var}.{quoted(entry.namespace_property)}"
                options.append(
                    f"CASE WHEN {value} IS :: STRING THEN head([bgNs IN [{folded(value)}] WHERE bgNs <> '']) END"
                )
            if entry is not None and entry.path_property is not None:
                options.append(path_namespace(f"{var}.{quoted(entry.path_property)}"))
            return "null" if not options else options[0] if len(options) == 1 else f"coalesce({', '.join(options)})"

        return self._by_label(var, of)

    def updated_at(self, var: str) -> str:
        """Cypher: the update time of ``var`` in microseconds (null when none)."""

        def of(_: int, entry: NodeMapping | None) -> str:
            if entry is None or entry.updated_at_property is None:
                return "null"
            factor = UNIT_FACTORS[entry.updated_at_unit] if entry.updated_at_unit is not None else "null"
            return f"[{var}.{quoted(entry.updated_at_property)}, {factor}]"

        raw = self._by_label(var, of)
        return "null" if raw == "null" else f"head([bgTime IN [{raw}] | {micros('bgTime[0]', 'bgTime[1]')}])"

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
