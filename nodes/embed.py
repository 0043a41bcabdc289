"""Step 1: validate the request and embed the query once per distinct embedder of the profiles searched."""

from __future__ import annotations

from typing import Any

from brain_graph.dataset import embedder_name
from brain_graph.errors import BackendUnavailableError, BrainGraphError
from brain_graph.requests import access_scope, read_request
from brain_graph.state import BrainSearchState
from brain_graph.steps import StepDeps


def embed(state: BrainSearchState, deps: StepDeps) -> dict[str, Any]:
    """Write the normalised ``filter`` and ``options`` and ``queryVectors`` (embedder id -> vector).

    Fails before any work on bad input or on a secured search without a principal.
    """
    request = read_request(state, deps.services)
    access_scope(request, deps.principal, deps.services)
    registry = deps.services.profiles
    profiles = registry.select(request.filter.profile_kind_in)
    vectors: dict[str, list[float]] = {}
    for profile in profiles:
        if profile.embedder_id in vectors:
            continue
        try:
            vector = registry.embedders[profile.embedder_id].embed_query(request.query_text)
        except BrainGraphError:
            raise
        except Exception as error:  # a remote embedder failing
            raise BackendUnavailableError(f"embedder {embedder_name(registry, profile)}", str(error)) from error
        vectors[profile.embedder_id] = [float(value) for value in vector]
    return {"filter": request.filter, "options": request.options, "queryVectors": vectors}
