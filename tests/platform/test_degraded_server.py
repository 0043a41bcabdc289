"""A LangGraph server whose Neo4j is down (a loopback port nobody listens on) and whose Weaviate is the
real one, holding a tenant loaded with the project's loader: a run and /graphql answer the
vector-only result (graphContextIncluded false, warning graph_unavailable), and /brain/ready names
Neo4j as unavailable. What the result holds is tests/integration/test_degradation.py."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from brain_graph.graphs.search import GRAPH_NAME
from brain_graph.indexing.dataset import load_dataset
from brain_graph.pipeline.degradation import GRAPH_UNAVAILABLE
from brain_graph.pipeline.services import SearchServices
from tests.integration.conftest import parity_source, with_tenant_prefix
from tests.integration.servers import connect, unique_prefix
from tests.platform.devserver import REPO_ROOT, DevServer, free_port, run_dev_server
from tests.platform.graphql_queries import BRAIN_SEARCH, variables

pytestmark = [pytest.mark.server, pytest.mark.integration]


@dataclass(frozen=True)
class Degraded:
    server: DevServer
    request: dict[str, object]


@pytest.fixture(scope="module")
def degraded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Degraded]:
    dataset = with_tenant_prefix(parity_source(), unique_prefix("dgs"))
    tenant = dataset.nodes[0].tenant_id
    title = next(node.title for node in dataset.nodes if node.tenant_id == tenant and not node.secured and node.title)
    backend = connect()
    services = SearchServices(backend=backend)
    env = {
        "BRAIN_GRAPH_AUTH": "insecure",
        "BRAIN_GRAPH_BACKEND": "neo4j-weaviate",
        "BRAIN_GRAPH_BACKEND_TIMEOUT": "3",
        "NEO4J_URI": f"bolt://127.0.0.1:{free_port()}",
        **{key: os.environ[key] for key in os.environ if key.startswith("WEAVIATE_")},
    }
    try:
        load_dataset(dataset, backend, services.profiles)
        with run_dev_server(REPO_ROOT / "langgraph.json", Path(tmp_path_factory.mktemp("degraded")), env) as server:
            request = {"queryText": f"{title} degraded", "filter": {"tenantId": tenant, "secured": False}}
            yield Degraded(server, request)
    finally:
        try:
            backend.admin.drop_tenants(sorted({node.tenant_id for node in dataset.nodes}))
        finally:
            backend.close()


def test_a_run_answers_the_vector_only_result(degraded: Degraded) -> None:
    body = {"assistant_id": GRAPH_NAME, "input": degraded.request}
    response = httpx.post(f"{degraded.server.url}/runs/wait", json=body, timeout=60)
    assert response.status_code == 200, response.text
    output = response.json()
    assert output["graphContextIncluded"] is False
    assert [warning["code"] for warning in output["warnings"]] == [GRAPH_UNAVAILABLE]
    assert output["hits"]
    assert {hit["nodeType"] for hit in output["hits"]} == {""}


def test_graphql_answers_it_and_readiness_names_neo4j(degraded: Degraded) -> None:
    body = {"query": BRAIN_SEARCH, "variables": variables(degraded.request)}
    response = httpx.post(f"{degraded.server.url}/graphql", json=body, timeout=60)
    assert response.status_code == 200, response.text
    answer = response.json()["data"]["brainSearch"]
    assert (answer["graphContextIncluded"], answer["hits"] != []) == (False, True)
    ready = httpx.get(f"{degraded.server.url}/brain/ready", timeout=30)
    assert ready.status_code == 503
    assert ready.json()["unavailable"] == ["neo4j"]
