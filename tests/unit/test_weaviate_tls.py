"""``WEAVIATE_SECURE``: with it, both Weaviate connections (gRPC search, the client's REST) open with a TLS
handshake; without it, in plain text. Checked on the wire: a local socket records the first bytes each
connection sends (a TLS record starts with 0x16 0x03, HTTP/2's preface with ``PRI``, HTTP/1 with a
method), then closes, so each call ends in a typed error naming Weaviate."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator

import pytest

from brain_graph.core.errors import BackendUnavailableError
from brain_graph.stores.neo4j_weaviate.backend import Neo4jWeaviateSettings
from brain_graph.stores.neo4j_weaviate.weaviate.grpc_search import GrpcSearch, search_request
from brain_graph.stores.neo4j_weaviate.weaviate.index import WeaviateVectorIndex
from tests.helpers import closed_port

TLS_HANDSHAKE = b"\x16\x03"


class FirstBytes:
    """A local TCP server recording the first bytes of every connection, then closing it."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen()
        self.port = int(self.sock.getsockname()[1])
        self.seen: list[bytes] = []
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                conn.settimeout(2)
                try:
                    self.seen.append(conn.recv(16))
                except OSError:
                    self.seen.append(b"")

    def close(self) -> None:
        self.sock.close()


@pytest.fixture
def server() -> Iterator[FirstBytes]:
    recorder = FirstBytes()
    yield recorder
    recorder.close()


@pytest.mark.parametrize("secure", [True, False])
def test_grpc_search_speaks_tls_only_when_secure(server: FirstBytes, secure: bool) -> None:
    channel = GrpcSearch(host="127.0.0.1", port=server.port, api_key="k", timeout_s=2.0, secure=secure)
    try:
        with pytest.raises(BackendUnavailableError):
            channel.search([search_request(collection="C", limit=1)])
    finally:
        channel.close()
    assert server.seen
    assert all(first.startswith(TLS_HANDSHAKE) == secure for first in server.seen if first)
    if not secure:
        assert any(first.startswith(b"PRI * HTTP/2") for first in server.seen)


@pytest.mark.parametrize("secure", [True, False])
def test_the_rest_client_speaks_tls_only_when_secure(server: FirstBytes, secure: bool) -> None:
    index = WeaviateVectorIndex(
        host="127.0.0.1", http_port=server.port, grpc_port=closed_port(), api_key="k", timeout_s=2.0, secure=secure
    )
    try:
        with pytest.raises(BackendUnavailableError):
            index.recorded_profiles()  # one REST read of the schema
    finally:
        index.close()
    first = [data for data in server.seen if data]
    assert first
    assert first[0].startswith(TLS_HANDSHAKE) == secure


def test_the_setting_is_read_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WEAVIATE_SECURE", "true")
    assert Neo4jWeaviateSettings().weaviate_secure is True
    monkeypatch.delenv("WEAVIATE_SECURE")
    assert Neo4jWeaviateSettings().weaviate_secure is False
