"""Replication settings of the neo4j-weaviate backend: read from the environment with one-line errors
naming the variable, and turned into Weaviate's replication config and consistency levels."""

from __future__ import annotations

import pytest
from weaviate.proto.v1 import base_pb2, batch_pb2

from brain_graph.core.environment import read_settings
from brain_graph.core.errors import BackendUnavailableError, ConfigurationError
from brain_graph.stores.neo4j_weaviate.backend import Neo4jWeaviateBackend, Neo4jWeaviateSettings
from brain_graph.stores.neo4j_weaviate.weaviate.grpc_search import GrpcSearch, search_request
from brain_graph.stores.neo4j_weaviate.weaviate.replication import Replication
from tests.helpers import closed_port

VARIABLES = (
    "BRAIN_GRAPH_WEAVIATE_REPLICATION_FACTOR",
    "BRAIN_GRAPH_WEAVIATE_WRITE_CONSISTENCY",
    "BRAIN_GRAPH_WEAVIATE_READ_CONSISTENCY",
)


@pytest.fixture(autouse=True)
def _clean(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in VARIABLES:
        monkeypatch.delenv(name, raising=False)


def test_defaults_are_one_replica_and_quorum_both_ways() -> None:
    settings = read_settings(Neo4jWeaviateSettings)
    assert (settings.weaviate_replication_factor, settings.weaviate_write_consistency) == (1, "QUORUM")
    assert settings.weaviate_read_consistency == "QUORUM"


def test_the_backend_gets_the_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BRAIN_GRAPH_WEAVIATE_REPLICATION_FACTOR", "3")
    monkeypatch.setenv("BRAIN_GRAPH_WEAVIATE_WRITE_CONSISTENCY", "ALL")
    monkeypatch.setenv("BRAIN_GRAPH_WEAVIATE_READ_CONSISTENCY", "ONE")
    backend = Neo4jWeaviateBackend.from_settings(read_settings(Neo4jWeaviateSettings))
    try:
        index = backend.weaviate
        assert index.replication == Replication(factor=3, write="ALL", read="ONE")
        assert index.grpc_search.replication is index.replication
        assert index.schema.replication is index.replication
    finally:
        backend.close()


@pytest.mark.parametrize(
    ("variable", "value", "message"),
    [
        ("BRAIN_GRAPH_WEAVIATE_REPLICATION_FACTOR", "0", "greater than or equal to 1"),
        ("BRAIN_GRAPH_WEAVIATE_REPLICATION_FACTOR", "three", "valid integer"),
        ("BRAIN_GRAPH_WEAVIATE_WRITE_CONSISTENCY", "MOST", "'ONE', 'QUORUM' or 'ALL'"),
        ("BRAIN_GRAPH_WEAVIATE_READ_CONSISTENCY", "quorum", "'ONE', 'QUORUM' or 'ALL'"),
    ],
)
def test_a_bad_value_is_one_line_naming_the_variable(
    monkeypatch: pytest.MonkeyPatch, variable: str, value: str, message: str
) -> None:
    monkeypatch.setenv(variable, value)
    with pytest.raises(ConfigurationError) as info:
        read_settings(Neo4jWeaviateSettings)
    text = str(info.value)
    assert text.startswith(f"{variable}: ")
    assert message in text
    assert "\n" not in text


def test_levels_and_config() -> None:
    replication = Replication(factor=3, write="QUORUM", read="ONE")
    assert replication.grpc_write == base_pb2.CONSISTENCY_LEVEL_QUORUM
    assert replication.grpc_read == base_pb2.CONSISTENCY_LEVEL_ONE
    config = replication.config()
    assert (config.factor, config.asyncEnabled) == (3, True)
    assert Replication().config().asyncEnabled is False  # one replica: nothing to repair
    with pytest.raises(ValueError, match="at least 1"):
        Replication(factor=0)


def test_grpc_requests_carry_the_levels() -> None:
    """The search and batch messages are sent at the configured levels (a closed port: sent, refused)."""
    grpc = GrpcSearch(
        host="127.0.0.1",
        port=closed_port(),
        api_key="",
        timeout_s=1.0,
        replication=Replication(factor=3, write="ALL", read="ONE"),
    )
    search, batch = search_request(collection="C", tenant="t"), batch_pb2.BatchObjectsRequest()
    try:
        with pytest.raises(BackendUnavailableError):
            grpc.search([search])
        with pytest.raises(BackendUnavailableError):
            grpc.batch_objects(batch)
    finally:
        grpc.close()
    assert search.consistency_level == base_pb2.CONSISTENCY_LEVEL_ONE
    assert batch.consistency_level == base_pb2.CONSISTENCY_LEVEL_ALL
