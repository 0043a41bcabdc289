"""The gRPC search channel: against a port nobody listens on, a typed error naming Weaviate after the
short bounded retries for a server that is starting (:data:`RETRY_DELAYS_S`, recorded rather than
waited for), never a hang, for searches and insert batches; a batch's requests in flight together,
their replies in order (over a fake stub)."""

from __future__ import annotations

import threading
from types import SimpleNamespace

import grpc  # type: ignore[import-untyped]
import pytest
from weaviate.proto.v1 import batch_pb2

from brain_graph.core.errors import BackendUnavailableError
from brain_graph.stores.neo4j_weaviate.weaviate import grpc_search
from brain_graph.stores.neo4j_weaviate.weaviate.grpc_search import (
    RETRY_DELAYS_S,
    GrpcSearch,
    _RequestFailedError,
    search_request,
)
from tests.helpers import closed_port


@pytest.fixture
def slept(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The pauses the channel takes between attempts, recorded instead of slept (the retries' own clock)."""
    pauses: list[float] = []
    monkeypatch.setattr(grpc_search, "time", SimpleNamespace(sleep=pauses.append))
    return pauses


def test_a_refused_connection_is_retried_briefly_then_named(slept: list[float]) -> None:
    channel = GrpcSearch(host="127.0.0.1", port=closed_port(), api_key="", timeout_s=5.0)
    try:
        with pytest.raises(BackendUnavailableError) as info:
            channel.search([search_request(collection="C", limit=1)])
    finally:
        channel.close()
    assert info.value.backend == "weaviate"
    assert slept == list(RETRY_DELAYS_S)  # one attempt after each pause, then the error
    assert sum(RETRY_DELAYS_S) < 1.0  # a stopped server is named within a second, not after the timeout
    assert "\n" not in str(info.value)


class _Failed(grpc.RpcError):  # type: ignore[misc]
    def __init__(self, code: grpc.StatusCode, details: str) -> None:
        self._code, self._details = code, details

    def code(self) -> grpc.StatusCode:
        return self._code

    def details(self) -> str:
        return self._details


class _Stub:
    """A ``Weaviate`` stub whose ``Search`` answers by request: a reply, or raises the error given."""

    def __init__(self, outcomes: dict[str, object], meet: threading.Barrier | None = None) -> None:
        self.Search = self._search
        self._outcomes = outcomes
        self._meet = meet
        self.threads: dict[str, str] = {}  # request -> the thread that sent it

    def _search(self, request: object, *, timeout: float, metadata: object) -> object:
        self.threads[str(request)] = threading.current_thread().name
        if self._meet is not None:
            self._meet.wait(timeout=5)  # broken (an error) unless every request of the batch is in flight
        outcome = self._outcomes[str(request)]
        if isinstance(outcome, Exception):
            raise outcome
        return outcome


def _channel() -> GrpcSearch:
    return GrpcSearch(host="127.0.0.1", port=closed_port(), api_key="", timeout_s=5.0)


def test_a_batch_is_in_flight_together_and_answered_in_order() -> None:
    stub = _Stub({"a": "reply-a", "b": "reply-b", "c": "reply-c"}, threading.Barrier(3))
    channel = _channel()
    try:
        assert channel._send(stub, ["a", "b", "c"]) == ["reply-a", "reply-b", "reply-c"]
    finally:
        channel.close()
    assert stub.threads["a"] == threading.current_thread().name  # the first request on the calling thread
    assert len(set(stub.threads.values())) == 3


def test_a_missing_tenant_is_none_and_another_failure_names_its_request() -> None:
    missing = _Failed(grpc.StatusCode.UNKNOWN, "tenant not found: x")
    broken = _Failed(grpc.StatusCode.INTERNAL, "boom")
    channel = _channel()
    try:
        assert channel._send(_Stub({"a": "reply-a", "b": missing}), ["a", "b"]) == ["reply-a", None]
        with pytest.raises(_RequestFailedError) as info:
            channel._send(_Stub({"a": "reply-a", "b": "reply-b", "c": broken}), ["a", "b", "c"])
    finally:
        channel.close()
    assert info.value.index == 2
    assert info.value.error is broken


def test_an_insert_batch_to_a_refused_port_is_retried_briefly_then_named(slept: list[float]) -> None:
    channel = _channel()
    try:
        with pytest.raises(BackendUnavailableError) as info:
            channel.batch_objects(batch_pb2.BatchObjectsRequest())
    finally:
        channel.close()
    assert info.value.backend == "weaviate"
    assert slept == list(RETRY_DELAYS_S)
    assert channel.insert_timeout_s > channel.timeout_s


def test_a_refused_insert_batch_names_weaviate_even_when_it_mentions_a_dimension() -> None:
    class Refusing:
        def BatchObjects(self, request: object, *, timeout: float, metadata: object) -> object:  # noqa: N802
            raise _Failed(grpc.StatusCode.INVALID_ARGUMENT, "vector lengths don't match: 3 vs 512")

    channel = _channel()
    channel._current = lambda: (None, Refusing())  # type: ignore[method-assign]
    try:
        with pytest.raises(BackendUnavailableError, match="vector lengths"):  # not DimensionRejectedError
            channel.batch_objects(batch_pb2.BatchObjectsRequest())
    finally:
        channel.close()
