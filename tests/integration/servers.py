"""Access to the real Neo4j + Weaviate servers started by ``scripts/services up``.

Nothing here skips: a missing variable or an unreachable server FAILS the test with the command to run.
"""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import neo4j
import pytest
import weaviate
from weaviate.classes.init import Auth

from brain_graph.core.environment import read_settings
from brain_graph.core.errors import BackendUnavailableError
from brain_graph.core.security import AccessScope
from brain_graph.stores.neo4j_weaviate.backend import Neo4jWeaviateBackend, Neo4jWeaviateSettings

REPO = Path(__file__).resolve().parents[2]
SERVICES = REPO / "scripts" / "services"
REQUIRED_ENV = ("NEO4J_URI", "WEAVIATE_HOST", "WEAVIATE_HTTP_PORT", "WEAVIATE_GRPC_PORT")
HOW_TO_START = 'start them with `eval "$(scripts/services up)"` (or run `scripts/test`, which does it)'
BRAIN_GRAPH = Path(sys.executable).parent / "brain-graph"
# the settings a CLI run reads besides the connection: the test's own (keyword arguments), never the caller's
CLI_CLEARED = (
    "BRAIN_GRAPH_BACKEND",
    "BRAIN_GRAPH_MAPPING",
    "BRAIN_GRAPH_EMBEDDER",
    "BRAIN_GRAPH_PROFILE_EMBEDDERS",
    "BRAIN_GRAPH_PROFILES",
    "BRAIN_GRAPH_SAFE_EDGE_TYPES",
)


def server_settings(**overrides: Any) -> Neo4jWeaviateSettings:
    """Settings of the neo4j-weaviate backend from the environment (``overrides`` by field name); fails
    when it is not set up."""
    missing = [name for name in REQUIRED_ENV if not os.environ.get(name)]
    if missing:
        pytest.fail(f"integration tests need Neo4j + Weaviate: {', '.join(missing)} not set; {HOW_TO_START}")
    return read_settings(Neo4jWeaviateSettings, **overrides)


def team_driver() -> neo4j.Driver:
    """The official Neo4j driver on the servers, as a team that writes its own graph uses it."""
    settings = server_settings()
    return neo4j.GraphDatabase.driver(settings.neo4j_uri, auth=(settings.neo4j_user, settings.neo4j_password))


def team_weaviate() -> weaviate.WeaviateClient:
    """The official Weaviate client on the servers, connected, as a team that writes its own collections uses it."""
    settings = server_settings()
    return weaviate.connect_to_custom(
        http_host=settings.weaviate_host,
        http_port=settings.weaviate_http_port,
        http_secure=settings.weaviate_secure,
        grpc_host=settings.weaviate_host,
        grpc_port=settings.weaviate_grpc_port,
        grpc_secure=settings.weaviate_secure,
        auth_credentials=Auth.api_key(settings.weaviate_api_key) if settings.weaviate_api_key else None,
    )


def brain_graph_cli(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """``brain-graph ARGS`` in a process of its own, with the servers' settings and ``env``; the
    settings of :data:`CLI_CLEARED` only from ``env``."""
    environment = {key: value for key, value in os.environ.items() if key not in CLI_CLEARED}
    return subprocess.run(
        [str(BRAIN_GRAPH), *args],
        env={**environment, **env},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def server_backend(**overrides: Any) -> Neo4jWeaviateBackend:
    """A backend on the real servers, not connected yet."""
    return Neo4jWeaviateBackend.from_settings(server_settings(**overrides))


def connect(**overrides: Any) -> Neo4jWeaviateBackend:
    """A backend on the real servers, checked to answer (fails the test otherwise)."""
    backend = server_backend(**overrides)
    try:
        backend.graph_store.get_nodes(["ping"], scope=AccessScope("ping"))
        backend.weaviate.count("ping", None)  # reads the profile metadata
    except BackendUnavailableError as error:
        backend.close()
        pytest.fail(f"{error}; {HOW_TO_START}")
    return backend


def unique_prefix(kind: str) -> str:
    """A tenant prefix no other test run uses (tests share the servers)."""
    return f"{kind}{uuid.uuid4().hex[:8]}-"


def services(*args: str, timeout: float = 300) -> str:
    """Run ``scripts/services ARGS``; fails the test with its output when it fails."""
    if not SERVICES.exists():
        pytest.fail(f"{SERVICES} is missing")
    done = subprocess.run(
        [str(SERVICES), *args], cwd=REPO, capture_output=True, text=True, timeout=timeout, check=False
    )
    if done.returncode != 0:
        pytest.fail(f"scripts/services {' '.join(args)} failed ({done.returncode}): {done.stderr[-2000:]}")
    return done.stdout


def run_cli_load(path: Path, *extra: str, store: Path | None = None) -> subprocess.CompletedProcess[str]:
    """``brain-graph load PATH`` in a process of its own: into the embedded ``store``, or into the
    servers when it is None (failing clearly when they are not configured)."""
    if store is None:
        server_settings()
    env = {**os.environ, "BRAIN_GRAPH_BACKEND": "embedded" if store else "neo4j-weaviate"}
    args = ["--store", str(store)] if store else []
    return subprocess.run(
        [sys.executable, "-m", "brain_graph.cli.main", "load", str(path), *args, *extra],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
