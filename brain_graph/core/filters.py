"""Seed filters: what a search's retrieval may return beyond tenant and access, and the facets of a
node they match.

A node's :class:`NodeFacets` are its node type, its namespace, its tags and its update time, in the
normalised form every store keeps beside its vectors: namespace and tags case-folded (NFKC, then
:meth:`str.casefold`), tags sorted and unique, the update time in whole microseconds since the Unix
epoch, UTC. A :class:`SeedFilter` matches facets by the one rule of :meth:`SeedFilter.matches`; every
backend answers exactly the rows that rule admits.

Timestamps are ISO-8601 (:func:`parse_timestamp`): a date (midnight UTC), or a date and time with an
offset or ``Z``; a time without an offset is UTC. They are written back in one canonical form
(:func:`format_timestamp`).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
MICROS_PER_DAY = 86_400_000_000
MAX_TIMESTAMP_CHARS = 64


def fold(text: str) -> str:
    """The case-insensitive form of a namespace or tag: NFKC, case-folded, white space at either end removed."""
    return unicodedata.normalize("NFKC", text).casefold().strip()


def folded_set(values: Iterable[str]) -> tuple[str, ...]:
    """Case-folded, sorted and unique, empty values left out."""
    return tuple(sorted({folded for folded in (fold(value) for value in values) if folded}))


def parse_timestamp(text: str) -> int:
    """Microseconds since the Unix epoch (UTC) of an ISO-8601 date or date-time; raises
    :class:`ValueError` with a one-line reason."""
    if len(text) > MAX_TIMESTAMP_CHARS:
        raise ValueError(f"must be an ISO-8601 timestamp of at most {MAX_TIMESTAMP_CHARS} characters")
    value = text.strip()
    try:
        if len(value) == 10:  # a date alone: YYYY-MM-DD
            moment = datetime.combine(date.fromisoformat(value), datetime.min.time(), tzinfo=UTC)
        else:
            moment = datetime.fromisoformat(value)
    except ValueError:
        raise ValueError("must be an ISO-8601 date or date-time, e.g. 2024-09-01 or 2024-09-01T12:00:00Z") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    delta = moment - EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def format_timestamp(micros: int) -> str:
    """The canonical form of a timestamp: ``YYYY-MM-DDTHH:MM:SSZ``, with ``.ffffff`` when it has microseconds."""
    moment = EPOCH + timedelta(microseconds=micros)
    spec = "seconds" if moment.microsecond == 0 else "microseconds"
    return moment.replace(tzinfo=None).isoformat(timespec=spec) + "Z"


def path_namespace(path: str) -> str | None:
    """The namespace of a path: its top-level directory, ``src/<name>/...`` giving ``<name>``
    (``src/telemetry/ingest.py`` -> ``telemetry``, ``docs/design/cache.md`` -> ``docs``); None for
    a file at the top level. Back slashes count as slashes; a leading ``./`` or ``/`` is ignored."""
    parts = [part for part in path.replace("\\", "/").split("/") if part and part != "."]
    if len(parts) < 2:
        return None
    if parts[0].casefold() == "src" and len(parts) > 2:
        return fold(parts[1]) or None
    return fold(parts[0]) or None


@dataclass(frozen=True)
class NodeFacets:
    """What a :class:`SeedFilter` matches of a node, normalised (see the module docstring)."""

    node_type: str = ""
    namespace: str | None = None
    tags: tuple[str, ...] = ()
    updated_at: int | None = None  # microseconds since the Unix epoch, UTC


@dataclass(frozen=True)
class SeedFilter:
    """Which nodes retrieval may return within the tenant and access scope; every set part must match
    (AND). ``project_key``: that project only; ``node_types``: one of them; ``namespaces``: the node's
    namespace is one of them; ``tags``: at least one tag in common; ``updated_after``: updated at or
    after it (a node without an update time never matches). Empty or None: that part admits every node.
    ``namespaces`` and ``tags`` are case-folded (:func:`folded_set`)."""

    project_key: str | None = None
    node_types: tuple[str, ...] = ()
    namespaces: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    updated_after: int | None = None

    def matches(self, project_key: str | None, facets: NodeFacets) -> bool:
        """Whether a node of ``project_key`` with ``facets`` passes the filter."""
        return (
            (self.project_key is None or project_key == self.project_key)
            and (not self.node_types or facets.node_type in self.node_types)
            and (not self.namespaces or facets.namespace in self.namespaces)
            and (not self.tags or not set(self.tags).isdisjoint(facets.tags))
            and (
                self.updated_after is None
                or (facets.updated_at is not None and facets.updated_at >= self.updated_after)
            )
        )

    def untimed(self, project_key: str | None, facets: NodeFacets) -> bool:
        """Whether the recency part alone leaves this node out for having no update time: what
        :attr:`brain_graph.stores.base.Seeds.untimed` reports."""
        return (
            self.updated_after is not None
            and facets.updated_at is None
            and SeedFilter(self.project_key, self.node_types, self.namespaces, self.tags).matches(project_key, facets)
        )

    @property
    def narrowed_facets(self) -> tuple[str, ...]:
        """The request fields of the facet parts that are set (``nodeTypes``, ``namespaces``, ``tags``,
        ``updatedAfter``); empty when the filter narrows by project at most."""
        parts = (
            ("nodeTypes", bool(self.node_types)),
            ("namespaces", bool(self.namespaces)),
            ("tags", bool(self.tags)),
            ("updatedAfter", self.updated_after is not None),
        )
        return tuple(name for name, on in parts if on)


NO_FILTER = SeedFilter()
