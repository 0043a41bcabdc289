"""The cached in-memory indexes of the embedded store as one read transaction sees them."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Mapping, Sequence
from functools import cached_property, partial
from typing import Any, TypeVar

from brain_graph.core.filters import SeedFilter
from brain_graph.core.security import AccessScope
from brain_graph.stores.embedded.facets import FacetTable, load_facets
from brain_graph.stores.embedded.index_codecs import (
    LEXICAL,
    MATRIX,
    lexical_from_parts,
    lexical_parts,
    matrix_from_parts,
    matrix_parts,
)
from brain_graph.stores.embedded.index_files import IndexFiles
from brain_graph.stores.embedded.lexical import LexicalIndex, load_lexical
from brain_graph.stores.embedded.schema import stores_vector_facets
from brain_graph.stores.embedded.vectors import (
    CacheKey,
    VectorCache,
    VectorMatrix,
    facets_key,
    lexical_key,
    load_matrix,
    load_named,
)

Index = TypeVar("Index", VectorMatrix, LexicalIndex)


class IndexSnapshot:
    """The cached indexes of one read transaction of one tenant: their keys (the store file and the
    data versions read in that transaction, the vector tokens of ``profile_versions`` among them) and
    their loaders, whose statements are counted; with ``files``, the vector matrices and lexical
    indexes are shared with other processes through :mod:`~brain_graph.stores.embedded.index_files`."""

    def __init__(
        self,
        db: sqlite3.Connection,
        rows: Callable[[sqlite3.Connection, str, Mapping[str, Any]], list[sqlite3.Row]],
        cache: VectorCache,
        file_key: str,
        file_token: str,
        tenant_version: str | None,
        tenant_id: str,
        profile_versions: Mapping[str, str | None],
        files: IndexFiles | None = None,
    ) -> None:
        self.db = db
        self._rows = rows
        self.cache = cache
        self.file_key = file_key
        self.file_token = file_token
        self.tenant_version = tenant_version
        self.tenant_id = tenant_id
        self.profile_versions = profile_versions
        self.files = files

    def key(self, profile_id: str, part: str | None = None) -> CacheKey:
        """The cache key of a profile's index ``part`` (its vector matrix by default, or
        :func:`.vectors.lexical_key`...): the file token and the profile's vector token, or the tenant
        token while no write of this schema has given the profile one."""
        if profile_id not in self.profile_versions:
            raise KeyError(f"the vector token of profile {profile_id!r} was not read in this snapshot")
        version = self.profile_versions[profile_id]
        token = f"profile {version}" if version is not None else f"tenant {self.tenant_version}"
        return (self.file_key, self.file_token, token, self.tenant_id, profile_id if part is None else part)

    def rows(self, sql: str, params: Mapping[str, Any]) -> list[sqlite3.Row]:
        """One counted statement in the transaction."""
        return self._rows(self.db, sql, params)

    @cached_property
    def stored(self) -> bool:
        """Whether the store's vectors have facet columns (checked when an index is loaded, not counted)."""
        return stores_vector_facets(self.db)

    def matrix(self, profile_id: str, dimension: int, named: Sequence[str] | None = None) -> VectorMatrix:
        """The profile's vector matrix (shared through the index files), or with ``named`` the matrix of
        those nodes' rows only (read from SQLite)."""
        if named is not None:
            return load_named(self.rows, self.tenant_id, profile_id, dimension, named, stored=self.stored)
        return self._shared(
            self.key(profile_id),
            MATRIX,
            lambda: load_matrix(self.rows, self.tenant_id, profile_id, dimension, stored=self.stored),
            matrix_parts,
            lambda meta, arrays: matrix_from_parts(meta, arrays, dimension),
        )

    def lexical_index(self, profile_id: str) -> LexicalIndex:
        """The profile's lexical index (shared through the index files)."""
        return self._shared(
            self.key(profile_id, lexical_key(profile_id)),
            LEXICAL,
            lambda: load_lexical(self.rows, self.tenant_id, profile_id, stored=self.stored),
            lexical_parts,
            lexical_from_parts,
        )

    def _shared(
        self,
        key: CacheKey,
        kind: str,
        read: Callable[[], Index],
        to_parts: Callable[[Index], tuple[dict[str, Any], dict[str, Any]]],
        from_parts: Callable[[dict[str, Any], dict[str, Any]], Index | None],
    ) -> Index:
        """The index of ``key`` from its published files, memory-mapped; else ``read()`` from SQLite in
        this transaction, published, and mapped from its files (kept as read where that fails)."""
        if self.files is None:
            return read()
        opened = self.files.open(key, kind)
        published = from_parts(*opened) if opened is not None else None
        if published is not None:
            return published
        self.files.discard(key)  # unusable files of this key, if any: replaced below
        index = read()
        if index.node_ids and self.files.publish(key, kind, *to_parts(index)):
            opened = self.files.open(key, kind)
            return (from_parts(*opened) if opened is not None else None) or index
        return index

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
                key = self.key(profile_id, facets_key(profile_id))
                table = self.cache.get_or_load(key, partial(self.facet_table, profile_id), in_use=in_use)
                in_use.append(key)
            if table.untimed(scope, seed_filter):
                return True
        return False
