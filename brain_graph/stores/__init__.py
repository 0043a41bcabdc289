"""Storage: the protocols every backend implements (:mod:`.base`), the access rule's translators
(:mod:`.access`), the embedder-identity rule (:mod:`.identity`) and the backend registry
(:mod:`.registry`). Backends live in their own modules: :mod:`.embedded` (SQLite) and
:mod:`.neo4j_weaviate` (:mod:`.neo4j` + :mod:`.weaviate`)."""

from brain_graph.stores.base import (
    AdminOperations,
    ClusterMembership,
    EdgeRecord,
    GraphStore,
    NodeRecord,
    PassageSource,
    ProfileIndexInfo,
    StorageBackend,
    TenantCounts,
    VectorHit,
    VectorIndex,
    VectorQuery,
    VectorRecord,
)
from brain_graph.stores.identity import EmbeddingMismatchError
from brain_graph.stores.registry import backend_names, build_backend, register_backend

__all__ = [
    "AdminOperations",
    "ClusterMembership",
    "EdgeRecord",
    "EmbeddingMismatchError",
    "GraphStore",
    "NodeRecord",
    "PassageSource",
    "ProfileIndexInfo",
    "StorageBackend",
    "TenantCounts",
    "VectorHit",
    "VectorIndex",
    "VectorQuery",
    "VectorRecord",
    "backend_names",
    "build_backend",
    "register_backend",
]
