"""The gRPC search channel against a port nobody listens on: a typed error naming Weaviate, after the
short bounded retries for a server that is starting (:data:`RETRY_DELAYS_S`), never a hang."""

from __future__ import annotations

import time

import pytest

from brain_graph.errors import BackendUnavailableError
from brain_graph.stores.weaviate.grpc_search import RETRY_DELAYS_S, GrpcSearch, search_request
from tests.helpers import closed_port


def test_a_refused_connection_is_retried_briefly_then_named() -> None:
    channel = GrpcSearch(host="127.0.0.1", port=closed_port(), api_key="", timeout_s=5.0)
    started = time.monotonic()
    try:
        with pytest.raises(BackendUnavailableError) as info:
            channel.search([search_request(collection="C", limit=1)])
    finally:
        channel.close()
    elapsed = time.monotonic() - started
    assert info.value.backend == "weaviate"
    assert sum(RETRY_DELAYS_S) <= elapsed < sum(RETRY_DELAYS_S) + 2.0
    assert "\n" not in str(info.value)
