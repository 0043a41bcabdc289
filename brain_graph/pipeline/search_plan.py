"""What a validated request asks of the stores, derived the same way by every step that needs it:
the vector queries, the edge types expanded over, the number of passages."""

from __future__ import annotations

from collections.abc import Mapping

from brain_graph.core.wire import SearchRequest
from brain_graph.pipeline.binding import StepDeps
from brain_graph.pipeline.ranking import pack_size
from brain_graph.pipeline.services import SearchLimits
from brain_graph.stores.base import VectorQuery


def profile_queries(
    request: SearchRequest, query_vectors: Mapping[str, list[float]], deps: StepDeps
) -> list[VectorQuery]:
    """One vector query per searched profile, with its embedder's query vector."""
    registry = deps.services.profiles
    profiles = [registry.get(profile_id) for profile_id in request["profileIds"]]
    return [VectorQuery(p.profile_id, query_vectors[p.embedder_id], registry.embedder_name(p)) for p in profiles]


def expansion_types(request: SearchRequest, deps: StepDeps) -> list[str]:
    """The edge types the search expands over and lists among its nodes."""
    options = request["options"]
    return list(deps.services.edges.expansion_types(options["includeSignals"], options["includeClusters"]))


def passage_count(request: SearchRequest, limits: SearchLimits) -> int:
    """How many of the best candidates get passages (``expand`` reads their texts)."""
    return min(limits.max_passages, pack_size(request["options"]["topK"], limits.max_citations))
