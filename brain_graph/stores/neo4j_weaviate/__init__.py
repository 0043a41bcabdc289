"""The production backend: Neo4j for the graph, Weaviate for the vectors (:mod:`.backend`), with the
combined search reads (:mod:`.search_reads`), one package per server (:mod:`.neo4j`, :mod:`.weaviate`).

The backend class is imported on first use: the server clients are slow to import."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from brain_graph.stores.neo4j_weaviate.backend import Neo4jWeaviateBackend


def __getattr__(name: str) -> Any:
    if name == "Neo4jWeaviateBackend":
        from brain_graph.stores.neo4j_weaviate.backend import Neo4jWeaviateBackend

        return Neo4jWeaviateBackend
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["Neo4jWeaviateBackend"]
