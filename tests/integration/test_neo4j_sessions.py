"""Each thread reads on its own Neo4j session, reused by its later reads and closed when the thread
ends (a host that starts a thread per request does not accumulate sessions)."""

from __future__ import annotations

import gc
import threading
import warnings

import pytest

from tests.integration.servers import server_backend

pytestmark = pytest.mark.integration


def test_a_threads_read_session_is_reused_and_closed_when_the_thread_ends() -> None:
    backend = server_backend()
    client = backend.neo4j
    try:

        def read() -> None:
            assert [record["one"] for record in client.read("RETURN 1 AS one", {})] == [1]

        read()
        read()
        assert len(client._sessions) == 1  # the main thread's, reused
        opened = []
        with warnings.catch_warnings():
            warnings.simplefilter("error", ResourceWarning)  # an unclosed session would warn when collected
            for _ in range(10):
                thread = threading.Thread(target=read)
                thread.start()
                thread.join()
                opened.append(len(client._sessions))
            gc.collect()
        assert max(opened) <= 2
        assert len(client._sessions) == 1  # only the main thread's is left
    finally:
        backend.close()
    assert len(client._sessions) == 0
