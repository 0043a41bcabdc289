"""The production backend: vectors in Weaviate, the graph (and passage texts) in Neo4j.

Nothing connects at construction; the first call does, and a server that is down or silent is reported
as :class:`~brain_graph.errors.BackendUnavailableError` naming ``neo4j`` or ``weaviate`` within
``backend_timeout_s``.

Round trips of one search (warm profile cache; ``P`` queried profiles, expansion depth ``D``, hits
found, no early stop of the expansion): Weaviate ``P`` (concurrent), Neo4j ``1`` (hit nodes) + ``D``
(one per hop) + ``2`` (admitted nodes, their edges) + ``1`` (episodes, when on) + ``1`` (passage texts).
None of it depends on ``topK`` or on the number of hits. :meth:`Neo4jWeaviateBackend.round_trips`
reads the counters.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from brain_graph.stores.base import EdgeRecord, NodeRecord, ProfileIndexInfo, VectorRecord
from brain_graph.stores.neo4j_graph import Neo4jGraphStore
from brain_graph.stores.weaviate_index import VectorIndexKind, WeaviateVectorIndex

if TYPE_CHECKING:
    from brain_graph.config import Settings


class Neo4jWeaviateBackend:
    """:class:`~brain_graph.stores.base.StorageBackend` over Neo4j + Weaviate."""

    name = "neo4j-weaviate"

    def __init__(self, graph: Neo4jGraphStore, index: WeaviateVectorIndex) -> None:
        self._graph = graph
        self._index = index

    @classmethod
    def from_settings(cls, settings: Settings) -> Neo4jWeaviateBackend:
        """The backend the settings describe; connects lazily."""
        timeout = settings.backend_timeout_s
        kind: VectorIndexKind = settings.weaviate_vector_index
        return cls(
            Neo4jGraphStore(
                uri=settings.neo4j_uri,
                user=settings.neo4j_user,
                password=settings.neo4j_password,
                database=settings.neo4j_database,
                timeout_s=timeout,
            ),
            WeaviateVectorIndex(
                host=settings.weaviate_host,
                http_port=settings.weaviate_http_port,
                grpc_port=settings.weaviate_grpc_port,
                api_key=settings.weaviate_api_key,
                timeout_s=timeout,
                vector_index=kind,
            ),
        )

    @property
    def vector_index(self) -> WeaviateVectorIndex:
        return self._index

    @property
    def graph_store(self) -> Neo4jGraphStore:
        return self._graph

    @property
    def passage_source(self) -> Neo4jGraphStore:
        return self._graph

    def load(
        self,
        nodes: Sequence[NodeRecord],
        edges: Sequence[EdgeRecord],
        vectors: Sequence[VectorRecord],
        profiles: Sequence[ProfileIndexInfo],
        *,
        replace: bool,
    ) -> None:
        """Check the profiles against Weaviate (an embedder whose dimension cannot be indexed fails here,
        before anything is written), then write Neo4j, then Weaviate, in batches. Idempotent: node/edge
        MERGE and deterministic vector UUIDs. With ``replace`` the tenants of ``nodes`` are emptied first
        in both stores. Not atomic: after a failure, run the load again."""
        tenants = sorted({node.tenant_id for node in nodes}) if replace else []
        self._index.check_write(profiles, replace_tenants=tenants)
        self._graph.write(nodes, edges, replace_tenants=tenants)
        self._index.write(vectors, profiles, replace_tenants=tenants)

    def drop_tenants(self, tenants: Sequence[str]) -> None:
        """Delete everything of these tenants from both servers."""
        self._graph.drop_tenants(tenants)
        self._index.drop_tenants(tenants)

    def round_trips(self) -> dict[str, int]:
        """Requests sent so far: ``{"neo4j": statements, "weaviate": requests}``."""
        return {"neo4j": self._graph.round_trips, "weaviate": self._index.round_trips}

    def close(self) -> None:
        """Close both clients."""
        try:
            self._graph.close()
        finally:
            self._index.close()
