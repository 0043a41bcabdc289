"""Readiness: each service a backend depends on is checked at once and within a bound, and
``GET /brain/ready`` answers 200 or 503 naming the services that are down (never why: hosts and
paths go to the server log). The embedded store here; the servers in tests/integration."""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections.abc import Callable
from contextlib import closing
from pathlib import Path

import pytest
from starlette.applications import Starlette
from starlette.routing import Route
from starlette.testclient import TestClient

from brain_graph.core.errors import ConfigurationError
from brain_graph.pipeline.services import SearchServices
from brain_graph.serving.server import readiness_endpoint
from brain_graph.stores.embedded import EmbeddedStore
from brain_graph.stores.readiness import ReadinessProbe, ServiceStatus, check_backend, check_services
from tests.helpers import SMALL_GRAPH, make_store


def ready_client(services: Callable[[], SearchServices], timeout_s: float = 30.0) -> TestClient:
    return TestClient(Starlette(routes=[Route("/brain/ready", readiness_endpoint(services, timeout_s))]))


def test_the_checks_run_at_once() -> None:
    """Each check waits for the other: they both return only if they run concurrently."""
    meeting = threading.Barrier(2, timeout=30)
    statuses = check_services({"neo4j": meeting.wait, "weaviate": meeting.wait}, timeout_s=60)
    assert statuses == [ServiceStatus("neo4j"), ServiceStatus("weaviate")]


def test_a_check_that_does_not_answer_is_reported_after_the_bound() -> None:
    release = threading.Event()

    def hangs() -> None:
        release.wait()

    try:
        statuses = check_services({"neo4j": hangs, "weaviate": lambda: None}, timeout_s=0.2)
    finally:
        release.set()
    assert statuses == [ServiceStatus("neo4j", "no answer within 0.2 s"), ServiceStatus("weaviate")]


def test_a_check_that_fails_says_why() -> None:
    def refused() -> None:
        raise ConnectionRefusedError("connection refused by 10.0.0.7:7687")

    [status] = check_services({"neo4j": refused}, timeout_s=30)
    assert not status.ready
    assert status.problem == "ConnectionRefusedError: connection refused by 10.0.0.7:7687"


def test_a_loaded_embedded_store_is_ready(tmp_path: Path) -> None:
    services = make_store(tmp_path, SMALL_GRAPH)
    assert isinstance(services.backend, ReadinessProbe)
    response = ready_client(lambda: services).get("/brain/ready")
    assert response.status_code == 200
    assert response.json() == {"status": "ready", "backends": {"embedded": "ready"}}
    assert response.headers["Cache-Control"] == "no-store"
    assert services.backend.admin.round_trips() == {"sqlite": 0}  # a check is no search statement


def test_a_default_store_never_written_is_ready_as_searches_read_it_as_empty(tmp_path: Path) -> None:
    store = EmbeddedStore(tmp_path / "never-written.sqlite3")
    assert check_backend(store, timeout_s=30) == [ServiceStatus("embedded")]


@pytest.mark.parametrize("kind", ["missing", "not-sqlite", "not-a-store"])
def test_an_embedded_store_searches_cannot_read_is_503_without_its_path(
    tmp_path: Path, kind: str, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "secret-location" / "store.sqlite3"
    if kind != "missing":
        path.parent.mkdir()
    if kind == "not-sqlite":
        path.write_bytes(b"not a database at all" * 100)
    if kind == "not-a-store":  # a SQLite file of something else
        with closing(sqlite3.connect(path)) as db:
            db.execute("CREATE TABLE other (x)")
    services = SearchServices(backend=EmbeddedStore(path, explicit=True))
    with caplog.at_level(logging.WARNING, logger="brain_graph.server"):
        response = ready_client(lambda: services).get("/brain/ready")
    assert response.status_code == 503
    assert response.json() == {
        "status": "unavailable",
        "backends": {"embedded": "unavailable"},
        "unavailable": ["embedded"],
    }
    assert "secret-location" not in response.text
    assert any("secret-location" in record.getMessage() for record in caplog.records)  # the reason is logged


def test_services_that_cannot_be_built_are_503() -> None:
    def misconfigured() -> SearchServices:
        raise ConfigurationError("BRAIN_GRAPH_BACKEND: Input should be 'embedded' or 'neo4j-weaviate' (got 'neo5j')")

    response = ready_client(misconfigured).get("/brain/ready")
    assert response.status_code == 503
    assert response.json()["unavailable"] == ["configuration"]
    assert "neo5j" not in response.text
