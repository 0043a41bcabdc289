"""The generation each tenant's searches last saw, so a search queries Weaviate before it reads Neo4j.

An entry is only a guess: the search's first Neo4j statement reads the tenant's pointer too, and when
it names another generation the search is redone with it (see
:mod:`brain_graph.stores.neo4j_weaviate.search_reads`). Entries are ordered by when their read was SENT
(:meth:`GenerationCache.stamp` before the statement, :meth:`~GenerationCache.put` after it): a read
sent later replaces one sent earlier, never the reverse, so a slow search that read the pointer before
a flip cannot put the older generation back after a search that read it after the flip.
"""

from __future__ import annotations

import itertools
import threading
from collections import OrderedDict
from dataclasses import dataclass

DEFAULT_CAPACITY = 4096  # tenants remembered (least recently used forgotten first)


@dataclass(frozen=True)
class Seen:
    """A tenant's generation (None: no data) as a read sent at ``stamp`` found it."""

    generation: int | None
    stamp: int


class GenerationCache:
    """Thread-safe, bounded map of tenant id to :class:`Seen`."""

    def __init__(self, capacity: int = DEFAULT_CAPACITY) -> None:
        self._capacity = capacity
        self._entries: OrderedDict[str, Seen] = OrderedDict()
        self._clock = itertools.count(1)
        self._lock = threading.Lock()

    def stamp(self) -> int:
        """A stamp to take just before sending a read of the pointer."""
        with self._lock:
            return next(self._clock)

    def get(self, tenant_id: str) -> Seen | None:
        """What the latest-sent read of the tenant's pointer found (None: not known here)."""
        with self._lock:
            seen = self._entries.get(tenant_id)
            if seen is not None:
                self._entries.move_to_end(tenant_id)
            return seen

    def put(self, tenant_id: str, generation: int | None, stamp: int) -> None:
        """Record what a read sent at ``stamp`` found, unless a read sent later is recorded already."""
        with self._lock:
            current = self._entries.get(tenant_id)
            if current is not None and current.stamp > stamp:
                return
            self._entries[tenant_id] = Seen(generation, stamp)
            self._entries.move_to_end(tenant_id)
            while len(self._entries) > self._capacity:
                self._entries.popitem(last=False)
