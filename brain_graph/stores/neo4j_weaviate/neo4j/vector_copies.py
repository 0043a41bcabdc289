"""Copies of the vectors on the Neo4j nodes, so each hop of a search is scored in the statement that
reads its links (see VECTOR COPIES in :mod:`brain_graph.stores.neo4j_weaviate.neo4j.cypher`).

A node's vector of profile ``p`` is kept as little-endian float32 bytes in its property
``vector:<p>``, the bytes Weaviate stores and returns, so a copy scores bit for bit like the Weaviate
object (:func:`~brain_graph.stores.exact.exact_scores`), with the access metadata the Weaviate object
carries (``vectorSecured:<p>``, ``vectorAcl:<p>``, the vector record's, which a node's own may differ
from until its vectors are written again), so a copy is filtered exactly like the object, and the
content hash the object carries (``vectorHash:<p>``), so the write side can tell a copy apart from its
object (:func:`read_copy_states`, :func:`reconciled`). Property names come from profile ids and reach
Cypher only as parameters (map keys, ``n[$name]``), never as statement text.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from brain_graph.stores.base import VectorHit, VectorQuery, VectorRecord, VectorState
from brain_graph.stores.exact import exact_scores
from brain_graph.stores.identity import EmbeddingMismatchError
from brain_graph.stores.neo4j_weaviate.neo4j import cypher
from brain_graph.stores.neo4j_weaviate.neo4j.client import Neo4jClient

FLOAT32 = np.dtype("<f4")
MAX_COPIED = 10_000  # nodes whose copies one search statement returns at most; beyond, the hop asks Weaviate
COPIED_BYTES = 64 * 2**20  # bytes of copies one search statement returns at most (Weaviate pages larger reads)


def max_copied(queries: Sequence[VectorQuery]) -> int:
    """How many reached nodes a statement returns the copies of, at most: :data:`MAX_COPIED`, fewer when
    their vectors in the queried profiles would exceed :data:`COPIED_BYTES` (with 3 profiles of 3,072
    dimensions, 1,820 nodes); beyond, the hop asks Weaviate."""
    row = sum(len(query.vector) for query in queries) * FLOAT32.itemsize
    return min(MAX_COPIED, COPIED_BYTES // row) if row else MAX_COPIED


Copy = dict[str, Any]  # property -> value (None: removed)


def copy_property(profile_id: str) -> str:
    """The node property holding the copy of its vector of ``profile_id``."""
    return cypher.COPIES_PREFIX + profile_id


def copy_properties(profile_id: str) -> tuple[str, str, str, str]:
    """The properties of a copy: its bytes, its ``secured`` flag, its ACL and its content hash."""
    return (
        copy_property(profile_id),
        cypher.SECURED_PREFIX + profile_id,
        cypher.ACL_PREFIX + profile_id,
        cypher.HASH_PREFIX + profile_id,
    )


def copy_bytes(vector: Any) -> bytes:
    """A vector as the float32 bytes Weaviate stores."""
    return np.asarray(vector, dtype=FLOAT32).tobytes()


def copy_of(vector: VectorRecord) -> Copy:
    """The properties of a vector's copy."""
    data, secured, acl, content_hash = copy_properties(vector.profile_id)
    return {
        data: copy_bytes(vector.vector),
        secured: bool(vector.secured),
        acl: list(vector.acl),
        content_hash: vector.content_hash,
    }


def removed(profile_id: str) -> Copy:
    """The properties that remove a copy."""
    return dict.fromkeys(copy_properties(profile_id))


def latest(vectors: Iterable[VectorRecord]) -> dict[tuple[str, str], list[VectorRecord]]:
    """The vectors per ``(tenant, node)``, the last given per profile (as the vector index keeps it),
    in node order; the copies themselves are made later, a batch at a time."""
    by_node: dict[tuple[str, str], dict[str, VectorRecord]] = {}
    for vector in vectors:
        by_node.setdefault((vector.tenant_id, vector.node_id), {})[vector.profile_id] = vector
    return {key: list(by_node[key].values()) for key in sorted(by_node)}


def load_copy_rows(
    by_node: Mapping[tuple[str, str], Sequence[VectorRecord]],
) -> Iterator[tuple[str, Iterator[list[Any]]]]:
    """Per tenant, the rows ``[nodeId, {property: value}]`` of
    :data:`~brain_graph.stores.neo4j_weaviate.neo4j.cypher.SET_LOAD_COPIES` for the vectors of :func:`latest`, made as
    they are read."""
    by_tenant: dict[str, list[tuple[str, Sequence[VectorRecord]]]] = {}
    for (tenant, node_id), records in by_node.items():
        by_tenant.setdefault(tenant, []).append((node_id, records))
    for tenant, nodes in by_tenant.items():
        yield tenant, ([node_id, merged(records)] for node_id, records in nodes)


def merged(records: Iterable[VectorRecord]) -> Copy:
    """The properties of the copies of one node's vectors (none: an empty map)."""
    values: Copy = {}
    for record in records:
        values.update(copy_of(record))
    return values


def score_copies(
    queries: Sequence[VectorQuery], copied: Sequence[str], rows: Sequence[Sequence[Any]]
) -> list[VectorHit]:
    """The hits of ``[nodeId, [bytes or None per profile of copied]]`` rows for the queries of the
    copied profiles (a node without a vector in a profile has no hit there), in the queries' order,
    each profile's by score descending then node id, as a Weaviate similarity read returns them."""
    position = {profile_id: index for index, profile_id in enumerate(copied)}
    hits: list[VectorHit] = []
    for query in queries:
        if query.profile_id not in position:
            continue
        index, profile_id = position[query.profile_id], query.profile_id
        found = [(row[0], row[1][index]) for row in rows if row[1][index] is not None]
        dimension = len(query.vector)
        wrong = next((len(data) for _, data in found if len(data) != dimension * FLOAT32.itemsize), None)
        if wrong is not None:
            raise EmbeddingMismatchError(
                f"profile {profile_id}: query vector has dimension {dimension}, "
                f"the index holds dimension {wrong // FLOAT32.itemsize}"
            )
        matrix = np.frombuffer(b"".join(data for _, data in found), dtype=FLOAT32).reshape(len(found), dimension)
        scores = exact_scores(query.vector, matrix)
        scored = [VectorHit(node_id, profile_id, value) for (node_id, _), value in zip(found, scores, strict=True)]
        hits.extend(sorted(scored, key=lambda hit: (-hit.score, hit.node_id)))
    return hits


class CopiesClock:
    """The clock of vector copies (see VECTOR COPIES in :mod:`~brain_graph.stores.neo4j_weaviate.neo4j.cypher`)."""

    def __init__(self, client: Neo4jClient) -> None:
        self._client = client

    def read(self) -> int:
        """The clock now (read on the leader)."""
        return int(self._client.write(lambda s: self._client.commit(s, cypher.COPIES_CLOCK, {}))[0]["clock"])

    def untrust(self, tenant_ids: Iterable[str]) -> None:
        """Stop trusting the copies of these tenants' current generations (until a replace-load gives
        them new ones). One statement, none without tenants."""
        tenants = sorted(set(tenant_ids))
        if tenants:
            self._client.write(lambda s: self._client.commit(s, cypher.UNTRUST_COPIES, {"tenants": tenants}))

    def drop(self, profile_ids: Sequence[str]) -> None:
        """Move the clock and stamp these profiles with it: their copies do not count in any generation
        made before the stamp. One statement, none without profiles."""
        if profile_ids:
            params = {"profiles": sorted(set(profile_ids))}
            self._client.write(lambda s: self._client.commit(s, cypher.DROP_COPIES, params))


def changed_copies(
    upserts: Iterable[VectorRecord], deletions: Iterable[tuple[str, str, str]]
) -> dict[tuple[str, str], Copy]:
    """The copy properties a change sets per ``(tenant, node)``: deleted vectors ``(tenant, node,
    profile)`` removed (None), then upserted ones set (as the change applies them)."""
    copies: dict[tuple[str, str], Copy] = {}
    for tenant, node_id, profile_id in deletions:
        copies.setdefault((tenant, node_id), {}).update(removed(profile_id))
    for key, records in latest(upserts).items():
        copies.setdefault(key, {}).update(merged(records))
    return copies


@dataclass(frozen=True)
class CopyStates:
    """What :func:`read_copy_states` read: the tenant's current generation (None: no data), whether the
    profile's copies count in it (a search trusts them), and then the content hash of each node's
    copy by node id (None: a copy without a content hash)."""

    generation: int | None
    counted: bool = False
    hashes: Mapping[str, str | None] = field(default_factory=dict)


def read_copy_states(
    client: Neo4jClient, tenant_id: str, profile_id: str, node_ids: Sequence[str] | None
) -> CopyStates:
    """The tenant's current generation and, when a search trusts the copies of ``profile_id`` there, the
    hashes of the copies held by its nodes (of ``node_ids`` only, when given). One statement."""
    _, secured, _, content_hash = copy_properties(profile_id)
    params: dict[str, Any] = {
        "tenantId": tenant_id,
        "profileId": profile_id,
        "securedName": secured,
        "hashName": content_hash,
    }
    query = cypher.COPY_STATES
    if node_ids is not None:
        query, params["nodeIds"] = cypher.COPY_STATES_OF, sorted(set(node_ids))
    rows = client.read(query, params)
    if not rows or rows[0]["generation"] is None:
        return CopyStates(None)
    row = rows[0]
    return CopyStates(int(row["generation"]), bool(row["counted"]), dict(row["copies"]))


def reconciled(states: Sequence[VectorState], copies: CopyStates) -> list[VectorState]:
    """``states`` (a profile's Weaviate objects) seen with the copies on the nodes, sorted by node id:
    where the copies count, an object whose node holds no copy, or a copy made from another content
    hash, is not ``searchable`` (expansion scores the copy, not the object), and a node holding a copy
    without an object gets a state of its own, not ``searchable`` either (the indexer writes the
    vector anew, or deletes it). A copy without a hash is taken to match."""
    if not copies.counted:
        return sorted(states, key=lambda state: state.node_id)
    hashes = copies.hashes
    seen = [state if matches(state, hashes) else replace(state, searchable=False) for state in states]
    held = {state.node_id for state in states}
    seen += (VectorState(node_id, "", None, False, (), searchable=False) for node_id in hashes if node_id not in held)
    return sorted(seen, key=lambda state: state.node_id)


def matches(state: VectorState, hashes: Mapping[str, str | None]) -> bool:
    """Whether the copy of a stored vector is on its node, made from the same content hash (a copy
    without a hash is taken to match)."""
    if state.node_id not in hashes:
        return False
    copied = hashes[state.node_id]
    return copied is None or copied == state.content_hash
