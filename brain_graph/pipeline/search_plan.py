"""What a validated request asks of the stores, derived the same way by every step that needs it:
the vector and lexical queries, the edge types expanded over, the number of passages."""

from __future__ import annotations

from collections.abc import Mapping

from brain_graph.core.bm25 import query_terms
from brain_graph.core.wire import SearchRequest
from brain_graph.pipeline.binding import StepDeps
from brain_graph.pipeline.ranking import pack_size
from brain_graph.pipeline.services import SearchLimits
from brain_graph.stores.base import LexicalQuery, VectorQuery


def profile_queries(
    request: SearchRequest, query_vectors: Mapping[str, list[float]], deps: StepDeps
) -> list[VectorQuery]:
    """One vector query per searched profile, with its embedder's query vector (none in lexical mode)."""
    if request["options"]["retrievalMode"] == "lexical":
        return []
    registry = deps.services.profiles
    profiles = [registry.get(profile_id) for profile_id in request["profileIds"]]
    return [VectorQuery(p.profile_id, query_vectors[p.embedder_id], registry.embedder_name(p)) for p in profiles]


def lexical_queries(request: SearchRequest) -> list[LexicalQuery]:
    """One lexical query per searched profile, with the query's terms (none in vector mode, or when
    the query has no terms)."""
    terms = query_terms(request["queryText"])
    if request["options"]["retrievalMode"] == "vector" or not terms:
        return []
    return [LexicalQuery(profile_id, terms) for profile_id in request["profileIds"]]


def expansion_types(request: SearchRequest, deps: StepDeps) -> list[str]:
    """The edge types the search expands over and lists among its nodes."""
    options = request["options"]
    return list(deps.services.edges.expansion_types(options["includeSignals"], options["includeClusters"]))


def passage_count(request: SearchRequest, limits: SearchLimits) -> int:
    """How many of the best candidates get passages (``expand`` reads their texts)."""
    return min(limits.max_passages, pack_size(request["options"]["topK"], limits.max_citations))
