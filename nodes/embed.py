"""Step 1: validate the request once, and embed the query once per distinct embedder of the profiles searched."""

from __future__ import annotations

import logging
from typing import TypedDict

from brain_graph.core.errors import BackendUnavailableError, BrainGraphError
from brain_graph.core.wire import SearchRequest
from brain_graph.pipeline.binding import StepDeps
from brain_graph.pipeline.requests import read_request
from brain_graph.pipeline.state import BrainSearchState

logger = logging.getLogger(__name__)

# An embedder raising one of these has a bug (its own or its configuration's): it propagates with its
# own traceback instead of reading as an outage to retry.
PROGRAMMING_ERRORS = (
    TypeError,
    AttributeError,
    KeyError,
    IndexError,
    NameError,
    NotImplementedError,
    AssertionError,
    ImportError,
    RecursionError,
)


class EmbedUpdate(TypedDict):
    request: SearchRequest
    queryVectors: dict[str, list[float]]


def embed(state: BrainSearchState, deps: StepDeps) -> EmbedUpdate:
    """Write ``request`` (the validated, normalised request every later step reads) and
    ``queryVectors`` (embedder id -> vector; none in lexical mode).

    Fails before any work on bad input or on a secured search without a principal. An embedder that
    fails is :class:`~brain_graph.core.errors.BackendUnavailableError` naming it (its traceback logged as a
    warning of this module's logger), unless the failure is a bug (:data:`PROGRAMMING_ERRORS`), which
    propagates unchanged.
    """
    request = read_request(state, deps.services)
    deps.scope(request)  # fails closed before any embedding or store call
    registry = deps.services.profiles
    vectors: dict[str, list[float]] = {}
    if request["options"]["retrievalMode"] == "lexical":  # nothing is scored by similarity
        return {"request": request, "queryVectors": vectors}
    for profile_id in request["profileIds"]:
        profile = registry.get(profile_id)
        if profile.embedder_id in vectors:
            continue
        try:
            vector = registry.embedders[profile.embedder_id].embed_query(request["queryText"])
        except BrainGraphError:
            raise
        except PROGRAMMING_ERRORS:
            raise
        except Exception as error:  # a remote embedder failing: timeouts, connections, the provider's errors
            name = registry.embedder_name(profile)
            logger.warning("embedder %s failed on a query", name, exc_info=True)
            raise BackendUnavailableError(f"embedder {name}", str(error)) from error
        vectors[profile.embedder_id] = [float(value) for value in vector]
    return {"request": request, "queryVectors": vectors}
