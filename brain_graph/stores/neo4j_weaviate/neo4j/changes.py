"""A :class:`~brain_graph.stores.base.ChangeSet` on Neo4j: its statements, run in ONE explicit
transaction that the caller commits (after the vectors were written) or rolls back.

In the transaction: the changed tenants' pointers are locked and give each tenant's generation
(:data:`~brain_graph.stores.neo4j_weaviate.neo4j.cypher.LOCK_POINTERS`; a new tenant's pointer moves to a fresh one,
which the commit makes visible), then edges are deleted, nodes DETACH DELETEd, nodes MERGEd with every
field SET, edges MERGEd (an edge whose ends are not both nodes then refuses the whole change). Every
statement is an
UNWIND of at most :data:`~brain_graph.stores.neo4j_weaviate.neo4j.generations.WRITE_BATCH` rows, per edge type for
edges, so round trips grow with the batches, never with the records.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from itertools import groupby
from typing import Any

import neo4j

from brain_graph.core.errors import ConfigurationError, DatasetError
from brain_graph.core.vocabulary import check_edge_type
from brain_graph.stores.base import ChangeSet, EdgeRecord
from brain_graph.stores.neo4j_weaviate.neo4j import cypher
from brain_graph.stores.neo4j_weaviate.neo4j.client import Neo4jClient
from brain_graph.stores.neo4j_weaviate.neo4j.generations import (
    WRITE_BATCH,
    Flip,
    edge_row,
    load_batches,
    node_row,
    row_chars,
)
from brain_graph.stores.neo4j_weaviate.neo4j.vector_copies import changed_copies


@dataclass(frozen=True)
class Generations:
    """The generation each changed tenant is written to; ``fresh``: the new tenants' pointers after the
    commit (their clean-up, as after a load's flip)."""

    current: dict[str, int]
    fresh: dict[str, Flip]


def changed_tenants(changes: ChangeSet) -> dict[str, bool]:
    """Every tenant a change touches, sorted (the lock order), and whether it upserts anything."""
    upserted = (
        {n.tenant_id for n in changes.upsert_nodes}
        | {e.tenant_id for e in changes.upsert_edges}
        | {v.tenant_id for v in changes.upsert_vectors}
    )
    touched = (
        upserted
        | {e.tenant_id for e in changes.delete_edges}
        | {k.tenant_id for k in changes.delete_nodes}
        | {k.tenant_id for k in changes.delete_vectors}
    )
    return {tenant: tenant in upserted for tenant in sorted(touched)}


def _batches(rows: Sequence[dict[str, Any]]) -> Iterator[list[dict[str, Any]]]:
    for start in range(0, len(rows), WRITE_BATCH):
        yield list(rows[start : start + WRITE_BATCH])


def _by_type(edges: Sequence[EdgeRecord]) -> list[tuple[str, list[EdgeRecord]]]:
    ordered = sorted(edges, key=lambda e: (e.edge_type, e.tenant_id, e.from_node_id, e.to_node_id))
    return [(edge_type, list(group)) for edge_type, group in groupby(ordered, key=lambda e: e.edge_type)]


def _valid_type(edge_type: str) -> bool:
    try:
        check_edge_type(edge_type)
    except ConfigurationError:
        return False
    return True


def missing_end(edge: EdgeRecord) -> DatasetError:
    """The error of an edge one of whose ends is not a node once the nodes are written."""
    return DatasetError(
        f"edge {edge.edge_type} {edge.from_node_id[:80]!r} -> {edge.to_node_id[:80]!r} of tenant "
        f"{edge.tenant_id[:80]!r}: an end is not a node (write the node in the same change or before)"
    )


class GraphChanges:
    """The Neo4j half of :meth:`~brain_graph.stores.neo4j_weaviate.backend.Neo4jWeaviateBackend.apply`."""

    def __init__(self, client: Neo4jClient) -> None:
        self._client = client

    def lock(self, tx: neo4j.Transaction, changes: ChangeSet) -> Generations:
        """Lock the changed tenants' pointers; the generation each is written to (one statement). A
        generation made here records the copies clock (read in the same statement)."""
        rows = [{"tenantId": tenant, "upsert": upsert} for tenant, upsert in changed_tenants(changes).items()]
        current: dict[str, int] = {}
        fresh: dict[str, Flip] = {}
        for record in self._client.run(tx, cypher.LOCK_POINTERS, {"rows": rows}):
            if record["generation"] is not None:
                current[record["tenantId"]] = int(record["generation"])
                if record["fresh"]:
                    fresh[record["tenantId"]] = Flip(int(record["generation"]), bool(record["legacy"]))
        return Generations(current, fresh)

    def write(self, tx: neo4j.Transaction, changes: ChangeSet, generations: Mapping[str, int]) -> None:
        """Delete edges, delete nodes, upsert nodes, upsert edges (refused as a whole with a
        :class:`DatasetError` when an edge's ends are not both nodes), in ``generations``."""
        for edge_type, edges in _by_type([e for e in changes.delete_edges if _valid_type(e.edge_type)]):
            rows = [edge_row(e, generations[e.tenant_id]) for e in edges if e.tenant_id in generations]
            self._run_batches(tx, cypher.delete_edges(edge_type), rows)
        deleted = [
            {"tenantId": k.tenant_id, "generation": generations[k.tenant_id], "nodeId": k.node_id}
            for k in changes.delete_nodes
            if k.tenant_id in generations
        ]
        self._run_batches(tx, cypher.DELETE_NODES, deleted)
        self._run_batches(tx, cypher.MERGE_NODES, [node_row(n, generations[n.tenant_id]) for n in changes.upsert_nodes])
        for edge_type, edges in _by_type(changes.upsert_edges):
            self._merge_edges(tx, edge_type, edges, generations)

    def vectors_from_graph(
        self, tx: neo4j.Transaction, changes: ChangeSet, generations: Mapping[str, int]
    ) -> ChangeSet:
        """``changes`` with each upserted vector carrying its node's filter metadata as the graph holds it
        in this transaction (the graph is the only source of a vector's project, secured flag and ACL),
        and without the vectors whose node does not exist (a writer raced with a delete)."""
        if not changes.upsert_vectors:
            return changes
        keys = sorted({(v.tenant_id, v.node_id) for v in changes.upsert_vectors if v.tenant_id in generations})
        rows = [{"tenantId": t, "generation": generations[t], "nodeId": node_id} for t, node_id in keys]
        filters: dict[tuple[str, str], tuple[str | None, bool, tuple[str, ...]]] = {}
        for batch in _batches(rows):
            for record in self._client.run(tx, cypher.NODE_FILTERS, {"rows": batch}):
                acl = tuple(sorted(record["acl"] or ()))
                filters[(record["tenantId"], record["nodeId"])] = (record["projectKey"], bool(record["secured"]), acl)
        vectors = [
            replace(v, project_key=found[0], secured=found[1], acl=found[2])
            for v in changes.upsert_vectors
            if (found := filters.get((v.tenant_id, v.node_id))) is not None
        ]
        return replace(changes, upsert_vectors=vectors)

    def write_copies(self, tx: neo4j.Transaction, changes: ChangeSet, generations: Mapping[str, int]) -> None:
        """Set the copies of the change's upserted vectors on their nodes and remove those of its deleted
        vectors (:mod:`.vector_copies`); a node that does not exist keeps no copy. Run after
        :meth:`vectors_from_graph`, so only vectors that are written are copied."""
        deletions = [(k.tenant_id, k.node_id, k.profile_id) for k in changes.delete_vectors]
        copies = changed_copies(changes.upsert_vectors, deletions)
        rows = (
            [node_id, values, tenant, generations[tenant]]
            for (tenant, node_id), values in sorted(copies.items())
            if tenant in generations
        )
        for batch in load_batches(rows, row_chars, max_rows=WRITE_BATCH):
            self._client.run(tx, cypher.SET_COPIES, {"rows": batch})

    def _run_batches(self, tx: neo4j.Transaction, query: str, rows: Sequence[dict[str, Any]]) -> None:
        for batch in _batches(rows):
            self._client.run(tx, query, {"rows": batch})

    def _merge_edges(
        self, tx: neo4j.Transaction, edge_type: str, edges: Sequence[EdgeRecord], generations: Mapping[str, int]
    ) -> None:
        query = cypher.merge_edges(edge_type)
        for start in range(0, len(edges), WRITE_BATCH):
            batch = edges[start : start + WRITE_BATCH]
            rows = [edge_row(e, generations[e.tenant_id]) for e in batch]
            merged = int(self._client.run(tx, query, {"rows": rows})[0]["merged"])
            if merged < len(rows):
                dangling = self._first_dangling(tx, batch, generations)
                if dangling is None:  # not expected: every end was found
                    raise DatasetError(f"{len(rows) - merged} edge(s) of type {edge_type} could not be written")
                raise missing_end(dangling)

    def _first_dangling(
        self, tx: neo4j.Transaction, edges: Sequence[EdgeRecord], generations: Mapping[str, int]
    ) -> EdgeRecord | None:
        """The first of ``edges`` with an end that is not a node (read in the transaction)."""
        ends = sorted({(e.tenant_id, node_id) for e in edges for node_id in (e.from_node_id, e.to_node_id)})
        rows = [{"tenantId": t, "generation": generations[t], "nodeId": node_id} for t, node_id in ends]
        found = {(r["tenantId"], r["nodeId"]) for r in self._client.run(tx, cypher.EXISTING_NODES, {"rows": rows})}
        dangling = (e for e in edges if not {(e.tenant_id, e.from_node_id), (e.tenant_id, e.to_node_id)} <= found)
        return next(dangling, None)
