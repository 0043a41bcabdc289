"""The embedded store's cached indexes on disk, memory-mapped by every process that searches the file.

An index (a vector matrix, a lexical index: :mod:`.index_codecs`) is kept as one folder, its arrays
end to end in one file (``arrays.bin``) and a ``meta.json`` with their layout, under
``<store file>.indexes/<tenant and part digest>/<version digest>/``, the digests being those of its
cache key (:data:`~.vectors.CacheKey`: the data tokens it was read under). Processes map the file
read-only and use the arrays in place: N processes hold one copy in the page cache, a new process's
first search reads none of it from SQLite, and an open index holds one file descriptor.

Promises:

- A folder is published whole or not at all: written under a temporary name in the same parent, each
  file flushed to disk, then renamed (atomic on POSIX). A killed writer leaves a temporary folder,
  which the next publish of that (tenant, part) removes once it is :data:`STALE_TEMPORARY_S` old.
- Publishing a version removes the other versions of its (tenant, part): a process that has one
  mapped keeps reading its pages (unlinked files stay readable while mapped); a process that had yet
  to open one reads the index from SQLite.
- :meth:`IndexFiles.open` gives None for anything it cannot use (no folder, another format or kind,
  a truncated or unreadable file); the codecs check every array's shape and type, and the caller
  reads the index from SQLite, so a bad file never changes a result.
- Folders are created readable by their owner only (``0o700``): they hold the store's vectors and
  ACL entries. Where they cannot be written (a read-only folder), nothing is published.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import mmap
import os
import shutil
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from brain_graph.stores.embedded.vectors import CacheKey

FORMAT = 1
SUFFIX = ".indexes"
TEMPORARY_PREFIX = ".publishing-"
STALE_TEMPORARY_S = 3600.0  # a temporary folder older than this was left by a killed writer
META = "meta.json"
DATA = "arrays.bin"
ALIGNMENT = 64  # bytes: every array starts at a multiple (a cache line)
POPULATE_BYTES = 1 << 20  # arrays at least this large get their pages mapped when opened
MADV_POPULATE_READ = 22  # Linux 5.14+; older kernels refuse it (EINVAL) and pages fault in as read

Arrays = Mapping[str, npt.NDArray[Any]]


def folder_of(store_path: Path) -> Path:
    """The folder of a store file's index files."""
    return store_path.with_name(store_path.name + SUFFIX)


def _digest(*parts: str | None) -> str:
    return hashlib.sha256(json.dumps(parts).encode("utf-8")).hexdigest()[:32]


class IndexFiles:
    """The index files of one store file."""

    def __init__(self, store_path: Path) -> None:
        self.root = folder_of(store_path)

    def _part_folder(self, key: CacheKey) -> Path:
        return self.root / _digest(key[3], key[4])

    def path_of(self, key: CacheKey) -> Path:
        """The folder of the index of ``key``."""
        return self._part_folder(key) / _digest(key[1], key[2])

    def open(self, key: CacheKey, kind: str) -> tuple[dict[str, Any], dict[str, npt.NDArray[Any]]] | None:
        """The meta and memory-mapped arrays of the published index of ``key`` (of ``kind``), or None."""
        folder = self.path_of(key)
        try:
            meta = json.loads((folder / META).read_text(encoding="utf-8"))
            if not isinstance(meta, dict) or (meta.get("format"), meta.get("kind")) != (FORMAT, kind):
                return None
            if meta.get("tenant_id") != key[3]:
                return None
            arrays = _mapped(folder / DATA, meta["arrays"])
        except (OSError, ValueError, TypeError, KeyError):
            return None
        return meta, arrays

    def discard(self, key: CacheKey) -> None:
        """Remove the files of ``key`` (unusable ones), so that they can be published again; what
        cannot be removed stays, and is ignored as before."""
        final = self.path_of(key)
        if not final.is_dir():
            return
        doomed = final.with_name(f"{TEMPORARY_PREFIX}discarded-{os.getpid()}-{os.urandom(6).hex()}")
        with contextlib.suppress(OSError):
            os.rename(final, doomed)
            shutil.rmtree(doomed, ignore_errors=True)

    def publish(self, key: CacheKey, kind: str, meta: Mapping[str, Any], arrays: Arrays) -> bool:
        """Write an index as the files of ``key`` (atomically) and remove the other versions of its
        (tenant, part); whether the files of ``key`` exist afterwards."""
        final = self.path_of(key)
        if final.is_dir():
            return True
        parent = self._part_folder(key)
        try:
            parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            temporary = parent / f"{TEMPORARY_PREFIX}{os.getpid()}-{os.urandom(6).hex()}"
            temporary.mkdir(mode=0o700)
        except OSError:
            return False
        try:
            _write(temporary, {**meta, "format": FORMAT, "kind": kind}, arrays)
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


def _mapped(path: Path, layout: object) -> dict[str, npt.NDArray[Any]]:
    """The arrays ``layout`` (name -> [dtype, shape, offset]) places in the file at ``path``, read-only
    views of one memory mapping of it (one file descriptor per index, whatever its arrays)."""
    if not isinstance(layout, dict):
        raise ValueError("the layout of the arrays is not an object")
    with open(path, "rb") as file:
        mapping = mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ)
    if len(mapping) >= POPULATE_BYTES:
        with contextlib.suppress(OSError, ValueError, AttributeError):
            mapping.madvise(MADV_POPULATE_READ)  # map the pages now, not one fault at a time in the first scan
    arrays: dict[str, npt.NDArray[Any]] = {}
    for name, (dtype_text, shape, offset) in layout.items():
        dtype = np.dtype(dtype_text)
        if dtype.hasobject or not all(isinstance(n, int) and n >= 0 for n in (offset, *shape)):
            raise ValueError(f"array {name!r}: not a plain array")
        count = int(np.prod(shape, dtype=np.int64))
        if offset + count * dtype.itemsize > len(mapping):
            raise ValueError(f"array {name!r}: beyond the end of the file")
        arrays[str(name)] = np.frombuffer(mapping, dtype=dtype, count=count, offset=offset).reshape(shape)
    return arrays


def is_mapped(array: npt.NDArray[Any]) -> bool:
    """Whether ``array`` is a view of an index file's mapping."""
    base: object = array
    while isinstance(base, np.ndarray) and base.base is not None:
        base = base.base
    if isinstance(base, memoryview):
        base = base.obj
    return isinstance(base, mmap.mmap)


def _write(folder: Path, meta: Mapping[str, Any], arrays: Arrays) -> None:
    """``arrays`` (one file, each array at an aligned offset) and ``meta`` with their layout into
    ``folder``, each file flushed to disk."""
    layout: dict[str, list[Any]] = {}
    with open(folder / DATA, "wb") as out:
        for name in sorted(arrays):
            array = np.ascontiguousarray(arrays[name])
            if array.dtype.hasobject:
                raise TypeError(f"array {name!r} holds objects")
            out.write(b"\0" * (-out.tell() % ALIGNMENT))
            layout[name] = [array.dtype.str, list(array.shape), out.tell()]
            out.write(array.tobytes())
        out.flush()
        os.fsync(out.fileno())
    with open(folder / META, "w", encoding="utf-8") as out:
        json.dump({**meta, "arrays": layout}, out, separators=(",", ":"))
        out.flush()
        os.fsync(out.fileno())
