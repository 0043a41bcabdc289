"""The mapped backend: a :class:`~brain_graph.stores.base.StorageBackend` that searches a team's own
Neo4j graph (and its vectors, in Neo4j vector indexes or Weaviate collections) through a mapping.

It never writes: every Neo4j statement runs in a read session, nothing creates constraints, indexes,
collections or tenants, and ``load``, ``apply``, the indexer's reads and the administration's drops
refuse with :class:`ReadOnlyBackendError` naming the mapping.

Round trips per search (W: profiles whose vectors are in Weaviate; D: expand depth), whatever topK
and however many profiles read a Neo4j vector index: the seeds take W Weaviate requests and 2 Neo4j
statements (every Neo4j index's candidates with the visibility of Weaviate's; then the hits'
metadata and links with the vectors in Neo4j of the nodes they reach); each hop after the first 1
Neo4j statement (its links with those vectors); each hop's new nodes, when W > 0, 1 Neo4j statement
and W Weaviate requests for their Weaviate profiles' scores; the context 2 Neo4j statements (metadata
of the new nodes with the visibility of the known ones, then edges among them, cluster memberships
and passage texts together).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import Field

from brain_graph.core.environment import read_settings
from brain_graph.core.errors import ConfigurationError
from brain_graph.stores.base import (
    ChangeSet,
    EdgeRecord,
    NodeRecord,
    ProfileIndexInfo,
    TenantCounts,
    VectorRecord,
    VectorState,
)
from brain_graph.stores.mapped.graph import MappedGraph
from brain_graph.stores.mapped.mapping import Mapping, Neo4jVectors, WeaviateVectors, read_mapping
from brain_graph.stores.mapped.neo4j_source import Neo4jIndexSource
from brain_graph.stores.mapped.search_reads import MappedSearchReads
from brain_graph.stores.mapped.sources import VectorSource
from brain_graph.stores.mapped.vectors import MappedVectorIndex
from brain_graph.stores.neo4j_weaviate.backend import Neo4jWeaviateSettings
from brain_graph.stores.neo4j_weaviate.neo4j.client import Neo4jClient
from brain_graph.stores.neo4j_weaviate.weaviate.errors import BACKEND as WEAVIATE
from brain_graph.stores.readiness import Check

if TYPE_CHECKING:
    from brain_graph.stores.mapped.weaviate_source import WeaviateSource


class ReadOnlyBackendError(ConfigurationError):
    """A write asked of a mapped backend, which never writes the team's database."""

    code = "READ_ONLY_BACKEND"


class MappedSettings(Neo4jWeaviateSettings):
    """The mapping file, and the connections the mapped backend shares with the neo4j-weaviate backend
    (the same variables: ``NEO4J_*``, ``WEAVIATE_*``, ``BRAIN_GRAPH_BACKEND_TIMEOUT``)."""

    mapping: Path = Field(validation_alias="BRAIN_GRAPH_MAPPING")


class MappedBackend:
    """See the module docstring. ``weaviate_source`` builds the source of a Weaviate-backed profile
    (connections come from the settings); a mapping without Weaviate sources never connects to Weaviate."""

    name = "mapped"
    supports_lexical = False

    def __init__(self, mapping: Mapping, neo4j: Neo4jClient, sources: Sequence[VectorSource] = ()) -> None:
        self.mapping = mapping
        self.neo4j = neo4j
        self.graph = MappedGraph(neo4j, mapping)
        self.sources = {source.profile_id: source for source in sources}
        embedders = {config.profile: config.embedder for config in mapping.vectors}
        self._vectors = MappedVectorIndex(self.graph, self.sources, embedders)
        self._search_reads = MappedSearchReads(self._vectors, self.graph)

    @classmethod
    def with_neo4j_sources(
        cls, mapping: Mapping, neo4j: Neo4jClient, weaviate_sources: Sequence[VectorSource] = ()
    ) -> MappedBackend:
        """The backend with a source per Neo4j-index profile of the mapping, plus ``weaviate_sources``."""
        graph = MappedGraph(neo4j, mapping)
        sources: list[VectorSource] = [
            Neo4jIndexSource(neo4j, graph.statements, config)
            for config in mapping.vectors
            if isinstance(config, Neo4jVectors)
        ]
        return cls(mapping, neo4j, [*sources, *weaviate_sources])

    def refused(self, action: str) -> ReadOnlyBackendError:
        """The error of a write asked of this backend."""
        return ReadOnlyBackendError(
            f"mapping {self.mapping.name!r} is read-only: brain-graph never writes a mapped database "
            f"({action} needs the embedded or the neo4j-weaviate backend)"
        )

    # -- the stores -------------------------------------------------------------------------------

    @property
    def vector_index(self) -> MappedVectorIndex:
        return self._vectors

    @property
    def graph_store(self) -> MappedGraph:
        return self.graph

    @property
    def passage_source(self) -> MappedGraph:
        return self.graph

    @property
    def search_reads(self) -> MappedSearchReads:
        return self._search_reads

    @property
    def admin(self) -> MappedBackend:
        return self

    @property
    def index_store(self) -> MappedBackend:
        return self

    # -- writes: refused --------------------------------------------------------------------------

    def apply(self, changes: ChangeSet) -> None:
        raise self.refused("writing changes")

    def load(
        self,
        nodes: Sequence[NodeRecord],
        edges: Sequence[EdgeRecord],
        vectors: Sequence[VectorRecord],
        profiles: Sequence[ProfileIndexInfo],
        *,
        replace: bool,
    ) -> None:
        raise self.refused("loading a dataset")

    def drop_tenants(self, tenant_ids: Sequence[str]) -> None:
        raise self.refused("dropping tenants")

    def drop_profiles(self, profile_ids: Sequence[str]) -> None:
        raise self.refused("dropping profiles")

    # -- the indexer's reads: refused (the team's pipeline writes the vectors) ---------------------

    def tenants(self) -> list[str]:
        raise self.refused("indexing")

    def node_page(
        self, tenant_id: str, *, node_types: Sequence[str], after: str | None, limit: int
    ) -> list[NodeRecord]:
        raise self.refused("indexing")

    def count_nodes(self, tenant_id: str, node_types: Sequence[str]) -> int:
        raise self.refused("indexing")

    def get_records(self, tenant_id: str, node_ids: Sequence[str]) -> list[NodeRecord]:
        raise self.refused("indexing")

    def vector_states(
        self, tenant_id: str, profile_id: str, node_ids: Sequence[str] | None = None
    ) -> list[VectorState]:
        raise self.refused("indexing")

    def recorded_profiles(self) -> dict[str, ProfileIndexInfo]:
        return {}

    # -- administration ---------------------------------------------------------------------------

    def count(self, tenant_id: str) -> TenantCounts:
        """A read like the searches' (the CLI's note on an empty tenant asks it): see :meth:`MappedGraph.count`."""
        return self.graph.count(tenant_id)

    def round_trips(self) -> dict[str, int]:
        return {"neo4j": self.neo4j.round_trips}

    def readiness_checks(self) -> dict[str, Check]:
        """Neo4j answers, and so does Weaviate when the mapping reads vectors from it (one request per
        Weaviate source: :meth:`~brain_graph.stores.mapped.weaviate_source.WeaviateSource.ping`),
        named as a search's failure names them; Neo4j vector indexes are Neo4j's."""
        from brain_graph.stores.mapped.weaviate_source import WeaviateSource

        checks: dict[str, Check] = {"neo4j": self.neo4j.ping}
        weaviate = [source for _, source in sorted(self.sources.items()) if isinstance(source, WeaviateSource)]
        if weaviate:
            checks[WEAVIATE] = partial(ping_all, weaviate)
        return checks

    def close(self) -> None:
        for source in self.sources.values():
            source.close()
        self.neo4j.close()


def ping_all(sources: Sequence[WeaviateSource]) -> None:
    """Returns when every one of ``sources`` answers its ping; else raises the first failure."""
    for source in sources:
        source.ping()


def neo4j_client(settings: Neo4jWeaviateSettings) -> Neo4jClient:
    """A client of the settings' Neo4j database (connects lazily)."""
    return Neo4jClient(
        uri=settings.neo4j_uri,
        user=settings.neo4j_user,
        password=settings.neo4j_password,
        database=settings.neo4j_database,
        timeout_s=settings.timeout_s,
    )


def weaviate_parameters(settings: Neo4jWeaviateSettings) -> dict[str, Any]:
    """The settings' Weaviate server, as the keyword arguments of a Weaviate connection."""
    return {
        "host": settings.weaviate_host,
        "http_port": settings.weaviate_http_port,
        "grpc_port": settings.weaviate_grpc_port,
        "api_key": settings.weaviate_api_key,
        "secure": settings.weaviate_secure,
        "timeout_s": settings.timeout_s,
    }


def from_settings(settings: MappedSettings) -> MappedBackend:
    """The backend the settings describe; connects lazily."""
    mapping = read_mapping(settings.mapping)
    weaviate: list[VectorSource] = []
    configs = [config for config in mapping.vectors if isinstance(config, WeaviateVectors)]
    if configs:
        from brain_graph.stores.mapped.weaviate_source import WeaviateSource

        connection = weaviate_parameters(settings)
        weaviate = [WeaviateSource.from_mapping(mapping, config, **connection) for config in configs]
    return MappedBackend.with_neo4j_sources(mapping, neo4j_client(settings), weaviate)


def from_environment(**overrides: Any) -> MappedBackend:
    """The mapped backend of ``BRAIN_GRAPH_MAPPING`` and the connection settings (``overrides`` by field name)."""
    return from_settings(read_settings(MappedSettings, **overrides))
