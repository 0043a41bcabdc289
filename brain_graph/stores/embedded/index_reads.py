"""The embedded store's :class:`~brain_graph.stores.base.IndexStore`: the reads of the write side.

Every read is one statement on an index range: nodes by the primary key (tenant, id), vectors by
(tenant, profile, id). SQLite compares text by bytes, so its order of UTF-8 ids is code-point order.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import Any

from brain_graph.stores.base import NodeRecord, ProfileIndexInfo, VectorState
from brain_graph.stores.embedded.schema import (
    NODE_COLUMNS,
    OLDER_NODE_COLUMNS,
    node_record,
    read_nodes,
    stored_facets,
    table_columns,
    vector_facet_columns,
)

# The tenants with nodes, one index probe per tenant (the next tenant id after the last one), never a
# read of every node of the store (as SELECT DISTINCT would be).
TENANTS = (
    "WITH RECURSIVE t(id) AS (SELECT min(tenant_id) FROM nodes"
    " UNION ALL SELECT (SELECT min(tenant_id) FROM nodes WHERE tenant_id > t.id) FROM t WHERE t.id IS NOT NULL)"
    " SELECT id FROM t WHERE id IS NOT NULL"
)
_NODE_PAGE = (
    "SELECT {columns} FROM nodes WHERE tenant_id = :tenant AND node_id > :after"
    " AND node_type IN (SELECT value FROM json_each(:types)) ORDER BY node_id LIMIT :limit"
)
NODE_PAGE = _NODE_PAGE.format(columns=NODE_COLUMNS)
OLDER_NODE_PAGE = _NODE_PAGE.format(columns=OLDER_NODE_COLUMNS)  # a store of schema version 4 or older
COUNT_NODES = (
    "SELECT count(*) FROM nodes WHERE tenant_id = :tenant AND node_type IN (SELECT value FROM json_each(:types))"
)
_RECORDS = (
    "SELECT {columns} FROM nodes WHERE tenant_id = :tenant"
    " AND node_id IN (SELECT value FROM json_each(:ids)) ORDER BY node_id"
)
RECORDS = _RECORDS.format(columns=NODE_COLUMNS)
OLDER_RECORDS = _RECORDS.format(columns=OLDER_NODE_COLUMNS)
STATE_COLUMNS = "node_id, project_key, secured, acl"
ALL_STATES = "SELECT {columns} FROM vectors WHERE tenant_id = :tenant AND profile_id = :profile ORDER BY node_id"
STATES_OF = (
    "SELECT {columns} FROM vectors WHERE tenant_id = :tenant AND profile_id = :profile"
    " AND node_id IN (SELECT value FROM json_each(:ids)) ORDER BY node_id"
)

Reader = Callable[[], AbstractContextManager[sqlite3.Connection | None]]
Rows = Callable[[sqlite3.Connection, str, Mapping[str, Any]], list[sqlite3.Row]]


class EmbeddedIndexStore:
    """Write-side reads over the store's read connections (``read`` and ``rows`` of the store)."""

    def __init__(self, read: Reader, rows: Rows) -> None:
        self._read = read
        self._rows = rows

    def _query(self, sql: str, params: Mapping[str, Any]) -> Iterator[sqlite3.Row]:
        with self._read() as db:
            if db is None:
                return iter(())
            return iter(self._rows(db, sql, params))

    def _records(self, sql: str, older: str, params: Mapping[str, Any]) -> list[NodeRecord]:
        """The node records of ``sql``, read with ``older`` on a store whose nodes lack the facet columns."""
        with self._read() as db:
            if db is None:
                return []
            rows = read_nodes(lambda statement: self._rows(db, statement, params), sql, older)
        return [node_record(row) for row in rows]

    def tenants(self) -> list[str]:
        return [row[0] for row in self._query(TENANTS, {})]

    def node_page(
        self, tenant_id: str, *, node_types: Sequence[str], after: str | None, limit: int
    ) -> list[NodeRecord]:
        if not node_types or limit <= 0:
            return []
        # "" sorts before every id (and is not one: ids are never empty)
        params = {"tenant": tenant_id, "after": after or "", "types": json.dumps(list(node_types)), "limit": limit}
        return self._records(NODE_PAGE, OLDER_NODE_PAGE, params)

    def count_nodes(self, tenant_id: str, node_types: Sequence[str]) -> int:
        params = {"tenant": tenant_id, "types": json.dumps(list(node_types))}
        return next((int(row[0]) for row in self._query(COUNT_NODES, params)), 0)

    def get_records(self, tenant_id: str, node_ids: Sequence[str]) -> list[NodeRecord]:
        if not node_ids:
            return []
        return self._records(RECORDS, OLDER_RECORDS, {"tenant": tenant_id, "ids": json.dumps(list(node_ids))})

    def vector_states(
        self, tenant_id: str, profile_id: str, node_ids: Sequence[str] | None = None
    ) -> list[VectorState]:
        if node_ids is not None and not node_ids:
            return []
        with self._read() as db:
            if db is None:
                return []
            present = table_columns(db, "vectors")  # a store of an older schema lacks some columns
            columns = STATE_COLUMNS + (", content_hash" if "content_hash" in present else ", '' AS content_hash")
            columns += ", lexical != '' AS lexical" if "lexical" in present else ", 0 AS lexical"
            columns += ", " + vector_facet_columns("updated_at" in present)
            params: dict[str, Any] = {"tenant": tenant_id, "profile": profile_id}
            if node_ids is None:
                rows = self._rows(db, ALL_STATES.format(columns=columns), params)
            else:
                rows = self._rows(db, STATES_OF.format(columns=columns), {**params, "ids": json.dumps(list(node_ids))})
        return [
            VectorState(
                row["node_id"],
                row["content_hash"],
                row["project_key"],
                bool(row["secured"]),
                () if row["acl"] == "[]" else tuple(json.loads(row["acl"])),
                lexical=bool(row["lexical"]),
                facets=stored_facets(row),
            )
            for row in rows
        ]

    def recorded_profiles(self) -> dict[str, ProfileIndexInfo]:
        return {
            row[0]: ProfileIndexInfo(row[0], row[1], int(row[2]))
            for row in self._query("SELECT profile_id, embedder_name, dimension FROM profiles ORDER BY profile_id", {})
        }
