"""A provider embedder through LangChain's real OpenAI integration (and the real OpenAI client), against
an OpenAI-compatible endpoint the test starts on loopback (tests/providers/endpoint.py): success, a
provider that is down (writes keep the node and leave its vector pending for the next index; queries
are a typed one-line error naming the provider), rate limits retried, a wrong dimension refused, the
identity rule, and a key missing from the environment named in one line."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import openai
import pytest
from langchain_openai import OpenAIEmbeddings
from typer.testing import CliRunner

from brain_graph import BackendUnavailableError, GraphWriter, Indexer, build_graph, search_input
from brain_graph.cli.main import app
from brain_graph.core.errors import ConfigurationError
from brain_graph.embedding.hosted import ProviderEmbeddings
from brain_graph.indexing.dataset import load_dataset, read_graph
from brain_graph.pipeline.config import build_services, load_settings, profiles_from_settings
from brain_graph.pipeline.services import SearchServices
from brain_graph.stores.base import ProfileIndexInfo
from brain_graph.stores.embedded import EmbeddedStore
from brain_graph.stores.identity import EmbeddingMismatchError
from tests.providers.endpoint import Endpoint

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "node_types"
GRAPH = EXAMPLES / "graph.json"
KEY = "test-key-of-the-gateway"
PROVIDER = "openai:test-embed"
runner = CliRunner()


def write_profiles(tmp_path: Path, endpoint: Endpoint, **settings: object) -> Path:
    """The example's profiles file with every profile on a declared ``gateway`` embedder at ``endpoint``."""
    declared = {
        "provider": PROVIDER,
        "dimension": 16,
        "baseUrl": endpoint.base_url,
        "apiKeyEnv": "GATEWAY_API_KEY",
        "batchSize": 2,
        "timeoutSeconds": 5,
        "maxRetries": 2,
        "retryWaitSeconds": 0,
        **settings,
    }
    table = "".join(f"{key} = {json.dumps(value)}\n" for key, value in declared.items())
    path = tmp_path / "profiles.toml"
    path.write_text((EXAMPLES / "profiles.toml").read_text(encoding="utf-8") + f"\n[embedders.gateway]\n{table}")
    return path


@pytest.fixture
def endpoint() -> Iterator[Endpoint]:
    served = Endpoint().start()
    yield served
    served.close()


@pytest.fixture
def configured(tmp_path: Path, endpoint: Endpoint, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The environment of a deployment on the gateway: its profiles file, its embedder, its key."""
    path = write_profiles(tmp_path, endpoint)
    monkeypatch.setenv("BRAIN_GRAPH_PROFILES", str(path))
    monkeypatch.setenv("BRAIN_GRAPH_EMBEDDER", "gateway")
    monkeypatch.setenv("GATEWAY_API_KEY", KEY)
    return path


def services(tmp_path: Path, name: str = "store.sqlite3") -> SearchServices:
    return build_services(load_settings(), backend=EmbeddedStore(tmp_path / name))


def embedder(services: SearchServices) -> ProviderEmbeddings:
    (built,) = services.profiles.embedders.values()
    assert isinstance(built, ProviderEmbeddings)
    return built


def test_load_and_search_through_the_real_client(tmp_path: Path, endpoint: Endpoint, configured: Path) -> None:
    deployed = services(tmp_path)
    client = embedder(deployed).client
    assert isinstance(client, OpenAIEmbeddings)  # LangChain's own integration, made by init_embeddings
    assert (client.request_timeout, client.max_retries, client.chunk_size) == (5, 0, 2)  # retries are tenacity's
    report = load_dataset(read_graph(GRAPH), deployed.backend, deployed.profiles)
    assert (report.embedded, report.pending) == (6, 0)
    assert all(len(batch) <= 2 for batch in endpoint.inputs)
    assert set(endpoint.authorizations) == {f"Bearer {KEY}"}
    assert deployed.backend.index_store.recorded_profiles() == {
        profile_id: ProfileIndexInfo(profile_id, PROVIDER, 16) for profile_id in ("concepts", "operations", "papers")
    }
    output = build_graph(deployed).invoke(
        search_input("ingest queue overflows during the nightly import", "lab", secured=False)
    )
    assert output["hits"][0]["nodeId"] == "ticket:OPS-7"
    assert endpoint.inputs[-1] == [
        "ingest queue overflows during the nightly import"
    ]  # the query, embedded by the same endpoint


def test_rate_limits_are_retried_with_backoff(tmp_path: Path, endpoint: Endpoint, configured: Path) -> None:
    deployed = services(tmp_path)
    endpoint.fail.extend([429, 429])
    report = load_dataset(read_graph(GRAPH), deployed.backend, deployed.profiles)
    assert (report.embedded, report.pending) == (6, 0)
    assert endpoint.statuses[:3] == [429, 429, 200]


def test_a_provider_failing_every_retry_is_then_tried_once_until_it_answers(
    tmp_path: Path, endpoint: Endpoint, configured: Path
) -> None:
    gateway = embedder(services(tmp_path))
    endpoint.fail.extend([503] * 4)
    with pytest.raises(openai.InternalServerError):
        gateway.embed_documents(["a"])
    assert endpoint.statuses == [503, 503, 503]  # maxRetries = 2
    with pytest.raises(openai.InternalServerError):
        gateway.embed_documents(["a"])
    assert endpoint.statuses == [503] * 4  # taken as down: one try
    assert gateway.embed_documents(["a"])
    assert endpoint.statuses[-1] == 200
    endpoint.fail.extend([503, 503])
    assert gateway.embed_documents(["a"])  # up again: every retry
    assert endpoint.statuses[-3:] == [503, 503, 200]


def test_a_down_provider_leaves_written_nodes_pending_until_the_next_index(
    tmp_path: Path, endpoint: Endpoint, configured: Path
) -> None:
    deployed = services(tmp_path)
    port = endpoint.port
    endpoint.close()  # down: nothing listens on its port
    nodes = read_graph(GRAPH).node_records()
    report = GraphWriter(deployed).upsert_nodes(list(nodes))
    assert (report.nodes, report.embedded, report.pending) == (6, 0, 6)
    stored = deployed.backend.index_store.get_records("lab", [n.node_id for n in nodes])
    assert len(stored) == 6  # the nodes are saved
    assert deployed.backend.index_store.vector_states("lab", "operations") == []  # their vectors pending
    with pytest.raises(BackendUnavailableError) as caught:
        build_graph(deployed).invoke(search_input("queue", "lab", secured=False))
    assert str(caught.value) == f"embedder {PROVIDER} unavailable: Connection error."
    back = Endpoint(port=port).start()  # up again, where the configuration says
    try:
        indexed = Indexer(deployed.backend, deployed.profiles).run()
        assert (indexed.embedded, indexed.pending) == (6, 0)
        output = build_graph(deployed).invoke(
            search_input("ingest queue overflows during the nightly import", "lab", secured=False)
        )
        assert output["hits"][0]["nodeId"] == "ticket:OPS-7"
    finally:
        back.close()


def test_a_query_to_a_provider_that_does_not_answer_fails_at_the_timeout(
    tmp_path: Path, endpoint: Endpoint, configured: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(
        "BRAIN_GRAPH_PROFILES", str(write_profiles(tmp_path, endpoint, timeoutSeconds=0.2, maxRetries=0))
    )
    deployed = services(tmp_path)
    assert embedder(deployed).client.request_timeout == 0.2  # type: ignore[attr-defined]
    endpoint.hang = True
    with pytest.raises(BackendUnavailableError) as caught:
        build_graph(deployed).invoke(search_input("queue", "lab", secured=False))
    assert str(caught.value) == f"embedder {PROVIDER} unavailable: Request timed out."
    assert len(endpoint.authorizations) == 1  # maxRetries = 0: one request


def test_the_cli_says_in_one_line_that_the_provider_is_down(
    tmp_path: Path, endpoint: Endpoint, configured: Path
) -> None:
    store = tmp_path / "cli.sqlite3"
    assert runner.invoke(app, ["load", str(GRAPH), "--store", str(store)]).exit_code == 0
    endpoint.close()
    result = runner.invoke(app, ["search", "queue", "--tenant", "lab", "--public", "--store", str(store)])
    assert result.exit_code == 1
    assert result.stderr == f"error: embedder {PROVIDER} unavailable: Connection error.\n"


def test_a_wrong_dimension_is_refused(tmp_path: Path, endpoint: Endpoint, configured: Path) -> None:
    deployed = services(tmp_path)
    load_dataset(read_graph(GRAPH), deployed.backend, deployed.profiles)
    endpoint.dimension = 8
    refusal = (
        f"embedder {PROVIDER} returned vectors of dimension 8, its configured dimension is 16: set dimension = 8 "
        "for it in the profiles file (or ask the model for the configured one), then re-index: brain-graph index --full"
    )
    with pytest.raises(ConfigurationError) as loading:
        load_dataset(read_graph(GRAPH), deployed.backend, deployed.profiles)
    assert str(loading.value) == refusal
    with pytest.raises(ConfigurationError) as searching:
        build_graph(deployed).invoke(search_input("queue", "lab", secured=False))
    assert str(searching.value) == refusal
    assert deployed.backend.index_store.recorded_profiles()["concepts"].dimension == 16  # nothing replaced


def test_a_new_dimension_is_refused_by_the_index_until_a_full_run(
    tmp_path: Path, endpoint: Endpoint, configured: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    load_dataset(read_graph(GRAPH), (first := services(tmp_path)).backend, first.profiles)
    first.backend.close()
    endpoint.dimension = 8
    monkeypatch.setenv("BRAIN_GRAPH_PROFILES", str(write_profiles(tmp_path, endpoint, dimension=8)))
    changed = services(tmp_path)
    with pytest.raises(EmbeddingMismatchError) as caught:
        Indexer(changed.backend, changed.profiles).run()
    assert str(caught.value) == (
        f"profile concepts: the index records embedder {PROVIDER!r} (dimension 16), the configured one is "
        f"{PROVIDER!r} (dimension 8); re-index every tenant with: brain-graph index --full"
    )
    assert Indexer(changed.backend, changed.profiles).run(full=True).embedded == 6
    assert changed.backend.index_store.recorded_profiles()["concepts"] == ProfileIndexInfo("concepts", PROVIDER, 8)


def test_a_key_missing_from_the_environment_is_one_line_naming_the_variable(
    tmp_path: Path, configured: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GATEWAY_API_KEY")
    message = (
        f"embedder {PROVIDER}: its API key is read from the environment variable GATEWAY_API_KEY, which is not set: "
        "set it (or apiKeyEnv of the embedder in the profiles file)"
    )
    with pytest.raises(ConfigurationError) as caught:
        profiles_from_settings(load_settings())
    assert str(caught.value) == message
    result = runner.invoke(app, ["load", str(GRAPH), "--store", str(tmp_path / "s.sqlite3")])
    assert result.exit_code == 2
    assert result.stderr == f"error: {message}\n"


def test_openais_own_models_need_no_declaration_and_read_openais_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("BRAIN_GRAPH_PROFILES", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("BRAIN_GRAPH_EMBEDDER", "openai:text-embedding-3-small")
    with pytest.raises(ConfigurationError, match="environment variable OPENAI_API_KEY, which is not set"):
        profiles_from_settings(load_settings())
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    registry = profiles_from_settings(load_settings())  # no request is made to build it
    assert {(registry.embedder_name(p), p.dimension) for p in registry.profiles} == {
        ("openai:text-embedding-3-small", 1536)
    }
