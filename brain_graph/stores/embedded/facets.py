"""Seed-filter columns of the embedded store's in-memory indexes: each row's project and facets as
numpy arrays, and the masks of the rows a :class:`~brain_graph.core.filters.SeedFilter` admits.

A :class:`FacetColumns` keeps, per row, a code of its project, node type and namespace (``-1``: none),
its update time (int64 microseconds, with a mask of the rows that have one) and, per tag, the rows
holding it. :meth:`FacetColumns.admitted` is :meth:`SeedFilter.matches` row by row and
:meth:`FacetColumns.untimed` is :meth:`SeedFilter.untimed` row by row, each a few vectorised
comparisons; a filter without any part set costs nothing (:meth:`~FacetColumns.admitted` is None).

A :class:`FacetTable` is those columns with the rows' visibility, for
:meth:`~brain_graph.stores.embedded.EmbeddedStore.untimed` of a profile whose vector matrix is not
cached (read without the vectors).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import numpy.typing as npt

from brain_graph.core.filters import SeedFilter
from brain_graph.core.security import AccessScope
from brain_graph.stores.access import access_columns, numpy_visible
from brain_graph.stores.embedded.schema import stored_tags, vector_facet_columns

NO_CODE = -1  # the code of a row without a project or namespace
MIN_INT64, MAX_INT64 = -(2**63), 2**63 - 1
Mask = npt.NDArray[np.bool_]
Codes = npt.NDArray[np.int32]
Rows = Callable[[str, Mapping[str, Any]], list[sqlite3.Row]]

_FACETS_OF = (
    "SELECT project_key, secured, acl, {facets} FROM vectors WHERE tenant_id = :tenant AND profile_id = :profile"
)
FACETS_OF = _FACETS_OF.format(facets=vector_facet_columns(True))
OLDER_FACETS_OF = _FACETS_OF.format(facets=vector_facet_columns(False))  # a store of schema version 4 or older


def codes_of(values: Iterable[str | None], count: int) -> tuple[Codes, dict[str, int]]:
    """A code per value (``NO_CODE`` for None, else the value's index of first appearance) and the
    codes by value."""
    known: dict[str, int] = {}
    codes = np.fromiter(
        (NO_CODE if value is None else known.setdefault(value, len(known)) for value in values),
        dtype=np.int32,
        count=count,
    )
    return codes, known


def among(codes: Codes, known: Mapping[str, int], wanted: Iterable[str]) -> Mask:
    """The rows whose code is that of one of the ``wanted`` values (a new array)."""
    chosen = sorted({known[value] for value in wanted if value in known})
    if not chosen:
        return np.zeros(len(codes), dtype=np.bool_)
    if len(chosen) == 1:
        return np.equal(codes, chosen[0])
    return np.isin(codes, chosen)


@dataclass(frozen=True)
class FacetColumns:
    """The project and facets of each row of an index, as stored with the rows' vectors."""

    projects: Codes
    project_codes: dict[str, int]
    node_types: Codes
    type_codes: dict[str, int]
    namespaces: Codes
    namespace_codes: dict[str, int]
    tag_rows: dict[str, npt.NDArray[np.intp]]  # tag -> the rows holding it, ascending
    updated_at: npt.NDArray[np.int64]  # 0 for a row without an update time
    timed: Mask  # the rows with an update time

    @property
    def nbytes(self) -> int:
        arrays = (self.projects, self.node_types, self.namespaces, self.updated_at, self.timed)
        return sum(a.nbytes for a in arrays) + sum(rows.nbytes + 64 for rows in self.tag_rows.values())

    @classmethod
    def from_rows(cls, rows: Sequence[sqlite3.Row]) -> FacetColumns:
        """Build from rows holding ``project_key`` and the facet columns
        (:data:`~brain_graph.stores.embedded.schema.VECTOR_FACET_COLUMNS`), in the index's row order."""
        count = len(rows)
        projects, project_codes = codes_of((row["project_key"] for row in rows), count)
        node_types, type_codes = codes_of((row["node_type"] for row in rows), count)
        namespaces, namespace_codes = codes_of((row["namespace"] for row in rows), count)
        tagged: dict[str, list[int]] = {}
        for index, row in enumerate(rows):
            if row["tags"] != "[]":
                for tag in stored_tags(row["tags"]):
                    tagged.setdefault(tag, []).append(index)
        times = [row["updated_at"] for row in rows]
        timed = np.fromiter((moment is not None for moment in times), dtype=np.bool_, count=count)
        updated_at = np.fromiter((moment or 0 for moment in times), dtype=np.int64, count=count)
        return cls(
            projects=projects,
            project_codes=project_codes,
            node_types=node_types,
            type_codes=type_codes,
            namespaces=namespaces,
            namespace_codes=namespace_codes,
            tag_rows={tag: np.asarray(found, dtype=np.intp) for tag, found in tagged.items()},
            updated_at=updated_at,
            timed=timed,
        )

    def admitted(self, seed_filter: SeedFilter, *, project: bool = True) -> Mask | None:
        """The rows passing every part of ``seed_filter`` that is set (:meth:`SeedFilter.matches`),
        its project part only with ``project``, as a new array; None when no part is set."""
        parts: list[Mask] = []
        if project and seed_filter.project_key is not None:
            parts.append(among(self.projects, self.project_codes, (seed_filter.project_key,)))
        if seed_filter.node_types:
            parts.append(among(self.node_types, self.type_codes, seed_filter.node_types))
        if seed_filter.namespaces:
            parts.append(among(self.namespaces, self.namespace_codes, seed_filter.namespaces))
        if seed_filter.tags:
            parts.append(self._tagged(seed_filter.tags))
        if seed_filter.updated_after is not None:
            parts.append(self._updated_since(seed_filter.updated_after))
        if not parts:
            return None
        mask = parts[0]
        for part in parts[1:]:
            mask &= part
        return mask

    def untimed(self, seed_filter: SeedFilter) -> Mask:
        """The rows the recency part of ``seed_filter`` alone leaves out for having no update time
        (:meth:`SeedFilter.untimed`; none without a recency part), as a new array."""
        if seed_filter.updated_after is None:
            return np.zeros(len(self.timed), dtype=np.bool_)
        untimed = ~self.timed
        rest = self.admitted(replace(seed_filter, updated_after=None))
        if rest is not None:
            untimed &= rest
        return untimed

    def _tagged(self, tags: Iterable[str]) -> Mask:
        mask = np.zeros(len(self.timed), dtype=np.bool_)
        for tag in tags:
            rows = self.tag_rows.get(tag)
            if rows is not None:
                mask[rows] = True
        return mask

    def _updated_since(self, cutoff: int) -> Mask:
        if cutoff > MAX_INT64:  # later than any stored time (SQLite integers are int64)
            return np.zeros(len(self.timed), dtype=np.bool_)
        return self.timed & (self.updated_at >= max(cutoff, MIN_INT64))


@dataclass(frozen=True)
class FacetTable:
    """The visibility and facet columns of one profile's vectors of one tenant, without the vectors."""

    tenant_id: str
    secured: Mask
    acl_index: dict[str, npt.NDArray[np.intp]]
    facets: FacetColumns

    @property
    def nbytes(self) -> int:
        return self.secured.nbytes + sum(a.nbytes for a in self.acl_index.values()) + self.facets.nbytes

    @classmethod
    def from_rows(cls, tenant_id: str, rows: Sequence[sqlite3.Row]) -> FacetTable:
        """Build from rows holding ``project_key, secured, acl`` and the facet columns (any order)."""
        secured, acl_index = access_columns(rows)
        return cls(tenant_id, secured, acl_index, FacetColumns.from_rows(rows))

    def untimed(self, scope: AccessScope, seed_filter: SeedFilter) -> bool:
        """Whether a row visible in ``scope`` is one :meth:`FacetColumns.untimed` names."""
        visible = numpy_visible(scope, self.tenant_id, self.secured, self.acl_index)
        return untimed_visible(visible, self.facets, seed_filter)


def untimed_visible(visible: Mask, facets: FacetColumns, seed_filter: SeedFilter) -> bool:
    """Whether one of the ``visible`` rows is one the recency part of ``seed_filter`` alone leaves out."""
    if seed_filter.updated_after is None:
        return False
    return bool(np.any(visible & facets.untimed(seed_filter)))


def load_facets(rows: Rows, tenant_id: str, profile_id: str, *, stored: bool = True) -> FacetTable:
    """Read one profile's facet table of one tenant with the counted statement runner ``rows``
    (``stored``: the store's vectors have facet columns)."""
    params: Mapping[str, Any] = {"tenant": tenant_id, "profile": profile_id}
    return FacetTable.from_rows(tenant_id, rows(FACETS_OF if stored else OLDER_FACETS_OF, params))
