"""Classification of the Weaviate client's errors: unreachable server, missing tenant or collection,
rejected dimension, and their mapping to :class:`~brain_graph.core.errors.BackendUnavailableError`; the
insert deadline."""

from __future__ import annotations

import grpc  # type: ignore[import-untyped]
import httpx
from weaviate.exceptions import WeaviateBaseError, WeaviateQueryError

from brain_graph.core.errors import BackendUnavailableError, BrainGraphError

BACKEND = "weaviate"

# Errors of the client and its transports that a call reports as the backend being unavailable.
CLIENT_ERRORS: tuple[type[BaseException], ...] = (WeaviateBaseError, httpx.HTTPError, grpc.RpcError, OSError)

_CONNECTIVITY_ERRORS = {
    "WeaviateConnectionError",
    "WeaviateStartUpError",
    "WeaviateGRPCUnavailableError",
    "WeaviateClosedClientError",
    "WeaviateTimeoutError",
    "WeaviateRetryError",
}
_CONNECTIVITY_MARKS = ("unavailable", "connect", "deadline", "socket closed", "connection reset", "eof")


def is_connectivity(error: BaseException) -> bool:
    """Whether an error means the server cannot be reached (as opposed to a rejected request)."""
    if isinstance(error, BrainGraphError):
        return False
    if isinstance(error, httpx.TransportError | OSError | grpc.RpcError):
        return True
    if not isinstance(error, WeaviateBaseError):
        return False
    if type(error).__name__ in _CONNECTIVITY_ERRORS:
        return True
    text = str(error).lower()
    return any(mark in text for mark in _CONNECTIVITY_MARKS)


def is_missing(error: BaseException) -> bool:
    """Whether a query failed because its Weaviate tenant or collection does not exist (no data)."""
    text = str(error).lower()
    return isinstance(error, WeaviateQueryError) and (
        "tenant not found" in text or "could not find class" in text or "class not found" in text
    )


def is_dimension_mismatch(error: BaseException) -> bool:
    """Whether a query vector was refused for its dimension."""
    text = str(error).lower()
    return isinstance(error, WeaviateQueryError) and ("vector lengths" in text or "dimension" in text)


def insert_timeout_s(timeout_s: float) -> float:
    """The deadline of an insert request: longer than a query's (a batch of objects is written and
    indexed before the reply)."""
    return max(30.0, 6 * timeout_s)


def unavailable(where: str, error: BaseException) -> BackendUnavailableError:
    """The one-line error of a client error at ``where`` (host and ports)."""
    detail = str(error).splitlines()[0] if str(error) else type(error).__name__
    return BackendUnavailableError(BACKEND, f"{where}: {detail[:300]}")
