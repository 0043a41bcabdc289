"""The cached in-memory indexes of the embedded store as one read transaction sees them."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Mapping, Sequence
from functools import cached_property, partial
from typing import Any

from brain_graph.core.filters import SeedFilter
from brain_graph.core.security import AccessScope
from brain_graph.stores.embedded.facets import FacetTable, load_facets
from brain_graph.stores.embedded.lexical import LexicalIndex, load_lexical
from brain_graph.stores.embedded.schema import stores_vector_facets
from brain_graph.stores.embedded.vectors import (
    CacheKey,
    VectorCache,
    VectorMatrix,
    facets_key,
    load_matrix,
    load_named,
)


class IndexSnapshot:
    """The cached indexes of one read transaction of one tenant: their keys (the store file and the
    data versions read in that transaction) and their loaders, whose statements are counted."""

    def __init__(
        self,
        db: sqlite3.Connection,
        rows: Callable[[sqlite3.Connection, str, Mapping[str, Any]], list[sqlite3.Row]],
        cache: VectorCache,
        file_key: str,
        file_token: str,
        tenant_version: str | None,
        tenant_id: str,
    ) -> None:
        self.db = db
        self._rows = rows
        self.cache = cache
        self.file_key = file_key
        self.file_token = file_token
        self.tenant_version = tenant_version
        self.tenant_id = tenant_id

    def key(self, part: str) -> CacheKey:
        """The cache key of the index ``part`` names (a profile id, or :func:`.vectors.lexical_key`...)."""
        return (self.file_key, self.file_token, self.tenant_version, self.tenant_id, part)

    def rows(self, sql: str, params: Mapping[str, Any]) -> list[sqlite3.Row]:
        """One counted statement in the transaction."""
        return self._rows(self.db, sql, params)

    @cached_property
    def stored(self) -> bool:
        """Whether the store's vectors have facet columns (checked when an index is loaded, not counted)."""
        return stores_vector_facets(self.db)

    def matrix(self, profile_id: str, dimension: int, named: Sequence[str] | None = None) -> VectorMatrix:
        """The profile's vector matrix, or with ``named`` the matrix of those nodes' rows only."""
        if named is None:
            return load_matrix(self.rows, self.tenant_id, profile_id, dimension, stored=self.stored)
        return load_named(self.rows, self.tenant_id, profile_id, dimension, named, stored=self.stored)

    def lexical_index(self, profile_id: str) -> LexicalIndex:
        return load_lexical(self.rows, self.tenant_id, profile_id, stored=self.stored)

    def facet_table(self, profile_id: str) -> FacetTable:
        return load_facets(self.rows, self.tenant_id, profile_id, stored=self.stored)

    def untimed(self, profile_ids: Sequence[str], scope: AccessScope, seed_filter: SeedFilter) -> bool:
        """Whether the recency part of ``seed_filter`` alone leaves out a vector of ``profile_ids``
        visible in ``scope``: from the facet columns of each profile's cached vector matrix, else of
        its facet table (loaded into the cache when not held)."""
        in_use: list[CacheKey] = []
        for profile_id in dict.fromkeys(profile_ids):
            table: VectorMatrix | FacetTable | None = self.cache.get(self.key(profile_id))
            if table is None:
                key = self.key(facets_key(profile_id))
                table = self.cache.get_or_load(key, partial(self.facet_table, profile_id), in_use=in_use)
                in_use.append(key)
            if table.untimed(scope, seed_filter):
                return True
        return False
