"""Copies of the vectors on the Neo4j nodes, so the first hop of a search is scored in the statement
that reaches it (see VECTOR COPIES in :mod:`brain_graph.stores.neo4j.cypher`).

A node's vector of profile ``p`` is kept as little-endian float32 bytes in its property
``vector:<p>``, the bytes Weaviate stores and returns, so a copy scores bit for bit like the Weaviate
object (:func:`~brain_graph.stores.exact.exact_scores`). Property names come from profile ids and
reach Cypher only as parameters (map keys, ``n[$name]``), never as statement text.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from brain_graph.stores.base import VectorHit, VectorQuery, VectorRecord
from brain_graph.stores.exact import exact_scores
from brain_graph.stores.identity import EmbeddingMismatchError
from brain_graph.stores.neo4j import cypher
from brain_graph.stores.neo4j.client import Neo4jClient

FLOAT32 = np.dtype("<f4")


def copy_property(profile_id: str) -> str:
    """The node property holding the copy of its vector of ``profile_id``."""
    return cypher.COPIES_PREFIX + profile_id


def copy_bytes(vector: Any) -> bytes:
    """A vector as the float32 bytes Weaviate stores."""
    return np.asarray(vector, dtype=FLOAT32).tobytes()


def node_copies(vectors: Iterable[VectorRecord]) -> dict[tuple[str, str], dict[str, bytes]]:
    """The copies to set per ``(tenant, node)``, ``{property: bytes}`` (the last vector given per
    profile, as the vector index keeps it)."""
    copies: dict[tuple[str, str], dict[str, bytes]] = {}
    for vector in vectors:
        copies.setdefault((vector.tenant_id, vector.node_id), {})[copy_property(vector.profile_id)] = copy_bytes(
            vector.vector
        )
    return copies


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


def copy_rows(copies: Mapping[tuple[str, str], Mapping[str, bytes | None]]) -> dict[str, list[list[Any]]]:
    """The rows of :data:`~brain_graph.stores.neo4j.cypher.SET_LOAD_COPIES` per tenant, by node id."""
    rows: dict[str, list[list[Any]]] = {}
    for (tenant, node_id), values in sorted(copies.items()):
        rows.setdefault(tenant, []).append([node_id, dict(values)])
    return rows


def copy_chars(row: Sequence[Any]) -> int:
    """About how many characters (bytes) a copy row takes: what a load batch bounds."""
    return len(row[0]) + sum(len(value) + len(name) for name, value in row[1].items() if value is not None)


class CopiesClock:
    """The clock of vector copies (see VECTOR COPIES in :mod:`~brain_graph.stores.neo4j.cypher`)."""

    def __init__(self, client: Neo4jClient) -> None:
        self._client = client

    def read(self) -> int:
        """The clock now (read on the leader)."""
        return int(self._client.write(lambda s: self._client.commit(s, cypher.COPIES_CLOCK, {}))[0]["clock"])

    def drop(self, profile_ids: Sequence[str]) -> None:
        """Move the clock and stamp these profiles with it: their copies in every generation made
        before no longer count. One statement, none without profiles."""
        if profile_ids:
            params = {"profiles": sorted(set(profile_ids))}
            self._client.write(lambda s: self._client.commit(s, cypher.DROP_COPIES, params))


def changed_copies(
    upserts: Iterable[VectorRecord], deletions: Iterable[tuple[str, str, str]]
) -> dict[tuple[str, str], dict[str, bytes | None]]:
    """The copies a change sets per ``(tenant, node)``: deleted vectors ``(tenant, node, profile)`` as
    None (the property is removed), then upserted ones (as the change applies them)."""
    copies: dict[tuple[str, str], dict[str, bytes | None]] = {}
    for tenant, node_id, profile_id in deletions:
        copies.setdefault((tenant, node_id), {})[copy_property(profile_id)] = None
    for key, values in node_copies(upserts).items():
        copies.setdefault(key, {}).update(values)
    return copies
