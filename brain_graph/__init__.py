"""brain-graph: deterministic GraphRAG retrieval as a LangGraph graph.

>>> from brain_graph import build_graph, search_input
>>> graph = build_graph()
>>> result = graph.invoke(search_input("token refresh", "acme", secured=False))

The public API is what this module exports; everything else is internal and may change.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from brain_graph.core.contracts import (
    BrainCitation,
    BrainGraphEdge,
    BrainGraphNode,
    BrainPromptPack,
    BrainRagPassage,
    BrainSearchEpisode,
    BrainSearchFilterInput,
    BrainSearchHit,
    BrainSearchOptionsInput,
    BrainSearchRequest,
    BrainSearchResult,
)
from brain_graph.core.errors import (
    AuthorizationError,
    BackendUnavailableError,
    BrainGraphError,
    CapacityError,
    ConfigurationError,
    DatasetError,
    InvalidRequestError,
)
from brain_graph.core.security import Principal
from brain_graph.core.wire import GraphEdge, GraphNode, PromptPack, RagPassage, SearchEpisode, SearchHit
from brain_graph.embedding.hosted import ProviderConfig, ProviderEmbeddings
from brain_graph.embedding.lexical import LexicalHashEmbeddings
from brain_graph.embedding.profiles import EmbeddingProfile, ProfileRegistry, default_profiles, profiles_from_file
from brain_graph.embedding.profiles_file import ProfilesFile, read_profiles_file
from brain_graph.graphs.index import build_index_graph
from brain_graph.graphs.search import BrainSearchGraph, build_graph
from brain_graph.indexing.dataset import Dataset, example_dataset_path, load_dataset, read_dataset
from brain_graph.indexing.hooks import GraphWriter
from brain_graph.indexing.indexer import Indexer
from brain_graph.indexing.report import IndexReport
from brain_graph.pipeline.config import build_services
from brain_graph.pipeline.ranking import GraphScoring
from brain_graph.pipeline.services import SearchLimits, SearchServices
from brain_graph.pipeline.state import BrainSearchContext, BrainSearchInput, BrainSearchOutput, search_input
from brain_graph.stores import AdminOperations, StorageBackend, build_backend, register_backend
from brain_graph.stores.embedded import EmbeddedStore

if TYPE_CHECKING:
    from brain_graph.stores.neo4j_weaviate.backend import Neo4jWeaviateBackend


def __getattr__(name: str) -> Any:
    """The server backend is imported on first use (its clients are slow to import)."""
    if name == "Neo4jWeaviateBackend":
        from brain_graph.stores.neo4j_weaviate.backend import Neo4jWeaviateBackend

        return Neo4jWeaviateBackend
    raise AttributeError(f"module 'brain_graph' has no attribute {name!r}")


__all__ = [
    "AdminOperations",
    "AuthorizationError",
    "BackendUnavailableError",
    "BrainCitation",
    "BrainGraphEdge",
    "BrainGraphError",
    "BrainGraphNode",
    "BrainPromptPack",
    "BrainRagPassage",
    "BrainSearchContext",
    "BrainSearchEpisode",
    "BrainSearchFilterInput",
    "BrainSearchGraph",
    "BrainSearchHit",
    "BrainSearchInput",
    "BrainSearchOptionsInput",
    "BrainSearchOutput",
    "BrainSearchRequest",
    "BrainSearchResult",
    "CapacityError",
    "ConfigurationError",
    "Dataset",
    "DatasetError",
    "EmbeddedStore",
    "EmbeddingProfile",
    "GraphEdge",
    "GraphNode",
    "GraphScoring",
    "GraphWriter",
    "IndexReport",
    "Indexer",
    "InvalidRequestError",
    "LexicalHashEmbeddings",
    "Neo4jWeaviateBackend",
    "Principal",
    "ProfileRegistry",
    "ProfilesFile",
    "PromptPack",
    "ProviderConfig",
    "ProviderEmbeddings",
    "RagPassage",
    "SearchEpisode",
    "SearchHit",
    "SearchLimits",
    "SearchServices",
    "StorageBackend",
    "build_backend",
    "build_graph",
    "build_index_graph",
    "build_services",
    "default_profiles",
    "example_dataset_path",
    "load_dataset",
    "profiles_from_file",
    "read_dataset",
    "read_profiles_file",
    "register_backend",
    "search_input",
]
