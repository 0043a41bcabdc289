"""Vector search of the embedded store: in-memory matrices, a numpy candidate pass, exact re-scoring.

The vectors of one profile of one tenant are read from SQLite once per data version of the store
file and kept as a :class:`VectorMatrix`: the stored float32 rows, grouped by project key, with their
node ids, project keys, visibility columns (``secured`` and, per ACL entry, the rows naming it) and
facet columns (:class:`~brain_graph.stores.embedded.facets.FacetColumns`). A query then

1. computes the rows visible in its scope (:func:`brain_graph.stores.access.numpy_visible`, the one
   access rule over the cached columns) that pass its seed filter's facet parts (a mask from the facet
   columns) and, with a project filter, works on that project's rows only (a contiguous slice, no
   copy); every later step, the candidate window included, sees those rows only;
2. scores them approximately with one float32 matrix-vector product (:func:`row_dots`: BLAS, outside
   the GIL);
3. re-scores exactly every candidate that could be in the top ``top_k``: the best ``top_k`` rows
   plus every row within :func:`candidate_margin` of the ``top_k``-th, so exact ties beyond any fixed
   window are all re-scored. The exact pass is :func:`exact_cosines`, the same float64 left-to-right
   accumulation as :func:`brain_graph.core.scoring.cosine` (bit-identical), then
   :func:`~brain_graph.core.scoring.similarity_from_cosine`; hits are ordered by score, then node id.

A zero query scores every row 0.5 (the reference cosine is 0): the first ``top_k`` visible node ids.
Other degenerate inputs (a non-finite query, rows with a norm outside ``[1e-15, 1e15]``, a
``top_k``-th score near the lower clamp, few visible rows) skip the approximate pass for the rows
concerned and are scored exactly.

Invalidation: every write transaction stores new random tokens (``meta`` keys, see
:mod:`~brain_graph.stores.embedded.schema`) for each tenant it writes, for each (tenant, profile)
whose vector rows it changed, or for the whole file. A query reads them in the same read
transaction as any vectors it loads, and matrices are keyed by (file, file token, profile token,
tenant, profile), so a write by another :class:`~brain_graph.stores.embedded.EmbeddedStore` or
another process is seen by the next query, and a write to one (tenant, profile) leaves the others'
matrices in the cache. Entries of a superseded token of the same (tenant, part) are dropped when a
newer one is seen. Matrices are shared between processes as memory-mapped files
(:mod:`~brain_graph.stores.embedded.index_files`).

Memory: matrices live in one process-wide LRU (:func:`shared_cache`) bounded by bytes
(``BRAIN_GRAPH_VECTOR_CACHE_MB``; by default a quarter of the memory the process may use, at least
512 MB: :func:`~.memory.default_cache_mb`): about ``rows * (4 * dimension + 120)`` bytes per matrix,
plus 8 per tag of a row. A matrix that does not fit the budget beside the matrices its query already
holds is built for that query and not kept (each such query reads its vectors again; scoring named
nodes then reads those nodes' rows only); ``0`` disables caching.

Design notes and measurements: docs/internals/embedded-store.md.
"""

from __future__ import annotations

import heapq
import json
import math
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Protocol, TypeVar, cast

import numpy as np
import numpy.typing as npt
from pydantic import Field
from pydantic_settings import BaseSettings

from brain_graph.core.environment import ENV_CONFIG, read_settings
from brain_graph.core.filters import SeedFilter
from brain_graph.core.scoring import similarity_from_cosine
from brain_graph.core.security import AccessScope
from brain_graph.stores.access import access_columns, numpy_visible
from brain_graph.stores.blas_threads import limited_blas_threads
from brain_graph.stores.embedded.facets import FacetColumns, untimed_visible
from brain_graph.stores.embedded.memory import MiB, default_cache_mb
from brain_graph.stores.embedded.schema import vector_facet_columns

NORMAL_NORM_SQ = (1e-30, 1e30)  # rows (and queries) whose squared norm is outside are scored exactly
EXACT_BELOW = 64  # fewer visible rows than this (or than top_k + this): score them all exactly
EXACT_BLOCK = 2048  # rows per block of the exact pass over many rows (bounds its float64 temporaries)
ROW_OVERHEAD = 100  # bytes per row besides the vector: node id string, list slot, norms, columns

_VECTORS_OF = (
    "SELECT node_id, project_key, secured, acl, {facets}, vector FROM vectors"
    " WHERE tenant_id = :tenant AND profile_id = :profile"
)
VECTORS_OF = _VECTORS_OF.format(facets=vector_facet_columns(True))
OLDER_VECTORS_OF = _VECTORS_OF.format(facets=vector_facet_columns(False))  # a store of schema version 4 or older
_NAMED = " AND node_id IN (SELECT value FROM json_each(:ids))"

Rows = Callable[[str, Mapping[str, Any]], list[sqlite3.Row]]
FloatArray = npt.NDArray[np.float64]


def exact_cosines(
    query: FloatArray, rows: npt.NDArray[np.float32], query_norm_sq: float, norms_sq: FloatArray
) -> list[float]:
    """:func:`brain_graph.core.scoring.cosine` of ``query`` (float64) with each float32 row, bit for bit: the
    products and sums are the same float64 operations in the same order (``np.add.accumulate`` adds left
    to right, unlike ``np.sum``); ``norms_sq`` are the rows' sums of squares, accumulated the same way."""
    if len(rows) == 0:
        return []
    dots = np.add.accumulate(rows.astype(np.float64) * query, axis=1)[:, -1].tolist()
    cosines = []
    for dot, norm_sq in zip(dots, norms_sq.tolist(), strict=True):
        cosines.append(0.0 if query_norm_sq == 0.0 or norm_sq == 0.0 else dot / math.sqrt(query_norm_sq * norm_sq))
    return cosines


def row_dots(rows: npt.NDArray[np.float32], vector: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """Each row's float32 dot product with ``vector``: one BLAS matrix-vector product on one BLAS
    thread by default (:func:`~brain_graph.stores.blas_threads.limited_blas_threads`), outside the GIL,
    so that concurrent searches and worker processes each scan on their own core."""
    with limited_blas_threads():
        return rows @ vector


def sums_of_squares(rows: npt.NDArray[np.float32]) -> FloatArray:
    """Each row's float64 sum of squares, accumulated left to right (as :func:`~brain_graph.core.scoring.cosine`)."""
    out = np.zeros(len(rows), dtype=np.float64)
    if rows.shape[1] == 0:
        return out
    for start in range(0, len(rows), EXACT_BLOCK):
        block = rows[start : start + EXACT_BLOCK].astype(np.float64)
        out[start : start + len(block)] = np.add.accumulate(block * block, axis=1)[:, -1]
    return out


def candidate_margin(dimension: int) -> float:
    """How far below the ``top_k``-th approximate cosine a row must be to be left out.

    The approximate cosine of a row is ``(row . q32) * inv_norm32`` with ``q32`` the unit query in
    float32: for rows and queries of normal norm it is within ``delta = (dimension + 8) * 2**-24``
    (with 10% slack) of the exact cosine, whatever the summation order (the usual bound
    ``gamma_n * sum|x_i y_i| <= gamma_n * |x| |y|``, plus the roundings of ``q32``, ``inv_norm32`` and
    the product). The ``top_k`` best approximate rows have exact cosines at least ``A_k - delta``, so a
    row below ``A_k - 2 delta - 4e-6`` has an exact cosine more than ``2e-6`` below the ``top_k``-th
    exact one: its score, rounded to 6 decimals of ``(1 + cosine) / 2``, is strictly lower."""
    delta = (dimension + 8) * 2.0**-24 * 1.1
    return 2 * delta + 4e-6


@dataclass(frozen=True)
class VectorMatrix:
    """The vectors of one profile of one tenant, as stored, rows grouped by project key."""

    tenant_id: str
    node_ids: Sequence[str]
    vectors: npt.NDArray[np.float32]  # (rows, dimension), the stored float32 values
    norms_sq: FloatArray  # exact sums of squares (float64, left to right)
    inv_norms: npt.NDArray[np.float32]  # 1 / norm for the approximate pass; 0 for rows scored exactly
    exact_rows: npt.NDArray[np.intp]  # rows of abnormal norm: always re-scored exactly
    projects: dict[str | None, tuple[int, int]]  # project key -> its rows [start, end)
    secured: npt.NDArray[np.bool_]
    acl_index: dict[str, npt.NDArray[np.intp]]  # ACL entry -> rows naming it
    facets: FacetColumns  # what seed filters match of each row

    @property
    def nbytes(self) -> int:
        arrays = (self.vectors, self.norms_sq, self.inv_norms, self.exact_rows, self.secured)
        return (
            sum(a.nbytes for a in arrays)
            + sum(a.nbytes for a in self.acl_index.values())
            + self.facets.nbytes
            + ROW_OVERHEAD * len(self.node_ids)
        )

    @classmethod
    def from_rows(cls, tenant_id: str, dimension: int, rows: Sequence[sqlite3.Row]) -> VectorMatrix:
        """Build from ``node_id, project_key, secured, acl``, facet-column
        (:data:`~brain_graph.stores.embedded.schema.VECTOR_FACET_COLUMNS`) and ``vector`` rows (any order)."""
        ordered = sorted(rows, key=lambda r: (r["project_key"] is None, r["project_key"] or "", r["node_id"]))
        width = 4 * dimension
        blobs = [row["vector"] for row in ordered]
        if any(len(blob) != width for blob in blobs):
            raise ValueError(f"stored vectors of tenant {tenant_id!r} do not all have dimension {dimension}")
        vectors = np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(len(blobs), dimension)
        norms_sq = sums_of_squares(vectors)
        normal = (norms_sq >= NORMAL_NORM_SQ[0]) & (norms_sq <= NORMAL_NORM_SQ[1])
        inv_norms = np.zeros(len(blobs), dtype=np.float32)
        inv_norms[normal] = 1.0 / np.sqrt(norms_sq[normal])
        projects: dict[str | None, tuple[int, int]] = {}
        for index, row in enumerate(ordered):
            start, _ = projects.get(row["project_key"], (index, index))
            projects[row["project_key"]] = (start, index + 1)
        secured, acl_index = access_columns(ordered)
        return cls(
            tenant_id=tenant_id,
            node_ids=[row["node_id"] for row in ordered],
            vectors=vectors,
            norms_sq=norms_sq,
            inv_norms=inv_norms,
            exact_rows=np.flatnonzero(~normal),
            projects=projects,
            secured=secured,
            acl_index=acl_index,
            facets=FacetColumns.from_rows(ordered),
        )

    def visible(self, scope: AccessScope) -> npt.NDArray[np.bool_]:
        """Which rows ``scope`` may see (the access rule over the cached columns)."""
        return numpy_visible(scope, self.tenant_id, self.secured, self.acl_index)

    def search(
        self, query: Sequence[float], *, scope: AccessScope, seed_filter: SeedFilter, top_k: int
    ) -> list[tuple[str, float]]:
        """The best ``top_k`` visible rows that pass ``seed_filter`` as (node id, score), ordered by
        score descending then node id; scores as :func:`~brain_graph.core.scoring.similarity_from_cosine` of
        :func:`~brain_graph.core.scoring.cosine` of ``query`` and the stored vector. The filter narrows
        the rows before any is ranked: its project is a slice of rows, its facets a mask of them."""
        if top_k <= 0 or not self.node_ids:
            return []
        project_key = seed_filter.project_key
        if project_key is None:
            start, end = 0, len(self.node_ids)
        elif project_key in self.projects:
            start, end = self.projects[project_key]
        else:
            return []
        visible = self.visible(scope)
        admitted = self.facets.admitted(seed_filter, project=False)
        if admitted is not None:
            visible &= admitted
        visible = visible[start:end]
        q = np.asarray(query, dtype=np.float64)
        q_norm_sq = float(np.add.accumulate(q * q)[-1]) if len(q) else 0.0
        if q_norm_sq == 0.0:  # the reference cosine is 0.0 for every row: all tie, by node id
            ids = heapq.nsmallest(top_k, (self.node_ids[row] for row in (np.flatnonzero(visible) + start).tolist()))
            return [(node_id, similarity_from_cosine(0.0)) for node_id in ids]
        candidates = self._candidates(q, q_norm_sq, visible, start, end, top_k)
        if len(candidates) > EXACT_BLOCK:  # degenerate: many rows scored exactly, keep the best as we go
            best: list[tuple[float, str]] = []
            for at in range(0, len(candidates), EXACT_BLOCK):
                best = heapq.nsmallest(top_k, best + self._scored(q, q_norm_sq, candidates[at : at + EXACT_BLOCK]))
            return [(node_id, -negated) for negated, node_id in best]
        scored = sorted(self._scored(q, q_norm_sq, candidates))[:top_k]
        return [(node_id, -negated) for negated, node_id in scored]

    def scores_of(
        self, query: Sequence[float], node_ids: Sequence[str], *, scope: AccessScope
    ) -> list[tuple[str, float]]:
        """(node id, score) of the visible rows among ``node_ids``, scored as :meth:`search` scores,
        ordered by score descending then node id."""
        rows = [row for row in (self.row_of.get(node_id) for node_id in dict.fromkeys(node_ids)) if row is not None]
        if not rows:
            return []
        visible = self.visible(scope)
        chosen = np.asarray([row for row in rows if visible[row]], dtype=np.intp)
        q = np.asarray(query, dtype=np.float64)
        q_norm_sq = float(np.add.accumulate(q * q)[-1]) if len(q) else 0.0
        return [(node_id, -negated) for negated, node_id in sorted(self._scored(q, q_norm_sq, chosen))]

    def untimed(self, scope: AccessScope, seed_filter: SeedFilter) -> bool:
        """Whether a row visible in ``scope`` is left out by the recency part of ``seed_filter`` alone
        (:meth:`~brain_graph.core.filters.SeedFilter.untimed`)."""
        return untimed_visible(self.visible(scope), self.facets, seed_filter)

    @cached_property
    def row_of(self) -> dict[str, int]:
        """Row index by node id (built when first needed)."""
        return dict(zip(self.node_ids, range(len(self.node_ids)), strict=True))

    def _scored(self, q: FloatArray, q_norm_sq: float, rows: npt.NDArray[np.intp]) -> list[tuple[float, str]]:
        """(-score, node id) of ``rows``, scored exactly."""
        cosines = exact_cosines(q, self.vectors[rows], q_norm_sq, self.norms_sq[rows])
        return [
            (-similarity_from_cosine(cosine), self.node_ids[row])
            for cosine, row in zip(cosines, rows.tolist(), strict=True)
        ]

    def _candidates(
        self, q: FloatArray, q_norm_sq: float, visible: npt.NDArray[np.bool_], start: int, end: int, top_k: int
    ) -> npt.NDArray[np.intp]:
        """Rows (absolute indices) that may be in the exact top ``top_k`` of the visible rows in [start, end)
        (all of them, :func:`visible_rows`, when the approximate pass cannot tell)."""
        visible_count = int(np.count_nonzero(visible))
        regular = visible_count >= top_k + EXACT_BELOW and NORMAL_NORM_SQ[0] <= q_norm_sq <= NORMAL_NORM_SQ[1]
        if not regular or not np.isfinite(q).all():
            return visible_rows(visible, start)
        unit = (q / math.sqrt(q_norm_sq)).astype(np.float32)
        approximate = row_dots(self.vectors[start:end], unit)
        approximate *= self.inv_norms[start:end]
        np.putmask(approximate, ~visible, -np.inf)
        exact_rows = self.exact_rows[(self.exact_rows >= start) & (self.exact_rows < end)]
        exact_rows = exact_rows[visible[exact_rows - start]]
        approximate[exact_rows - start] = -np.inf
        if visible_count - len(exact_rows) < top_k:
            return visible_rows(visible, start)
        kth = float(np.partition(approximate, len(approximate) - top_k)[len(approximate) - top_k])
        floor = kth - candidate_margin(self.vectors.shape[1])
        if floor <= -1.0:  # scores near the lower clamp (0) tie whatever the distance: score all exactly
            return visible_rows(visible, start)
        window = np.flatnonzero(approximate >= floor) + start
        return np.concatenate((window, exact_rows)) if len(exact_rows) else window


def visible_rows(visible: npt.NDArray[np.bool_], start: int) -> npt.NDArray[np.intp]:
    """The absolute indices of the visible rows of a window starting at row ``start``."""
    return np.flatnonzero(visible) + start


CacheKey = tuple[str, str | None, str | None, str, str]  # (store file, file token, part token, tenant, part)


class CacheEntry(Protocol):
    """What the cache holds: a :class:`VectorMatrix` or another per-profile index of a tenant
    (:class:`~brain_graph.stores.embedded.lexical.LexicalIndex`, keyed by :func:`lexical_key`;
    :class:`~brain_graph.stores.embedded.facets.FacetTable`, keyed by :func:`facets_key`)."""

    @property
    def nbytes(self) -> int: ...


Entry = TypeVar("Entry", bound=CacheEntry)


def lexical_key(profile_id: str) -> str:
    """The profile part of the cache key of a profile's lexical index (no profile id starts with a space)."""
    return f" lexical {profile_id}"


def facets_key(profile_id: str) -> str:
    """The profile part of the cache key of a profile's facet table (:class:`~.facets.FacetTable`)."""
    return f" facets {profile_id}"


class VectorCache:
    """A process-wide LRU of :class:`VectorMatrix` (and other :class:`CacheEntry`) bounded by bytes;
    thread-safe, one load per key at a time."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self._entries: OrderedDict[CacheKey, CacheEntry] = OrderedDict()
        self._versions: dict[str, str | None] = {}  # store file -> its file token
        self._part_versions: dict[tuple[str, str, str], str | None] = {}  # (file, tenant, part) -> its token
        self._bytes = 0
        self._lock = threading.Lock()
        self._loading: dict[CacheKey, threading.Lock] = {}

    @property
    def nbytes(self) -> int:
        """Bytes held now."""
        with self._lock:
            return self._bytes

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._versions.clear()
            self._part_versions.clear()
            self._bytes = 0

    def _forget_other_versions(self, key: CacheKey) -> None:
        """Drop the entries ``key`` makes stale: of another file token of its file, and of another
        token of its (tenant, part)."""
        path, version, part_version, tenant, part = key
        if path in self._versions and self._versions[path] != version:
            self._drop(lambda held: held[0] == path and held[1] != version)
            self._part_versions = {known: v for known, v in self._part_versions.items() if known[0] != path}
        self._versions[path] = version
        if self._part_versions.get((path, tenant, part), part_version) != part_version:
            self._drop(
                lambda held: held[0] == path and held[3] == tenant and held[4] == part and held[2] != part_version
            )
        self._part_versions[(path, tenant, part)] = part_version

    def _drop(self, stale: Callable[[CacheKey], bool]) -> None:
        for key in [key for key in self._entries if stale(key)]:
            self._bytes -= self._entries.pop(key).nbytes

    def _current(self, key: CacheKey) -> bool:
        """Whether ``key``'s tokens are the newest this cache has seen for its file and (tenant, part)."""
        return self._versions.get(key[0]) == key[1] and self._part_versions.get((key[0], key[3], key[4])) == key[2]

    def _held(self, key: CacheKey) -> CacheEntry | None:
        """The matrix of ``key`` if held, marked as just used (under ``self._lock``)."""
        self._forget_other_versions(key)
        entry = self._entries.get(key)
        if entry is not None:
            self._entries.move_to_end(key)
        return entry

    def get(self, key: CacheKey) -> VectorMatrix | None:
        """The matrix of ``key`` if it is held (nothing is loaded)."""
        with self._lock:
            held = self._held(key)
        return held if isinstance(held, VectorMatrix) else None

    def get_or_load(self, key: CacheKey, load: Callable[[], Entry], *, in_use: Collection[CacheKey] = ()) -> Entry:
        """The matrix of ``key``, loaded with ``load()`` when not held; kept if it fits the budget
        without evicting the matrices ``in_use`` (those the same query holds: a query needing more
        than the budget keeps the first ones, so later queries read only the others again)."""
        with self._lock:
            cached = self._held(key)
            if cached is not None:
                return cast(Entry, cached)  # a key holds one kind of entry (lexical_key)
            loading = self._loading.setdefault(key, threading.Lock())
        with loading:
            with self._lock:
                cached = self._entries.get(key)
                if cached is not None:
                    self._entries.move_to_end(key)
                    return cast(Entry, cached)
            try:
                entry = load()
            except BaseException:
                with self._lock:
                    self._loading.pop(key, None)
                raise
            with self._lock:
                self._loading.pop(key, None)  # with the insert: no thread finds neither the load nor the entry
                held = self._entries.get(key)
                if held is not None:  # another thread loaded it meanwhile (after this one's lock was dropped)
                    self._entries.move_to_end(key)
                    return cast(Entry, held)
                kept = sum(self._entries[held].nbytes for held in set(in_use) if held in self._entries and held != key)
                if kept + entry.nbytes <= self.max_bytes and self._current(key):
                    self._entries[key] = entry
                    self._bytes += entry.nbytes
                    for evictable in [held for held in self._entries if held not in in_use and held != key]:
                        if self._bytes <= self.max_bytes:
                            break
                        self._bytes -= self._entries.pop(evictable).nbytes
            return entry


class VectorCacheSettings(BaseSettings):
    """``BRAIN_GRAPH_VECTOR_CACHE_MB``: the budget of the process-wide cache of vector matrices (default:
    :func:`~brain_graph.stores.embedded.memory.default_cache_mb`); ``BRAIN_GRAPH_VECTOR_FILES``
    (default true): whether vector matrices and lexical indexes are shared between processes as
    memory-mapped files beside the store file (:mod:`~brain_graph.stores.embedded.index_files`)."""

    model_config = ENV_CONFIG

    vector_cache_mb: int = Field(default_factory=default_cache_mb, ge=0, validation_alias="BRAIN_GRAPH_VECTOR_CACHE_MB")
    vector_files: bool = Field(default=True, validation_alias="BRAIN_GRAPH_VECTOR_FILES")


_shared: VectorCache | None = None
_shared_lock = threading.Lock()


def shared_cache() -> VectorCache:
    """The process-wide cache of every :class:`~brain_graph.stores.embedded.EmbeddedStore` without its
    own, sized from the environment when first used."""
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = VectorCache(read_settings(VectorCacheSettings).vector_cache_mb * MiB)
        return _shared


_files_enabled: bool | None = None


def vector_files_enabled() -> bool:
    """``BRAIN_GRAPH_VECTOR_FILES`` of the environment, read when first needed."""
    global _files_enabled
    with _shared_lock:
        if _files_enabled is None:
            _files_enabled = read_settings(VectorCacheSettings).vector_files
        return _files_enabled


def load_matrix(rows: Rows, tenant_id: str, profile_id: str, dimension: int, *, stored: bool = True) -> VectorMatrix:
    """Read one profile's vectors of one tenant with the counted statement runner ``rows``
    (``stored``: the store's vectors have facet columns,
    :func:`~brain_graph.stores.embedded.schema.stores_vector_facets`)."""
    sql = VECTORS_OF if stored else OLDER_VECTORS_OF
    return VectorMatrix.from_rows(tenant_id, dimension, rows(sql, {"tenant": tenant_id, "profile": profile_id}))


def load_named(
    rows: Rows, tenant_id: str, profile_id: str, dimension: int, node_ids: Sequence[str], *, stored: bool = True
) -> VectorMatrix:
    """The matrix of only the named nodes' vectors of one profile of one tenant (scored as the whole
    tenant's matrix scores them: each row's score depends on that row alone)."""
    params = {"tenant": tenant_id, "profile": profile_id, "ids": json.dumps(list(node_ids))}
    sql = (VECTORS_OF if stored else OLDER_VECTORS_OF) + _NAMED
    return VectorMatrix.from_rows(tenant_id, dimension, rows(sql, params))
