"""brain-graph: deterministic GraphRAG retrieval as a LangGraph graph.

>>> from brain_graph import build_graph, search_input
>>> graph = build_graph()
>>> result = graph.invoke(search_input("token refresh", "acme", secured=False))

The public API is what this module exports (each name imported on first use, so that
``import brain_graph`` costs nothing until a name is used); everything else is internal and may change.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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
    from brain_graph.stores.neo4j_weaviate.backend import Neo4jWeaviateBackend

_EXPORTS: dict[str, str] = {
    "AdminOperations": "brain_graph.stores",
    "AuthorizationError": "brain_graph.core.errors",
    "BackendUnavailableError": "brain_graph.core.errors",
    "BrainCitation": "brain_graph.core.contracts",
    "BrainGraphEdge": "brain_graph.core.contracts",
    "BrainGraphError": "brain_graph.core.errors",
    "BrainGraphNode": "brain_graph.core.contracts",
    "BrainPromptPack": "brain_graph.core.contracts",
    "BrainRagPassage": "brain_graph.core.contracts",
    "BrainSearchContext": "brain_graph.pipeline.state",
    "BrainSearchEpisode": "brain_graph.core.contracts",
    "BrainSearchFilterInput": "brain_graph.core.contracts",
    "BrainSearchGraph": "brain_graph.graphs.search",
    "BrainSearchHit": "brain_graph.core.contracts",
    "BrainSearchInput": "brain_graph.pipeline.state",
    "BrainSearchOptionsInput": "brain_graph.core.contracts",
    "BrainSearchOutput": "brain_graph.pipeline.state",
    "BrainSearchRequest": "brain_graph.core.contracts",
    "BrainSearchResult": "brain_graph.core.contracts",
    "CapacityError": "brain_graph.core.errors",
    "ConfigurationError": "brain_graph.core.errors",
    "Dataset": "brain_graph.indexing.dataset",
    "DatasetError": "brain_graph.core.errors",
    "EmbeddedStore": "brain_graph.stores.embedded",
    "EmbeddingProfile": "brain_graph.embedding.profiles",
    "GraphEdge": "brain_graph.core.wire",
    "GraphNode": "brain_graph.core.wire",
    "GraphScoring": "brain_graph.pipeline.ranking",
    "GraphWriter": "brain_graph.indexing.hooks",
    "IndexReport": "brain_graph.indexing.report",
    "Indexer": "brain_graph.indexing.indexer",
    "InvalidRequestError": "brain_graph.core.errors",
    "LexicalHashEmbeddings": "brain_graph.embedding.lexical",
    "Neo4jWeaviateBackend": "brain_graph.stores.neo4j_weaviate.backend",
    "Principal": "brain_graph.core.security",
    "ProfileRegistry": "brain_graph.embedding.profiles",
    "ProfilesFile": "brain_graph.embedding.profiles_file",
    "PromptPack": "brain_graph.core.wire",
    "ProviderConfig": "brain_graph.embedding.hosted",
    "ProviderEmbeddings": "brain_graph.embedding.hosted",
    "RagPassage": "brain_graph.core.wire",
    "SearchEpisode": "brain_graph.core.wire",
    "SearchHit": "brain_graph.core.wire",
    "SearchLimits": "brain_graph.pipeline.services",
    "SearchServices": "brain_graph.pipeline.services",
    "StorageBackend": "brain_graph.stores",
    "build_backend": "brain_graph.stores",
    "build_graph": "brain_graph.graphs.search",
    "build_index_graph": "brain_graph.graphs.index",
    "build_services": "brain_graph.pipeline.config",
    "default_profiles": "brain_graph.embedding.profiles",
    "example_dataset_path": "brain_graph.indexing.dataset",
    "load_dataset": "brain_graph.indexing.dataset",
    "profiles_from_file": "brain_graph.embedding.profiles",
    "read_dataset": "brain_graph.indexing.dataset",
    "read_profiles_file": "brain_graph.embedding.profiles_file",
    "register_backend": "brain_graph.stores",
    "search_input": "brain_graph.pipeline.state",
}
"""Each public name and the module that defines it."""


def __getattr__(name: str) -> Any:
    """The public name ``name``, imported from its module on first use and then cached here."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'brain_graph' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])


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
