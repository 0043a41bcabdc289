"""Records kept on disk instead of in memory, read back in their canonical order.

A :class:`RecordSpool` is a sequence of records (nodes or edges of a dataset) held in a private
temporary SQLite file, each pickled next to its sort key and its position of arrival: iterating it
yields the records sorted by key, records of equal keys in the order they came (what a stable sort of
the records would give), unpickled a page at a time, so a dataset of any size costs the memory of a
page. The file is the process's own (a fresh temporary folder) and is deleted when the spool is
closed or collected; only records the process pickled itself are unpickled.
"""

from __future__ import annotations

import pickle
import shutil
import sqlite3
import tempfile
import weakref
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import fields
from pathlib import Path
from typing import Any, Generic, TypeVar, cast, overload

T = TypeVar("T")
ADD_BATCH = 5_000  # records inserted per statement
READ_PAGE = 2_000  # records fetched per read
CACHE_KIB = 16_384  # SQLite page cache of the spool file (its sorts spill to disk beyond it)


def _remove(connection: sqlite3.Connection, folder: str) -> None:
    connection.close()
    shutil.rmtree(folder, ignore_errors=True)


class RecordSpool(Sequence[T], Generic[T]):
    """Records sorted by a key of ``key_columns`` strings, on disk (see the module docstring).
    Records of a ``record_type`` dataclass are kept as their field values (smaller and quicker to
    pickle than the objects) and made again as unpickling them would.

    Fill it with :meth:`add` (the records' keys as tuples of strings, compared as Python compares
    them, the first string the record's tenant), then :meth:`seal` it; reading before sealing is an
    error. ``kind`` is one more string kept per record, which :meth:`of_kinds` filters on; ``tenants``
    are the tenants of the records (known without reading them back)."""

    def __init__(self, key_columns: int, record_type: type[T] | None = None) -> None:
        self._folder = tempfile.mkdtemp(prefix="brain-graph-spool-")
        self._columns = [f"k{i}" for i in range(key_columns)]
        self._db = sqlite3.connect(
            Path(self._folder) / "records.sqlite3", isolation_level=None, check_same_thread=False
        )
        self._db.execute("PRAGMA journal_mode=OFF")
        self._db.execute("PRAGMA synchronous=OFF")
        self._db.execute(f"PRAGMA cache_size=-{CACHE_KIB}")
        self._db.execute("PRAGMA temp_store=FILE")
        keys = ", ".join(f"{column} TEXT NOT NULL" for column in self._columns)
        self._db.execute(f"CREATE TABLE records (seq INTEGER PRIMARY KEY, {keys}, kind TEXT, record BLOB NOT NULL)")
        self._fields = tuple(field.name for field in fields(record_type)) if record_type else None  # type: ignore[arg-type]
        self._type = record_type
        self._pending: list[tuple[object, ...]] = []
        self._count = 0
        self._sealed = False
        self._finalizer = weakref.finalize(self, _remove, self._db, self._folder)
        self.checked = False  # set by the reader once write checks passed on every record
        self.tenants: set[str] = set()
        self.ends_among: Sequence[object] | None = None  # edges: the nodes every end is among, when known

    def add(self, key: tuple[str, ...], record: T, kind: str | None = None) -> None:
        """Keep ``record`` under ``key`` (one string per key column)."""
        kept = record if self._fields is None else tuple(vars(record).values())
        self._pending.append((self._count, *key, kind, pickle.dumps(kept, pickle.HIGHEST_PROTOCOL)))
        self.tenants.add(key[0])
        self._count += 1
        if len(self._pending) >= ADD_BATCH:
            self._flush()

    def _flush(self) -> None:
        marks = ", ".join("?" * (len(self._columns) + 3))
        self._db.execute("BEGIN")
        self._db.executemany(f"INSERT INTO records VALUES ({marks})", self._pending)
        self._db.execute("COMMIT")
        self._pending = []

    def seal(self) -> None:
        """End the filling: the records are sorted (an index of the keys) and can be read."""
        if self._pending:
            self._flush()
        self._db.execute(f"CREATE INDEX records_by_key ON records ({', '.join(self._columns)}, seq)")
        self._sealed = True

    def close(self) -> None:
        """Delete the file (the spool reads as closed afterwards)."""
        self._finalizer()

    def _rows(self, where: str = "", params: Sequence[object] = (), order: str | None = None) -> Iterator[T]:
        if not self._sealed:
            raise RuntimeError("a record spool is read only once sealed")
        order = order or f"{', '.join(self._columns)}, seq"
        cursor = self._db.execute(f"SELECT record FROM records {where} ORDER BY {order}", params)
        rebuilt = self._rebuilt
        while page := cursor.fetchmany(READ_PAGE):
            for (blob,) in page:
                yield rebuilt(blob)

    def _rebuilt(self, blob: bytes) -> T:
        """The record of a stored blob (a dataclass from its field values, as unpickling it would)."""
        kept = pickle.loads(blob)
        if self._fields is None:
            return cast(T, kept)
        record: Any = object.__new__(cast(type, self._type))
        record.__dict__.update(zip(self._fields, kept, strict=True))
        return cast(T, record)

    def __iter__(self) -> Iterator[T]:
        return self._rows()

    def in_arrival_order(self) -> Iterator[T]:
        """The records in the order they were added."""
        return self._rows(order="seq")

    def of_kinds(self, kinds: Iterable[str]) -> Iterator[T]:
        """The records of these kinds, in key order."""
        chosen = sorted(set(kinds))
        return self._rows(f"INDEXED BY records_by_key WHERE kind IN ({', '.join('?' * len(chosen))})", chosen)

    def __len__(self) -> int:
        return self._count

    @overload
    def __getitem__(self, index: int) -> T: ...

    @overload
    def __getitem__(self, index: slice) -> list[T]: ...

    def __getitem__(self, index: int | slice) -> T | list[T]:
        if isinstance(index, slice):
            start, stop, step = index.indices(self._count)
            if step != 1:
                return list(self)[index]
            return list(self._rows("", (), None) if start == 0 and stop == self._count else self._window(start, stop))
        position = index + self._count if index < 0 else index
        if not 0 <= position < self._count:
            raise IndexError("record spool index out of range")
        return self._window(position, position + 1)[0]

    def _window(self, start: int, stop: int) -> list[T]:
        if not self._sealed:
            raise RuntimeError("a record spool is read only once sealed")
        order = f"{', '.join(self._columns)}, seq"
        rows = self._db.execute(
            f"SELECT record FROM records ORDER BY {order} LIMIT ? OFFSET ?", (max(0, stop - start), start)
        ).fetchall()
        return [self._rebuilt(blob) for (blob,) in rows]
