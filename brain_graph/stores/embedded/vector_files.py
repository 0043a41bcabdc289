"""Vector matrices on disk, memory-mapped by every process that searches the same store file.

A :class:`~brain_graph.stores.embedded.vectors.VectorMatrix` is kept as one folder of ``.npy``
arrays and a ``meta.json`` (node ids, project slices, ACL entries and facet codes) under
``<store file>.vectors/<tenant and profile digest>/<version digest>/``, the version digest being that
of the cache key (the store's data tokens the matrix was read under). Processes open the arrays with
``numpy.load(mmap_mode="r")``: the vectors of N processes are one copy in the page cache, and a new
process's first search reads no vectors from SQLite.

Promises:

- A folder is published whole or not at all: written under a temporary name in the same parent, then
  renamed (atomic on POSIX); a killed writer leaves a temporary folder that the next publish of that
  (tenant, profile) removes once it is an hour old.
- Publishing a version removes the other versions of the same (tenant, profile): a process that has
  one mapped keeps reading its pages (unlinked files stay readable while mapped); a process that had
  yet to open it reads the vectors from SQLite again.
- :meth:`VectorFiles.open` gives None for anything it cannot use (no folder, another format, a
  truncated or foreign array, unreadable files): the caller reads the vectors from SQLite, so a bad
  file never changes a result.
- Folders are created readable by the store's owner only (``0o700``), as they hold the store's vectors
  and ACL entries. Where they cannot be created (a read-only folder), nothing is written.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from brain_graph.stores.embedded.facets import FacetColumns
from brain_graph.stores.embedded.vectors import CacheKey, VectorMatrix

FORMAT = 1
SUFFIX = ".vectors"
TEMPORARY_PREFIX = ".publishing-"
STALE_TEMPORARY_S = 3600.0  # a temporary folder older than this was left by a killed writer
_ARRAYS = ("vectors", "norms_sq", "inv_norms", "exact_rows", "secured")
_FACET_ARRAYS = ("projects", "node_types", "namespaces", "updated_at", "timed")


def folder_of(store_path: Path) -> Path:
    """The folder of a store file's vector files."""
    return store_path.with_name(store_path.name + SUFFIX)


def _digest(*parts: str | None) -> str:
    return hashlib.sha256(json.dumps(parts).encode("utf-8")).hexdigest()[:32]


def _concatenated(groups: Mapping[str, npt.NDArray[np.intp]]) -> tuple[list[str], npt.NDArray[np.intp], list[int]]:
    """Names in order, their rows end to end, and where each name's rows end."""
    names = sorted(groups)
    ends: list[int] = []
    total = 0
    for name in names:
        total += len(groups[name])
        ends.append(total)
    rows = np.concatenate([groups[name] for name in names]) if names else np.zeros(0, dtype=np.intp)
    return names, rows.astype(np.intp, copy=False), ends


def _split(names: list[str], rows: npt.NDArray[np.intp], ends: list[int]) -> dict[str, npt.NDArray[np.intp]]:
    starts = [0, *ends][: len(ends)]
    return {name: rows[start:end] for name, start, end in zip(names, starts, ends, strict=True)}


class VectorFiles:
    """The vector files of one store file."""

    def __init__(self, store_path: Path) -> None:
        self.root = folder_of(store_path)

    def _pair_folder(self, key: CacheKey) -> Path:
        return self.root / _digest(key[3], key[4])

    def path_of(self, key: CacheKey) -> Path:
        """The folder of the matrix of ``key``."""
        return self._pair_folder(key) / _digest(key[1], key[2])

    def open(self, key: CacheKey, dimension: int) -> VectorMatrix | None:
        """The published matrix of ``key`` memory-mapped, or None when there is none it can use."""
        folder = self.path_of(key)
        try:
            meta = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
            if meta.get("format") != FORMAT or meta.get("tenant_id") != key[3] or meta.get("dimension") != dimension:
                return None
            arrays = {name: np.load(folder / f"{name}.npy", mmap_mode="r") for name in (*_ARRAYS, *_FACET_ARRAYS)}
            acl_rows = np.load(folder / "acl_rows.npy", mmap_mode="r")
            tag_rows = np.load(folder / "tag_rows.npy", mmap_mode="r")
            matrix = _matrix(meta, arrays, acl_rows, tag_rows)
        except (OSError, ValueError, KeyError, TypeError):
            return None
        return matrix if _consistent(matrix, dimension) else None

    def discard(self, key: CacheKey) -> None:
        """Remove the files of ``key`` (unusable ones: another format, a damaged file), so that they can
        be published again; what cannot be removed stays, and is ignored as before."""
        final = self.path_of(key)
        if not final.is_dir():
            return
        doomed = final.with_name(f"{TEMPORARY_PREFIX}discarded-{os.getpid()}-{os.urandom(6).hex()}")
        with contextlib.suppress(OSError):
            os.rename(final, doomed)
            shutil.rmtree(doomed, ignore_errors=True)

    def publish(self, key: CacheKey, matrix: VectorMatrix) -> bool:
        """Write ``matrix`` as the files of ``key`` (atomically) and remove the other versions of its
        (tenant, profile); whether the files of ``key`` exist afterwards."""
        final = self.path_of(key)
        if final.is_dir():
            return True
        parent = self._pair_folder(key)
        try:
            parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            temporary = parent / f"{TEMPORARY_PREFIX}{os.getpid()}-{os.urandom(6).hex()}"
            temporary.mkdir(mode=0o700)
        except OSError:
            return False
        try:
            _write(temporary, matrix)
            os.rename(temporary, final)
        except OSError:
            shutil.rmtree(temporary, ignore_errors=True)
            return final.is_dir()  # another process published the same version first
        self._remove_others(parent, final)
        return True

    def _remove_others(self, parent: Path, kept: Path) -> None:
        with contextlib.suppress(OSError):
            for other in parent.iterdir():
                if other == kept:
                    continue
                if other.name.startswith(TEMPORARY_PREFIX):
                    with contextlib.suppress(OSError):
                        if time.time() - other.stat().st_mtime < STALE_TEMPORARY_S:
                            continue  # another process is writing it
                shutil.rmtree(other, ignore_errors=True)


def _write(folder: Path, matrix: VectorMatrix) -> None:
    """The arrays and meta of ``matrix`` into ``folder``, flushed to disk."""
    acl_names, acl_rows, acl_ends = _concatenated(matrix.acl_index)
    tag_names, tag_rows, tag_ends = _concatenated(matrix.facets.tag_rows)
    facets = matrix.facets
    arrays: dict[str, npt.NDArray[Any]] = {
        "vectors": matrix.vectors,
        "norms_sq": matrix.norms_sq,
        "inv_norms": matrix.inv_norms,
        "exact_rows": matrix.exact_rows,
        "secured": matrix.secured,
        "projects": facets.projects,
        "node_types": facets.node_types,
        "namespaces": facets.namespaces,
        "updated_at": facets.updated_at,
        "timed": facets.timed,
        "acl_rows": acl_rows,
        "tag_rows": tag_rows,
    }
    meta = {
        "format": FORMAT,
        "tenant_id": matrix.tenant_id,
        "dimension": int(matrix.vectors.shape[1]),
        "node_ids": matrix.node_ids,
        "projects": [[project, start, end] for project, (start, end) in matrix.projects.items()],
        "acl": [acl_names, acl_ends],
        "tags": [tag_names, tag_ends],
        "project_codes": facets.project_codes,
        "type_codes": facets.type_codes,
        "namespace_codes": facets.namespace_codes,
    }
    for name, array in arrays.items():
        with open(folder / f"{name}.npy", "wb") as out:
            np.save(out, np.ascontiguousarray(array), allow_pickle=False)
            out.flush()
            os.fsync(out.fileno())
    with open(folder / "meta.json", "w", encoding="utf-8") as out:
        json.dump(meta, out, separators=(",", ":"))
        out.flush()
        os.fsync(out.fileno())


def _matrix(
    meta: Mapping[str, Any],
    arrays: Mapping[str, npt.NDArray[Any]],
    acl_rows: npt.NDArray[np.intp],
    tag_rows: npt.NDArray[np.intp],
) -> VectorMatrix:
    acl_names, acl_ends = meta["acl"]
    tag_names, tag_ends = meta["tags"]
    facets = FacetColumns(
        projects=arrays["projects"],
        project_codes=dict(meta["project_codes"]),
        node_types=arrays["node_types"],
        type_codes=dict(meta["type_codes"]),
        namespaces=arrays["namespaces"],
        namespace_codes=dict(meta["namespace_codes"]),
        tag_rows=_split(tag_names, tag_rows, tag_ends),
        updated_at=arrays["updated_at"],
        timed=arrays["timed"],
    )
    return VectorMatrix(
        tenant_id=meta["tenant_id"],
        node_ids=list(meta["node_ids"]),
        vectors=arrays["vectors"],
        norms_sq=arrays["norms_sq"],
        inv_norms=arrays["inv_norms"],
        exact_rows=arrays["exact_rows"],
        projects={project: (start, end) for project, start, end in meta["projects"]},
        secured=arrays["secured"],
        acl_index=_split(acl_names, acl_rows, acl_ends),
        facets=facets,
    )


def _consistent(matrix: VectorMatrix, dimension: int) -> bool:
    """Whether every array of ``matrix`` has the shape and type its rows need (a foreign or truncated
    file fails this)."""
    rows = len(matrix.node_ids)
    facets = matrix.facets
    expected = (
        (matrix.vectors, np.float32, (rows, dimension)),
        (matrix.norms_sq, np.float64, (rows,)),
        (matrix.inv_norms, np.float32, (rows,)),
        (matrix.secured, np.bool_, (rows,)),
        (facets.projects, np.int32, (rows,)),
        (facets.node_types, np.int32, (rows,)),
        (facets.namespaces, np.int32, (rows,)),
        (facets.updated_at, np.int64, (rows,)),
        (facets.timed, np.bool_, (rows,)),
    )
    if any(array.dtype != dtype or array.shape != shape for array, dtype, shape in expected):
        return False
    indexed = [matrix.exact_rows, *matrix.acl_index.values(), *facets.tag_rows.values()]
    for rows_of in indexed:
        if rows_of.dtype != np.intp or (len(rows_of) and (rows_of.min() < 0 or rows_of.max() >= rows)):
            return False
    return all(0 <= start <= end <= rows for start, end in matrix.projects.values())
