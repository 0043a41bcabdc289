"""Weaviate's gRPC ``Search`` and ``BatchObjects`` called directly: the requests of a read sent together
on one channel, the replies decoded without building the client's Python objects (vectors as numpy
arrays); insert batches built by :mod:`.writes` sent as they are.

The client's query API builds a Python float per returned vector value and several Python objects
per object. Here a search builds the ``SearchRequest`` messages itself (``weaviate.proto.v1``, the
protocol the client speaks), sends them together on a synchronous channel (one round trip of wall
time for all profiles, no event-loop hop) and reads the replies' raw ``vector_bytes``. The first
request of a batch is a blocking call on the calling thread and the others blocking calls on a small
pool of reused threads (a gRPC future would start a polling thread per batch). Why and how much it
saves: docs/internals/weaviate.md.

Bounds: every request carries the client's own deadline (``timeout_s``; an insert its longer one,
:func:`~brain_graph.stores.neo4j_weaviate.weaviate.errors.insert_timeout_s`). The channel retries a
lost connection quickly (reconnect backoff 100 ms to 1 s); when a request finds the server
unreachable on a channel that had connected before, the channel is replaced and the request sent
again at once, so a restarted server is used at once. A refused connection is retried on a new
channel after :data:`RETRY_DELAYS_S` (about 0.75 s in all), so a stopped server is reported within
a second and one that is starting is waited for that long. A deadline is not retried.

Consistency: every ``Search`` is sent at the read level and every ``BatchObjects`` at the write level
of the :class:`~brain_graph.stores.neo4j_weaviate.weaviate.replication.Replication` given (set on the
request messages here, whatever they carried).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, TypeVar

import grpc  # type: ignore[import-untyped]
import numpy as np
import numpy.typing as npt
from weaviate.proto.v1 import search_get_pb2, weaviate_pb2_grpc

from brain_graph.core.errors import BackendUnavailableError
from brain_graph.core.filters import NodeFacets
from brain_graph.stores.neo4j_weaviate.weaviate.errors import BACKEND, insert_timeout_s
from brain_graph.stores.neo4j_weaviate.weaviate.facets import reply_facets, reply_text, reply_texts
from brain_graph.stores.neo4j_weaviate.weaviate.replication import Replication

QUERY_MAX_RESULTS = 10_000  # Weaviate's default QUERY_MAXIMUM_RESULTS: the most objects a search returns
MAX_MESSAGE_BYTES = 104_858_000  # the client's limit, matching the server's
FLOAT32 = np.dtype("<f4")
_UNREACHABLE = (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED)
# Waits before sending again to a server that refused the connection (about 0.75 s in all, as the
# client retries UNAVAILABLE): a server just (re)started may accept gRPC a moment after it reports ready.
RETRY_DELAYS_S = (0.05, 0.1, 0.2, 0.4)
_MISSING_MARKS = ("tenant not found", "could not find class", "class not found", "no such tenant")
_DIMENSION_MARKS = ("vector lengths", "dimension")
_CHANNEL_OPTIONS = (
    ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
    ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
    ("grpc.initial_reconnect_backoff_ms", 100),
    ("grpc.min_reconnect_backoff_ms", 100),
    ("grpc.max_reconnect_backoff_ms", 1000),
)
T = TypeVar("T")
MAX_SENDERS = 16  # threads sending a batch's other requests (created when needed, shared by concurrent searches)


class DimensionRejectedError(Exception):
    """Weaviate refused the query vector of request ``index`` for its dimension (``details``: its message)."""

    def __init__(self, index: int, details: str) -> None:
        super().__init__(details)
        self.index = index
        self.details = details


class _RequestFailedError(Exception):
    """Request ``index`` of a batch failed with ``error``."""

    def __init__(self, index: int, error: grpc.RpcError) -> None:
        super().__init__(index)
        self.index = index
        self.error = error


@dataclass(frozen=True)
class FoundObject:
    """One object of a reply: the properties a search reads, its distance, its stored vector, its
    lexical document ("" when not read) and its facets (those not read unset)."""

    node_id: str
    tenant_id: str
    project_key: str | None
    secured: bool
    acl: tuple[str, ...]
    distance: float | None
    vector: bytes
    lexical: str = ""
    facets: NodeFacets = field(default_factory=NodeFacets)


def found_objects(reply: Any) -> list[FoundObject]:
    """The objects of a ``SearchReply``, in its order."""
    found = []
    for result in reply.results:
        fields = result.properties.non_ref_props.fields
        metadata = result.metadata
        secured = fields.get("secured")
        vectors = metadata.vectors
        found.append(
            FoundObject(
                node_id=reply_text(fields, "nodeId") or "",
                tenant_id=reply_text(fields, "tenantId") or "",
                project_key=reply_text(fields, "projectKey"),
                secured=bool(secured is not None and secured.bool_value),
                acl=reply_texts(fields, "acl"),
                distance=float(metadata.distance) if metadata.distance_present else None,
                vector=bytes(vectors[0].vector_bytes) if len(vectors) else bytes(metadata.vector_bytes),
                lexical=reply_text(fields, "lexical") or "",
                facets=reply_facets(fields),
            )
        )
    return found


def vector_matrix(objects: Sequence[FoundObject], dimension: int) -> npt.NDArray[np.float32] | None:
    """The objects' stored vectors as one (n, dimension) float32 array; None when one of them has
    another dimension."""
    if any(len(obj.vector) != dimension * FLOAT32.itemsize for obj in objects):
        return None
    return np.frombuffer(b"".join(obj.vector for obj in objects), dtype=FLOAT32).reshape(len(objects), dimension)


class GrpcSearch:
    """A synchronous gRPC channel to Weaviate's ``Search`` and ``BatchObjects``, opened on first use."""

    def __init__(
        self,
        *,
        host: str,
        port: int,
        api_key: str,
        timeout_s: float,
        secure: bool = False,
        replication: Replication | None = None,
    ) -> None:
        self.target = f"{host}:{port}"
        self.replication = replication or Replication()
        self.timeout_s = timeout_s
        self.insert_timeout_s = insert_timeout_s(timeout_s)
        self.secure = secure  # TLS with the system's root certificates
        self._metadata = (("authorization", f"Bearer {api_key}"),) if api_key else ()
        self._lock = threading.Lock()
        self._channel: Any = None
        self._stub: Any = None
        self._connected = False  # a reply came on this channel: an unreachable server now means it went away
        self._senders: ThreadPoolExecutor | None = None

    def _current(self) -> tuple[Any, Any]:
        """The channel and its ``Weaviate`` stub, opened if needed."""
        with self._lock:
            if self._channel is None:
                self._channel = (
                    grpc.secure_channel(self.target, grpc.ssl_channel_credentials(), options=_CHANNEL_OPTIONS)
                    if self.secure
                    else grpc.insecure_channel(self.target, options=_CHANNEL_OPTIONS)
                )
                self._stub = weaviate_pb2_grpc.WeaviateStub(self._channel)  # type: ignore[no-untyped-call]
                self._connected = False
            return self._channel, self._stub

    def _replace(self, channel: Any) -> bool:
        """Drop ``channel`` if it is still the current one and had connected; whether to try again."""
        with self._lock:
            if self._channel is not channel:
                return True  # another thread replaced it already
            retry = self._connected
            self._channel = self._stub = None
        channel.close()
        return retry

    def search(self, requests: Sequence[Any]) -> list[Any | None]:
        """Send ``requests`` together and return their replies in order (None: the request's tenant or
        collection does not exist). Raises :class:`DimensionRejectedError` for a refused dimension and
        :class:`~brain_graph.core.errors.BackendUnavailableError` when the server cannot be reached."""
        if not requests:
            return []
        for request in requests:
            request.consistency_level = self.replication.grpc_read
        return self._retrying(lambda stub: self._send(stub, requests), searching=True)

    def batch_objects(self, request: Any) -> Any:
        """One ``BatchObjects`` call (an upsert: sending it again is safe) with the insert deadline; its
        reply, whose ``errors`` name the objects the server refused. Raises
        :class:`~brain_graph.core.errors.BackendUnavailableError` when the call fails."""
        request.consistency_level = self.replication.grpc_write

        def send(stub: Any) -> Any:
            try:
                reply = stub.BatchObjects(request, timeout=self.insert_timeout_s, metadata=self._metadata)
            except grpc.RpcError as error:
                raise _RequestFailedError(0, error) from None
            with self._lock:
                self._connected = True
            return reply

        return self._retrying(send, searching=False)

    def _retrying(self, send: Callable[[Any], T], *, searching: bool) -> T:
        """``send(stub)`` on the current channel; a refused connection is sent again (on a new channel at
        once when the server went away since the last reply, else after :data:`RETRY_DELAYS_S`)."""
        delays = iter(RETRY_DELAYS_S)
        reconnected = False
        while True:
            channel, stub = self._current()
            try:
                return send(stub)
            except _RequestFailedError as failed:
                if failed.error.code() != grpc.StatusCode.UNAVAILABLE:
                    raise self._mapped(failed, searching) from None
                if self._replace(channel) and not reconnected:
                    reconnected = True  # the server went away since the last reply: a new channel at once
                    continue
                delay = next(delays, None)
                if delay is None:
                    raise self._mapped(failed, searching) from None
                time.sleep(delay)

    def _send(self, stub: Any, requests: Sequence[Any]) -> list[Any | None]:
        """Every request's reply (None: tenant or collection missing), once all of them have ended;
        the first failure otherwise."""
        others = [self._pool().submit(self._call, stub, request) for request in requests[1:]]
        outcomes = [self._call(stub, requests[0]), *(other.result() for other in others)]
        replies: list[Any | None] = []
        for index, outcome in enumerate(outcomes):
            if isinstance(outcome, grpc.RpcError):
                details = str(outcome.details() or "").lower()
                if outcome.code() == grpc.StatusCode.NOT_FOUND or any(mark in details for mark in _MISSING_MARKS):
                    replies.append(None)
                    continue
                raise _RequestFailedError(index, outcome)
            replies.append(outcome)
        with self._lock:
            self._connected = True
        return replies

    def _call(self, stub: Any, request: Any) -> Any:
        """One blocking ``Search`` call with the deadline: its reply, or the ``grpc.RpcError`` it ended with."""
        try:
            return stub.Search(request, timeout=self.timeout_s, metadata=self._metadata)
        except grpc.RpcError as error:
            return error

    def _pool(self) -> ThreadPoolExecutor:
        """The threads sending all but the first request of a batch (started on first use)."""
        with self._lock:
            if self._senders is None:
                self._senders = ThreadPoolExecutor(MAX_SENDERS, thread_name_prefix="brain-graph-weaviate-grpc")
            return self._senders

    def _mapped(self, failed: _RequestFailedError, searching: bool) -> Exception:
        """A search's refused dimension as :class:`DimensionRejectedError`; anything else names the backend."""
        error = failed.error
        details = str(error.details() or error.code().name).splitlines()[0][:300]
        refused = searching and error.code() not in _UNREACHABLE
        if refused and any(mark in details.lower() for mark in _DIMENSION_MARKS):
            return DimensionRejectedError(failed.index, details)
        return BackendUnavailableError(BACKEND, f"{self.target}: {details}")

    def close(self) -> None:
        with self._lock:
            channel, self._channel, self._stub = self._channel, None, None
            senders, self._senders = self._senders, None
        if channel is not None:
            channel.close()
        if senders is not None:
            senders.shutdown(wait=False)


def search_request(**fields: Any) -> Any:
    """A ``SearchRequest`` with the current API flags set (properties as ``non_ref_props``)."""
    return search_get_pb2.SearchRequest(uses_123_api=True, uses_125_api=True, uses_127_api=True, **fields)
