"""Generations on Neo4j: the tenant pointer, staged writes, the flip and the clean-up.

``(:BrainTenant {tenantId, generation, nextGeneration})`` is a tenant's pointer: reads see only the
generation it names. A load takes a fresh generation (:meth:`Neo4jGenerations.take_generations`),
writes into it (:meth:`~Neo4jGenerations.write`), flips the pointers (:meth:`~Neo4jGenerations.flip`)
and deletes the older generations (:meth:`~Neo4jGenerations.delete_older`). All Cypher is in
:mod:`brain_graph.stores.neo4j_weaviate.neo4j.cypher`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from itertools import groupby
from typing import Any, LiteralString, TypeVar

import neo4j

from brain_graph.core.passage_heads import stored_heads
from brain_graph.stores.base import EdgeRecord, NodeRecord, VectorRecord
from brain_graph.stores.codec import canonical_json
from brain_graph.stores.neo4j_weaviate.neo4j import cypher
from brain_graph.stores.neo4j_weaviate.neo4j.client import Neo4jClient
from brain_graph.stores.neo4j_weaviate.neo4j.vector_copies import latest, load_copy_rows, merged

WRITE_BATCH = 2000  # rows per statement of a change (:mod:`.changes`)
LOAD_BATCH = 5000  # rows per statement (and transaction) of a load, at most
# Characters of strings per load statement, at most (a statement holds at least one row, however
# large): the server holds a statement's parameters several times over in its transaction memory
# (the numbers: docs/internals/neo4j-weaviate-backend.md, "Load batches").
LOAD_BATCH_CHARS = 8_000_000
LOAD_WRITERS = 2  # sessions a load writes on at once
DELETE_BATCH = 5000
Statement = tuple[str, dict[str, Any]]
R = TypeVar("R", NodeRecord, EdgeRecord)
T = TypeVar("T")


@dataclass(frozen=True)
class Flip:
    """A tenant's pointer after a flip: the ``current`` generation (None: the tenant was dropped),
    whether legacy nodes (no ``generation``) may remain (removed by the next clean-up), and the last
    generation a drop covered (0: never dropped)."""

    current: int | None
    legacy: bool
    dropped_through: int = 0

    @property
    def keep_from(self) -> int:
        """The oldest generation to keep: the current one, else the first one after the drop."""
        return self.current if self.current is not None else self.dropped_through + 1


def sort_key(node_id: str) -> str:
    """A string whose Cypher order (UTF-16 code units) is the code-point order of ``node_id``."""
    return node_id.encode("utf-8").hex()


def node_row(node: NodeRecord, generation: int) -> dict[str, Any]:
    """The parameters of a node's MERGE into ``generation`` (text and properties as canonical JSON)."""
    return {
        "tenantId": node.tenant_id,
        "generation": generation,
        "nodeId": node.node_id,
        "sortKey": sort_key(node.node_id),
        "nodeType": node.node_type,
        "projectKey": node.project_key,
        "title": node.title,
        "url": node.url,
        "secured": node.secured,
        "acl": list(node.acl),
        "text": canonical_json(dict(node.text)),
        "properties": canonical_json(dict(node.properties)),
        "namespace": node.namespace,
        "tags": list(node.tags),
        "updatedAt": node.updated_at,
        "heads": stored_heads(node.node_type, node.text),
    }


def edge_row(edge: EdgeRecord, generation: int) -> dict[str, Any]:
    """The parameters of an edge's MERGE (or DELETE) in ``generation``."""
    return {
        "tenantId": edge.tenant_id,
        "generation": generation,
        "fromNodeId": edge.from_node_id,
        "toNodeId": edge.to_node_id,
        "properties": canonical_json(dict(edge.properties)),
    }


def _json_map(values: Mapping[str, Any]) -> str:
    """:func:`canonical_json` of a map (most edges have no properties: no encoder call)."""
    return canonical_json(dict(values)) if values else "{}"


def node_values(node: NodeRecord) -> list[Any]:
    """A node's row in a load statement (:data:`~brain_graph.stores.neo4j_weaviate.neo4j.cypher.CREATE_LOAD_NODES`)."""
    return [
        node.node_id,
        sort_key(node.node_id),
        node.node_type,
        node.project_key,
        node.title,
        node.url,
        node.secured,
        list(node.acl),
        _json_map(node.text),
        _json_map(node.properties),
        node.namespace,
        list(node.tags),
        node.updated_at,
        stored_heads(node.node_type, node.text),
    ]


def _by_tenant(records: Iterable[R]) -> dict[str, list[R]]:
    groups: dict[str, list[R]] = {}
    for record in records:
        groups.setdefault(record.tenant_id, []).append(record)
    return groups


def row_chars(values: Sequence[Any]) -> int:
    """About how many characters a load row's values take (strings and bytes by length, lists and maps
    by their entries, 8 per other value and per list or map entry's overhead): what
    :data:`LOAD_BATCH_CHARS` bounds."""
    return sum(_value_chars(value) for value in values)


def _value_chars(value: Any) -> int:
    if isinstance(value, str | bytes):
        return len(value)
    if isinstance(value, list):
        return sum(_value_chars(item) if isinstance(item, str) else 8 for item in value) + 8
    if isinstance(value, dict):
        return sum(len(name) + 8 + _value_chars(item) for name, item in value.items())
    return 8


def load_batches(
    items: Iterable[T], chars: Callable[[T], int], max_rows: int = LOAD_BATCH, max_chars: int = LOAD_BATCH_CHARS
) -> Iterator[list[T]]:
    """``items`` in order (read as the batches are taken), cut into batches of at most ``max_rows`` items
    and ``max_chars`` characters (a batch holds at least one item, however large)."""
    batch: list[T] = []
    used = 0
    for item in items:
        size = chars(item)
        if batch and (len(batch) >= max_rows or used + size > max_chars):
            yield batch
            batch, used = [], 0
        batch.append(item)
        used += size
    if batch:
        yield batch


def _statement(query: str, tenant: str, generation: int, rows: list[list[Any]]) -> Iterator[Statement]:
    yield query, {"tenantId": tenant, "generation": generation, "rows": rows}


def node_lanes(
    nodes: Sequence[NodeRecord],
    generations: Mapping[str, int],
    fresh: set[str],
    copies: Mapping[tuple[str, str], Sequence[VectorRecord]] | None = None,
) -> Iterator[Iterator[Statement]]:
    """One lane per batch of a tenant's nodes (:func:`load_batches`), each node once (the last of equal
    ids, as MERGE leaves it), with the copies of its vectors in ``copies`` (by tenant and node, as
    :func:`.vector_copies.latest` groups them; made as the batches are taken)."""
    copies = copies or {}
    for tenant, group in _by_tenant(nodes).items():
        unique = list({node.node_id: node for node in group}.values())
        query = cypher.CREATE_LOAD_NODES if tenant in fresh else cypher.MERGE_LOAD_NODES
        rows = ([*node_values(node), merged(copies.get((tenant, node.node_id), ()))] for node in unique)
        for batch in load_batches(rows, row_chars):
            yield _statement(query, tenant, generations[tenant], batch)


def copy_lanes(
    copies: Mapping[tuple[str, str], Sequence[VectorRecord]], generations: Mapping[str, int]
) -> Iterator[Iterator[Statement]]:
    """One lane per batch of a tenant's vector copies (``copies`` by tenant and node; :func:`load_batches`,
    bytes counted; the copies are made as the batches are taken)."""
    for tenant, rows in load_copy_rows(copies):
        for batch in load_batches(rows, row_chars):
            yield _statement(cypher.SET_LOAD_COPIES, tenant, generations[tenant], batch)


def _edge_key(edge: EdgeRecord) -> tuple[str, str, str]:
    return edge.edge_type, edge.from_node_id, edge.to_node_id


def _edge_lane(tenant: str, generation: int, edges: Sequence[EdgeRecord], fresh: bool) -> Iterator[Statement]:
    """A tenant's edges by type, in batches (:func:`load_batches`), each edge once (the last given, as
    MERGE leaves it)."""
    ordered = sorted(edges, key=_edge_key)  # stable: equal edges stay in the order given
    unique = [list(equal)[-1] for _, equal in groupby(ordered, key=_edge_key)]
    for edge_type, group in groupby(unique, key=lambda e: e.edge_type):
        query = cypher.load_edges(edge_type, fresh=fresh)
        typed = ([e.from_node_id, e.to_node_id, _json_map(e.properties)] for e in group)
        for rows in load_batches(typed, row_chars):
            yield query, {"tenantId": tenant, "generation": generation, "rows": rows}


def edge_lanes(
    edges: Sequence[EdgeRecord], generations: Mapping[str, int], fresh: set[str]
) -> Iterator[Iterator[Statement]]:
    """One lane per tenant (its edges by type, in batches): two lanes never lock the same nodes."""
    for tenant, group in _by_tenant(edges).items():
        yield _edge_lane(tenant, generations[tenant], group, tenant in fresh)


class Neo4jGenerations:
    """Pointers, writes and deletions of tenants' generations."""

    def __init__(self, client: Neo4jClient) -> None:
        self._client = client
        self._unwritten: set[tuple[str, int]] = set()  # generations taken here that nothing was written to

    def current_generation(self, tenant_id: str) -> int | None:
        """The generation searches of a tenant see (None: the tenant has no data). One statement."""
        rows = self._client.read(cypher.CURRENT_GENERATION, {"tenantId": tenant_id})
        generation = rows[0]["generation"] if rows else None
        return None if generation is None else int(generation)

    def _generation_map(self, query: LiteralString, tenants: Sequence[str]) -> dict[str, int]:
        if not tenants:
            return {}
        params = {"tenants": sorted(set(tenants))}
        rows = self._client.write(lambda session: self._client.commit(session, query, params))
        return {row["tenantId"]: int(row["generation"]) for row in rows}

    def current_generations(self, tenants: Sequence[str]) -> dict[str, int]:
        """The current generation of each tenant that has one (read on the leader, for a load)."""
        return self._generation_map(cypher.CURRENT_GENERATIONS, tenants)

    def take_generations(self, tenants: Sequence[str]) -> dict[str, int]:
        """A fresh generation number per tenant (creating its pointer), not visible to searches yet."""
        taken = self._generation_map(cypher.TAKE_GENERATIONS, tenants)
        self._unwritten.update(taken.items())
        return taken

    def existing_nodes(self, keys: Sequence[tuple[str, str]], generations: Mapping[str, int]) -> set[tuple[str, str]]:
        """The (tenant, node id) of ``keys`` that are nodes of the tenant's generation in ``generations``
        (read on the leader, one statement per :data:`LOAD_BATCH` keys; a tenant not in it has none)."""
        rows = [{"tenantId": t, "generation": generations[t], "nodeId": n} for t, n in keys if t in generations]
        if not rows:
            return set()

        def work(session: neo4j.Session) -> set[tuple[str, str]]:
            found: set[tuple[str, str]] = set()
            for start in range(0, len(rows), LOAD_BATCH):
                batch = {"rows": rows[start : start + LOAD_BATCH]}
                records = self._client.commit(session, cypher.EXISTING_NODES, batch)
                found.update((record["tenantId"], record["nodeId"]) for record in records)
            return found

        return self._client.write(work)

    def flip(self, generations: Mapping[str, int], clocks: Mapping[str, int] | None = None) -> dict[str, Flip]:
        """Make each tenant's generation the current one, if it is newer than the current one, in ONE
        transaction for all tenants, recording for each generation made current the copies clock of
        its tenant in ``clocks``, read before its writes (a tenant not in it: its vector copies never
        count); returns what is current afterwards."""
        if not generations:
            return {}
        clocks = clocks or {}
        rows = [
            {"tenantId": tenant, "generation": g, "clock": clocks.get(tenant)}
            for tenant, g in sorted(generations.items())
        ]
        records = self._client.write(lambda session: self._client.commit(session, cypher.FLIP, {"rows": rows}))
        return {
            r["tenantId"]: Flip(
                None if r["current"] is None else int(r["current"]), bool(r["legacy"]), int(r["droppedThrough"])
            )
            for r in records
        }

    def dropped_since(self, generations: Mapping[str, int]) -> set[str]:
        """The tenants of ``generations`` dropped after their generation there was read or taken (read on
        the leader: a drop that overtook a load)."""
        if not generations:
            return set()
        rows = [{"tenantId": tenant, "generation": g} for tenant, g in sorted(generations.items())]
        records = self._client.write(lambda session: self._client.commit(session, cypher.DROPPED_SINCE, {"rows": rows}))
        return {record["tenantId"] for record in records}

    def write(
        self,
        nodes: Sequence[NodeRecord],
        edges: Sequence[EdgeRecord],
        generations: Mapping[str, int],
        vectors: Sequence[VectorRecord] = (),
    ) -> None:
        """Write the nodes with the copies of their ``vectors`` (:mod:`.vector_copies`), then the copies of
        the other vectors on their stored nodes (a vector whose node is not in the generation has
        none), then the edges grouped by type (type validated, then interpolated), into the
        generation ``generations`` names for their tenant, each node and edge once (the last given);
        each batch of at most :data:`LOAD_BATCH` rows and :data:`LOAD_BATCH_CHARS` characters in its own
        transaction, on :data:`LOAD_WRITERS` sessions
        at once (the edges of a tenant on one), so memory stays bounded whatever the size. Into a
        generation :meth:`take_generations` took and nothing was written to yet, CREATE; else MERGE
        (idempotent). Into a new generation this is invisible to searches until :meth:`flip`."""
        fresh = {tenant for tenant, generation in generations.items() if (tenant, generation) in self._unwritten}
        self._unwritten.difference_update((tenant, generations[tenant]) for tenant in fresh)
        self._client.ensure_schema()  # before the sessions run concurrently
        copies = latest(vectors)
        self._run_lanes(node_lanes(nodes, generations, fresh, copies))
        written = {(node.tenant_id, node.node_id) for node in nodes}
        self._run_lanes(copy_lanes({key: found for key, found in copies.items() if key not in written}, generations))
        self._run_lanes(edge_lanes(edges, generations, fresh))

    def _run_lanes(self, lanes: Iterator[Iterable[Statement]]) -> None:
        """Run each lane's statements in order, each in its own transaction, the lanes on up to
        :data:`LOAD_WRITERS` sessions at once; the first error stops the others (after their current
        statement) and is raised."""
        lock = threading.Lock()
        stop = threading.Event()

        def next_lane() -> Iterable[Statement] | None:
            with lock:
                return None if stop.is_set() else next(lanes, None)

        def work(session: neo4j.Session) -> None:
            while (lane := next_lane()) is not None:
                for query, params in lane:
                    if stop.is_set():
                        return
                    self._client.commit(session, query, params)

        def writer() -> None:
            try:
                self._client.write(work)
            except BaseException:
                stop.set()
                raise

        with ThreadPoolExecutor(LOAD_WRITERS, thread_name_prefix="brain-graph-neo4j-load") as pool:
            futures = [pool.submit(writer) for _ in range(LOAD_WRITERS)]
            try:
                for future in futures:
                    future.result()
            finally:
                stop.set()

    def _delete_batches(self, session: neo4j.Session, query: LiteralString, params: Mapping[str, Any]) -> None:
        """Run a ``... LIMIT $batch DETACH DELETE`` statement until it deletes less than a batch."""
        deleted = DELETE_BATCH
        while deleted >= DELETE_BATCH:
            deleted = int(self._client.commit(session, query, params)[0]["deleted"])

    def delete_older(self, tenant_id: str, flip: Flip) -> None:
        """Delete a tenant's generations older than ``flip.keep_from`` (and, once, its legacy nodes
        without a generation), in batches of :data:`DELETE_BATCH` nodes."""

        def work(session: neo4j.Session) -> None:
            params = {"tenantId": tenant_id, "current": flip.keep_from, "batch": DELETE_BATCH}
            self._delete_batches(session, cypher.DELETE_OLDER, params)
            if flip.legacy:
                self._delete_batches(session, cypher.DELETE_LEGACY, params)
                self._client.commit(session, cypher.LEGACY_REMOVED, {"tenantId": tenant_id})

        self._client.write(work)

    def drop_tenants(self, tenants: Sequence[str]) -> None:
        """Delete every node and edge of these tenants, of every generation taken so far; each pointer
        stays as a tombstone (:data:`~brain_graph.stores.neo4j_weaviate.neo4j.cypher.TOMBSTONE_POINTERS`), so a load
        that took its generation before the drop is never made visible, and none after it is deleted."""

        def work(session: neo4j.Session) -> None:
            records = self._client.commit(session, cypher.TOMBSTONE_POINTERS, {"tenants": sorted(set(tenants))})
            rows = [{"tenantId": record["tenantId"], "through": int(record["through"])} for record in records]
            # a tenant without a pointer has only legacy nodes (or none)
            rows += [
                {"tenantId": tenant, "through": 0} for tenant in sorted(set(tenants) - {r["tenantId"] for r in rows})
            ]
            self._delete_batches(session, cypher.DELETE_DROPPED, {"rows": rows, "batch": DELETE_BATCH})

        if tenants:
            self._client.write(work)

    def count(self, tenant_id: str) -> tuple[int, int]:
        """(nodes, edges) of the tenant's current generation."""
        params = {"tenants": [tenant_id]}
        nodes = self._client.read(cypher.COUNT_NODES, params)[0]["count"]
        edges = self._client.read(cypher.COUNT_EDGES, params)[0]["count"]
        return int(nodes), int(edges)

    def stored_generations(self, tenant_id: str) -> list[int]:
        """Every generation of a tenant that has nodes stored (0: legacy nodes without a generation)."""
        rows = self._client.read(cypher.STORED_GENERATIONS, {"tenantId": tenant_id})
        return sorted(int(row["generation"]) for row in rows)
