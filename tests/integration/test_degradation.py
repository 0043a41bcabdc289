"""Degradation against the real servers: with Neo4j down (a closed port, or a socket that accepts and
never answers) a search of data loaded into the real Weaviate answers the hits a normal search finds,
without graph context and saying so; with Weaviate down and Neo4j up it is a 503 naming Weaviate; an
embedder that does not answer is a 503 naming it. Through the pipeline and through the GraphQL app.
The shared servers are never stopped: the backends under test point at loopback ports instead.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import pytest
from starlette.applications import Starlette
from starlette.routing import Route
from starlette.testclient import TestClient

from brain_graph.auth import Gate
from brain_graph.core.contracts import BrainSearchResult
from brain_graph.core.errors import AuthorizationError, BackendUnavailableError
from brain_graph.core.security import Principal
from brain_graph.graphs.search import build_graph
from brain_graph.indexing.dataset import load_dataset, read_dataset
from brain_graph.nodes.build_pack import NO_GRAPH_LINE
from brain_graph.pipeline.config import build_services, load_settings
from brain_graph.pipeline.degradation import GRAPH_UNAVAILABLE, graph_unavailable_warning
from brain_graph.pipeline.services import SearchServices
from brain_graph.pipeline.state import BrainSearchContext, BrainSearchInput
from brain_graph.serving.graphql import create_graphql_app
from brain_graph.serving.retriever import BrainSearchRetriever
from brain_graph.serving.server import readiness_endpoint
from brain_graph.stores.neo4j_weaviate.backend import Neo4jWeaviateBackend
from tests.helpers import closed_port
from tests.integration.conftest import Loaded, silent_listener, with_tenant_prefix
from tests.integration.servers import REPO, connect, server_backend, unique_prefix
from tests.integration.test_parity import parity_requests
from tests.platform.graphql_queries import BRAIN_SEARCH, variables
from tests.providers.endpoint import Endpoint

pytestmark = pytest.mark.integration
TIMEOUT = 3.0  # timeout_s of the backends under test (BRAIN_GRAPH_BACKEND_TIMEOUT)
SLACK = TIMEOUT  # on top of the timeout: far below the clients' own limits (30-60 s), whatever the machine


def search(services: SearchServices, request: dict[str, Any], principal: Principal | None = None) -> dict[str, Any]:
    output = build_graph(services).invoke(cast(BrainSearchInput, request), context=BrainSearchContext(principal))
    return BrainSearchResult.model_validate(output).to_wire()


def without_graph(hits: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Hits as a vector-only result shows them: what only the graph holds left out."""
    return [{**hit, "nodeType": "", "title": None, "url": None} for hit in hits]


def not_exact(request: dict[str, Any]) -> dict[str, Any]:
    """The request with a word added to its query, so that it names no node exactly (an exact match
    is by title too, which a vector-only search cannot know)."""
    return {**request, "queryText": f"{request['queryText']} degraded"}


@pytest.fixture
def neo4j_closed() -> Iterator[Neo4jWeaviateBackend]:
    """The backend with the real Weaviate and a Neo4j URI nobody listens on."""
    backend = server_backend(timeout_s=TIMEOUT, neo4j_uri=f"bolt://127.0.0.1:{closed_port()}")
    yield backend
    backend.close()


def graphql(services: SearchServices, request: dict[str, Any]) -> Any:
    """``brainSearch`` through the GraphQL app (insecure mode: no token) over ``services``."""
    app = create_graphql_app(lambda: build_graph(services), lambda: Gate(None, None, insecure=True))
    return TestClient(app).post("/", json={"query": BRAIN_SEARCH, "variables": variables(request)})


def test_neo4j_down_gives_the_normal_hits_without_graph_context(
    loaded: Loaded, neo4j_closed: Neo4jWeaviateBackend
) -> None:
    degraded = SearchServices(backend=neo4j_closed)
    secured_ids = {node.id for node in loaded.dataset.nodes if node.secured}
    cases = parity_requests(loaded.dataset)
    found = 0
    for name, raw, principal in cases:
        request = not_exact(raw)
        normal = search(loaded.server, request, principal)
        assert normal["graphContextIncluded"] is True, name
        assert all(item["reachedBy"] != "exact" for item in normal["candidates"]), name
        result = search(degraded, request, principal)
        assert result["hits"] == without_graph(normal["hits"]), name  # the same nodes, scores and order
        assert result["warnings"] == [*normal["warnings"], graph_unavailable_warning()], name
        assert result["graphContextIncluded"] is False, name
        assert (result["graphNodes"], result["graphEdges"], result["episodes"], result["passages"]) == ([], [], [], [])
        admitted = sum(item["reachedBy"] != "graph" for item in normal["candidates"])  # the first maxNodes hits
        assert [item["nodeId"] for item in result["candidates"]] == [hit["nodeId"] for hit in result["hits"]][
            :admitted
        ], name
        assert NO_GRAPH_LINE in result["promptPack"]["contextMarkdown"], name
        if principal is None:
            assert not secured_ids & {hit["nodeId"] for hit in result["hits"]}, name
        assert search(degraded, request, principal) == result, name  # the same degraded pack every time
        found += len(result["hits"])
    assert found > 0  # the cases retrieve something
    print(f"\nneo4j down: {len(cases)} requests, {found} hits, each equal to the normal search's")


def test_a_secured_search_without_a_principal_still_fails_closed(
    loaded: Loaded, neo4j_closed: Neo4jWeaviateBackend
) -> None:
    request = {"queryText": "anything", "filter": {"tenantId": loaded.tenants[0], "secured": True}}
    with pytest.raises(AuthorizationError):
        search(SearchServices(backend=neo4j_closed), request)


def test_degradation_switched_off_fails_naming_neo4j(loaded: Loaded, neo4j_closed: Neo4jWeaviateBackend) -> None:
    request = {"queryText": "anything", "filter": {"tenantId": loaded.tenants[0], "secured": False}}
    with pytest.raises(BackendUnavailableError) as caught:
        search(SearchServices(backend=neo4j_closed, degrade_without_graph=False), request)
    assert caught.value.backend == "neo4j"


def test_a_hung_neo4j_degrades_at_its_timeout(loaded: Loaded, silent_port: int) -> None:
    backend = server_backend(timeout_s=TIMEOUT, neo4j_uri=f"bolt://127.0.0.1:{silent_port}")
    (_, raw, _), *_ = parity_requests(loaded.dataset)
    try:
        started = time.monotonic()
        result = search(SearchServices(backend=backend), not_exact(raw))
        elapsed = time.monotonic() - started
    finally:
        backend.close()
    assert result["graphContextIncluded"] is False
    assert result["hits"] == without_graph(search(loaded.server, not_exact(raw))["hits"])
    assert elapsed <= TIMEOUT + SLACK, elapsed  # only the Neo4j timeout can end a wait on a silent socket
    print(f"\nsilent neo4j: vector-only result after {elapsed * 1000:.0f} ms")


@pytest.mark.parametrize("weaviate", ["closed", "silent"])
@pytest.mark.parametrize("neo4j", ["up", "down"])
def test_weaviate_down_is_503_naming_weaviate(loaded: Loaded, neo4j: str, weaviate: str) -> None:
    """With Neo4j down too the search tries to degrade, and Weaviate is what fails it, within the
    timeout even when it accepts connections and never answers (degradation on, the default)."""
    with ExitStack() as stack:
        if weaviate == "closed":
            http, grpc = closed_port(), closed_port()
        else:  # two ports: the client refuses one port for both
            http, grpc = stack.enter_context(silent_listener()), stack.enter_context(silent_listener())
        down: dict[str, Any] = {"weaviate_http_port": http, "weaviate_grpc_port": grpc}
        if neo4j == "down":
            down["neo4j_uri"] = f"bolt://127.0.0.1:{closed_port()}"
        backend = server_backend(timeout_s=TIMEOUT, **down)
        services = SearchServices(backend=backend)
        request = {"queryText": "anything", "filter": {"tenantId": loaded.tenants[0], "secured": False}}
        try:
            started = time.monotonic()
            with pytest.raises(BackendUnavailableError) as caught:
                search(services, request)
            elapsed = time.monotonic() - started
            response = graphql(services, request)
        finally:
            backend.close()
    assert caught.value.backend == "weaviate"
    assert elapsed <= TIMEOUT + SLACK, elapsed  # a silent Weaviate is given up at its timeout
    assert response.status_code == 503
    (error,) = response.json()["errors"]
    assert (error["extensions"]["code"], error["extensions"]["backend"]) == ("BACKEND_UNAVAILABLE", "weaviate")


def test_graphql_answers_the_vector_only_result(loaded: Loaded, neo4j_closed: Neo4jWeaviateBackend) -> None:
    (_, raw, _), *_ = parity_requests(loaded.dataset)
    request = not_exact(raw)
    response = graphql(SearchServices(backend=neo4j_closed), request)
    assert response.status_code == 200, response.text
    answer = response.json()["data"]["brainSearch"]
    assert answer["graphContextIncluded"] is False
    assert [warning["code"] for warning in answer["warnings"]] == [GRAPH_UNAVAILABLE]
    assert answer["hits"] == without_graph(search(loaded.server, request)["hits"])
    assert answer["hits"]


def test_the_retriever_says_it_has_no_passages_rather_than_nothing_found(
    loaded: Loaded, neo4j_closed: Neo4jWeaviateBackend
) -> None:
    (_, raw, _), *_ = parity_requests(loaded.dataset)
    retriever = BrainSearchRetriever(
        services=SearchServices(backend=neo4j_closed), tenant_id=raw["filter"]["tenantId"], secured=False
    )
    assert BrainSearchRetriever(services=loaded.server, tenant_id=raw["filter"]["tenantId"], secured=False).invoke(
        raw["queryText"]
    )  # the same query has passages with the graph
    with pytest.raises(BackendUnavailableError) as caught:
        retriever.invoke(raw["queryText"])
    assert caught.value.backend == "graph store"


EXAMPLE = REPO / "examples" / "node_types"
PROVIDER = "openai:test-embed"


@dataclass(frozen=True)
class Gateway:
    """The node-types example loaded into the real servers, embedded by a loopback endpoint."""

    services: SearchServices
    endpoint: Endpoint
    tenant: str


def gateway_profiles(path: Path, endpoint: Endpoint, prefix: str) -> list[str]:
    """The example's profiles file with profile ids of this run only (collections are shared by
    tenants) on one ``gateway`` embedder at ``endpoint``, one try per request; the profile ids."""
    text = (EXAMPLE / "profiles.toml").read_text(encoding="utf-8")
    names = ("concepts", "operations", "papers")
    for name in names:
        text = text.replace(f"[profiles.{name}]", f"[profiles.{prefix}{name}]")
    gateway = {
        "provider": PROVIDER,
        "dimension": 16,
        "baseUrl": endpoint.base_url,
        "apiKeyEnv": "GATEWAY_API_KEY",
        "timeoutSeconds": TIMEOUT,
        "maxRetries": 0,
        "retryWaitSeconds": 0,
    }
    table = "".join(f"{key} = {json.dumps(value)}\n" for key, value in gateway.items())
    path.write_text(f"{text}\n[embedders.gateway]\n{table}", encoding="utf-8")
    return [f"{prefix}{name}" for name in names]


@pytest.fixture
def gateway(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Gateway]:
    endpoint = Endpoint().start()
    prefix = unique_prefix("dg").rstrip("-") + "_"
    profile_ids = gateway_profiles(tmp_path / "profiles.toml", endpoint, prefix)
    monkeypatch.setenv("BRAIN_GRAPH_PROFILES", str(tmp_path / "profiles.toml"))
    monkeypatch.setenv("BRAIN_GRAPH_EMBEDDER", "gateway")
    monkeypatch.setenv("GATEWAY_API_KEY", "test-key")
    backend = connect(timeout_s=TIMEOUT)
    services = build_services(load_settings(), backend=backend)
    dataset = with_tenant_prefix(read_dataset(EXAMPLE / "graph.json"), prefix)
    tenant = dataset.nodes[0].tenant_id
    try:
        load_dataset(dataset, backend, services.profiles)
        yield Gateway(services, endpoint, tenant)
    finally:
        try:
            backend.admin.drop_tenants(sorted({node.tenant_id for node in dataset.nodes}))
            backend.admin.drop_profiles(profile_ids)
        finally:
            backend.close()
            endpoint.close()


def readiness(services: SearchServices) -> tuple[int, Any]:
    """``GET /brain/ready`` over ``services``: its status and JSON."""
    route = Route("/brain/ready", readiness_endpoint(lambda: services, timeout_s=TIMEOUT + SLACK))
    response = TestClient(Starlette(routes=[route])).get("/brain/ready")
    return response.status_code, response.json()


@pytest.mark.parametrize("failure", ["hangs", "refuses"])
def test_an_embedder_that_is_down_is_503_naming_it(gateway: Gateway, failure: str) -> None:
    request = {"queryText": "ingest queue overflows", "filter": {"tenantId": gateway.tenant, "secured": False}}
    assert search(gateway.services, request)["hits"]  # the endpoint answers: the search works
    ready = {"neo4j": "ready", "weaviate": "ready", f"embedder {PROVIDER}": "ready"}
    assert readiness(gateway.services) == (200, {"status": "ready", "backends": ready})
    if failure == "hangs":
        gateway.endpoint.hang = True
    else:
        gateway.endpoint.close()  # its port now refuses connections
    started = time.monotonic()
    with pytest.raises(BackendUnavailableError) as caught:
        search(gateway.services, request)
    elapsed = time.monotonic() - started
    response = graphql(gateway.services, request)
    assert caught.value.backend == f"embedder {PROVIDER}"
    assert elapsed <= TIMEOUT + SLACK, elapsed  # one try (maxRetries 0), ended by the client's timeout
    assert response.status_code == 503
    (error,) = response.json()["errors"]
    assert (error["extensions"]["code"], error["extensions"]["backend"]) == (
        "BACKEND_UNAVAILABLE",
        caught.value.backend,
    )
    down = {**ready, f"embedder {PROVIDER}": "unavailable"}
    unavailable = {"status": "unavailable", "backends": down, "unavailable": [f"embedder {PROVIDER}"]}
    assert readiness(gateway.services) == (503, unavailable)
    print(f"\nembedder {failure}: 503 after {elapsed * 1000:.0f} ms")
