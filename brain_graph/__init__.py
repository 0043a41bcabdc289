"""brain-graph: deterministic GraphRAG retrieval as a LangGraph graph.

>>> from brain_graph import build_graph
>>> graph = build_graph()
>>> result = graph.invoke({"queryText": "token refresh", "filter": {"tenantId": "acme", "secured": False}})
"""

from brain_graph.contracts import (
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
from brain_graph.embeddings import LexicalHashEmbeddings
from brain_graph.errors import (
    AuthorizationError,
    BackendUnavailableError,
    BrainGraphError,
    ConfigurationError,
    DatasetError,
    InvalidRequestError,
)
from brain_graph.graph import build_graph
from brain_graph.security import Principal
from brain_graph.services import SearchLimits, SearchServices
from brain_graph.state import BrainSearchContext

__all__ = [
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
    "BrainSearchHit",
    "BrainSearchOptionsInput",
    "BrainSearchRequest",
    "BrainSearchResult",
    "ConfigurationError",
    "DatasetError",
    "InvalidRequestError",
    "LexicalHashEmbeddings",
    "Principal",
    "SearchLimits",
    "SearchServices",
    "build_graph",
]
