"""Failures: a down, unreachable or silent server gives BackendUnavailableError naming it within the
configured timeout; after a restart the next search works again with the same backend object. The
searches here run with degradation off (``degrade_without_graph``), so a Neo4j that is down fails them
too; what a search does instead by default is tests/integration/test_degradation.py.

These tests stop real servers (SIGTERM to the pid ``scripts/services`` recorded, which keeps the data,
then ``scripts/services restart``), so ``conftest.py`` runs them after every other test, and each
restarts its server in ``finally``.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path
from typing import Any, cast

import pytest

from brain_graph.core.contracts import BrainSearchResult
from brain_graph.core.errors import BackendUnavailableError
from brain_graph.graphs.search import build_graph
from brain_graph.pipeline.services import SearchServices
from brain_graph.pipeline.state import BrainSearchInput
from brain_graph.stores.neo4j_weaviate.backend import Neo4jWeaviateBackend
from tests.helpers import closed_port
from tests.integration.conftest import Loaded
from tests.integration.servers import server_backend, services

pytestmark = pytest.mark.integration
TIMEOUT = 3.0  # timeout_s of the backends under test (BRAIN_GRAPH_BACKEND_TIMEOUT)
# Allowed on top of the timeout (thread hand-offs, scheduling on a busy machine). Twice the timeout in
# all still tells a search bounded by it from one bounded by the clients' own limits (30-60 s).
SLACK = TIMEOUT


def strict(backend: Neo4jWeaviateBackend) -> SearchServices:
    """Services that fail a search whose Neo4j is down instead of degrading it."""
    return SearchServices(backend=backend, degrade_without_graph=False)


def warm_up(request: dict[str, Any]) -> None:
    """One search through a separate backend with a generous timeout: a restarted Neo4j plans each
    statement again (about a second for the combined reads on a busy machine), which is not what the
    recovery check after it measures."""
    backend = server_backend(timeout_s=60.0)
    try:
        build_graph(SearchServices(backend=backend)).invoke(cast(BrainSearchInput, request))
    finally:
        backend.close()


def timed_failure(services_: SearchServices, request: dict[str, Any]) -> tuple[BackendUnavailableError, float]:
    graph = build_graph(services_)
    started = time.monotonic()
    with pytest.raises(BackendUnavailableError) as info:
        graph.invoke(cast(BrainSearchInput, request))
    return info.value, time.monotonic() - started


@pytest.mark.parametrize("down", ["both", "weaviate", "neo4j"])
def test_construction_does_not_connect_and_closed_ports_fail_fast(loaded: Loaded, down: str) -> None:
    """A search reads the tenant's generation from Neo4j first, so with both down Neo4j is named."""
    closed: dict[str, Any] = {}
    if down in ("both", "neo4j"):
        closed["neo4j_uri"] = f"bolt://127.0.0.1:{closed_port()}"
    if down in ("both", "weaviate"):
        closed["weaviate_http_port"] = closed_port()
    backend = server_backend(timeout_s=TIMEOUT, **closed)
    try:
        error, elapsed = timed_failure(strict(backend), outage_request(loaded))
        assert error.backend == ("neo4j" if down == "both" else down)
        assert elapsed < TIMEOUT  # a refused connection is not waited on until the timeout
    finally:
        backend.close()


@pytest.mark.parametrize("which", ["weaviate", "neo4j"])
def test_silent_server_times_out_within_the_bound(loaded: Loaded, silent_port: int, which: str) -> None:
    silent: dict[str, Any] = (
        {"weaviate_http_port": silent_port, "weaviate_grpc_port": closed_port()}
        if which == "weaviate"
        else {"neo4j_uri": f"bolt://127.0.0.1:{silent_port}"}
    )
    backend = server_backend(timeout_s=TIMEOUT, **silent)
    try:
        error, elapsed = timed_failure(strict(backend), outage_request(loaded))
        assert error.backend == which
        assert TIMEOUT - 0.5 <= elapsed <= TIMEOUT + SLACK, elapsed
        print(f"\nsilent {which}: BackendUnavailableError after {elapsed * 1000:.0f} ms: {error}")
    finally:
        backend.close()


def stop_process(service: str) -> None:
    """SIGTERM to the server ``scripts/services`` started (data kept), and wait for it to exit."""
    run_dir = Path(os.environ.get("BRAIN_GRAPH_RUN_DIR", "/tmp/brain-graph-services"))
    pid = int((run_dir / service / "pid").read_text().strip())
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + 60
    while Path(f"/proc/{pid}").exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not Path(f"/proc/{pid}").exists(), f"{service} (pid {pid}) did not stop"


def outage_request(loaded: Loaded) -> dict[str, Any]:
    tenant = loaded.tenants[0]
    title = next(n.title for n in loaded.dataset.nodes if n.tenant_id == tenant and not n.secured and n.title)
    return {"queryText": title, "filter": {"tenantId": tenant, "secured": False}, "options": {"expandDepth": 2}}


@pytest.mark.parametrize("service", ["weaviate", "neo4j"])
def test_server_stopped_then_restarted(loaded: Loaded, service: str) -> None:
    backend = server_backend(timeout_s=TIMEOUT)
    services_ = strict(backend)
    request = outage_request(loaded)
    graph = build_graph(services_)
    try:
        before = BrainSearchResult.model_validate(graph.invoke(cast(BrainSearchInput, request))).to_wire()
        assert before["hits"]
        stop_process(service)
        try:
            error, elapsed = timed_failure(services_, request)
            assert error.backend == service
            assert elapsed <= TIMEOUT + SLACK, elapsed
            print(f"\n{service} down: BackendUnavailableError after {elapsed * 1000:.0f} ms: {error}")
        finally:
            services("restart", service)
        warm_up(request)
        after = BrainSearchResult.model_validate(graph.invoke(cast(BrainSearchInput, request))).to_wire()
        assert after == before
    finally:
        backend.close()
