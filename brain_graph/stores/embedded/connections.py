"""Read-only SQLite connections of the embedded store, reused from one read to the next.

Each connection keeps its own cache of prepared statements, and a search makes seven reads, so
reads reuse idle connections instead of opening one each. A connection is used by one read at a time
(any thread); it is kept only between reads, outside any transaction, so it never holds a snapshot
and never delays a writer's checkpoint. Pages are read through a memory mapping of the file's first
:data:`MMAP_BYTES`. Each connection remembers the file it opened (device and inode): when the path
names another file (the store deleted and created again), the idle connections are closed. Costs:
docs/internals/embedded-store.md.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from pathlib import Path
from stat import S_ISDIR

MAX_IDLE = 8  # idle connections kept per store (about one per concurrent search)
MMAP_BYTES = 256 * 1024 * 1024  # of the file read through memory mapping (address space, not memory)

FileIdentity = tuple[int, int] | None


def file_identity(path: Path) -> FileIdentity:
    """The device and inode of the file ``path`` names now (None when there is none, or a directory)."""
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return None if S_ISDIR(stat.st_mode) else (stat.st_dev, stat.st_ino)


class ReadConnections:
    """Idle read-only connections to the store file at ``path``."""

    def __init__(self, path: Path, max_idle: int = MAX_IDLE) -> None:
        self.path = path
        self.max_idle = max_idle
        self._idle: list[tuple[sqlite3.Connection, FileIdentity]] = []
        self._opened: dict[int, FileIdentity] = {}
        self._lock = threading.Lock()

    def acquire(self, identity: FileIdentity = None) -> sqlite3.Connection:
        """An idle connection to the file the path names now, else a new one (``sqlite3.Row`` rows);
        ``identity`` is that file's :func:`file_identity` when the caller just read it."""
        if identity is None:
            identity = file_identity(self.path)
        stale: list[sqlite3.Connection] = []
        connection: sqlite3.Connection | None = None
        with self._lock:
            while self._idle:
                candidate, opened = self._idle.pop()
                if opened == identity and identity is not None:
                    connection = candidate
                    break
                stale.append(candidate)
            if connection is None:
                stale.extend(candidate for candidate, _ in self._idle)
                self._idle.clear()
        for old in stale:
            self._forget(old)
        if connection is not None:
            return connection
        connection = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True, timeout=10, check_same_thread=False)
        connection.row_factory = sqlite3.Row
        try:
            connection.execute(f"PRAGMA mmap_size = {MMAP_BYTES}")  # index pages without a read() each
        except BaseException:
            connection.close()
            raise
        with self._lock:
            self._opened[id(connection)] = identity
        return connection

    def release(self, connection: sqlite3.Connection) -> None:
        """Give back a connection from :meth:`acquire`: ended (rolled back) if a transaction is open,
        kept when there is room, else closed."""
        try:
            if connection.in_transaction:
                connection.rollback()
        except sqlite3.Error:
            self._forget(connection)
            return
        with self._lock:
            identity = self._opened.get(id(connection))
            if identity is not None and len(self._idle) < self.max_idle:
                self._idle.append((connection, identity))
                return
        self._forget(connection)

    def _forget(self, connection: sqlite3.Connection) -> None:
        with self._lock:
            self._opened.pop(id(connection), None)
        connection.close()

    def close(self) -> None:
        """Close the idle connections."""
        with self._lock:
            idle, self._idle = self._idle, []
        for connection, _ in idle:
            self._forget(connection)
