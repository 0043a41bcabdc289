"""Configuration from the environment (and an optional ``.env`` file), and the services it builds."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Literal

from platformdirs import user_data_dir
from pydantic import Field, ValidationError
from pydantic_settings import BaseSettings, SettingsConfigDict

from brain_graph.edges import DEFAULT_SAFE_EDGE_TYPES, EdgeRegistry
from brain_graph.errors import ConfigurationError
from brain_graph.profiles import default_profiles
from brain_graph.services import DEFAULT_MAX_EXPAND_DEPTH, SearchLimits, SearchServices
from brain_graph.stores.base import StorageBackend

STORE_FILE_NAME = "brain-graph.sqlite3"


class Settings(BaseSettings):
    """Every setting, read from environment variables (names in the README)."""

    model_config = SettingsConfigDict(env_file=".env", env_file_encoding="utf-8", extra="ignore", populate_by_name=True)

    backend: Literal["embedded", "neo4j-weaviate"] = Field(default="embedded", validation_alias="BRAIN_GRAPH_BACKEND")
    home: Path | None = Field(default=None, validation_alias="BRAIN_GRAPH_HOME")
    store_path: Path | None = Field(default=None, validation_alias="BRAIN_GRAPH_STORE_PATH")
    service_principal: bool = Field(default=False, validation_alias="BRAIN_GRAPH_SERVICE_PRINCIPAL")
    max_expand_depth: int = Field(
        default=DEFAULT_MAX_EXPAND_DEPTH, ge=0, le=6, validation_alias="BRAIN_GRAPH_MAX_EXPAND_DEPTH"
    )
    safe_edge_types: str = Field(
        default=",".join(DEFAULT_SAFE_EDGE_TYPES), validation_alias="BRAIN_GRAPH_SAFE_EDGE_TYPES"
    )
    backend_timeout_s: float = Field(default=5.0, gt=0, le=300, validation_alias="BRAIN_GRAPH_BACKEND_TIMEOUT")

    neo4j_uri: str = Field(default="bolt://127.0.0.1:7687", validation_alias="NEO4J_URI")
    neo4j_user: str = Field(default="neo4j", validation_alias="NEO4J_USER")
    neo4j_password: str = Field(default="", validation_alias="NEO4J_PASSWORD")
    neo4j_database: str = Field(default="neo4j", validation_alias="NEO4J_DATABASE")
    weaviate_host: str = Field(default="127.0.0.1", validation_alias="WEAVIATE_HOST")
    weaviate_http_port: int = Field(default=8080, validation_alias="WEAVIATE_HTTP_PORT")
    weaviate_grpc_port: int = Field(default=50051, validation_alias="WEAVIATE_GRPC_PORT")
    weaviate_api_key: str = Field(default="", validation_alias="WEAVIATE_API_KEY")
    weaviate_vector_index: Literal["flat", "hnsw"] = Field(
        default="flat", validation_alias="BRAIN_GRAPH_WEAVIATE_VECTOR_INDEX"
    )

    @property
    def resolved_store_path(self) -> Path:
        """The embedded store file: explicit path, else ``$BRAIN_GRAPH_HOME``, else the user data dir."""
        if self.store_path is not None:
            return self.store_path.expanduser()
        home = self.home.expanduser() if self.home is not None else Path(user_data_dir("brain-graph"))
        return home / STORE_FILE_NAME


def load_settings() -> Settings:
    """Settings from the environment; a bad value is one :class:`ConfigurationError` line naming the
    variable, what it allows and what it got."""
    try:
        return Settings()
    except ValidationError as error:
        first = error.errors(include_url=False)[0]
        variable = ".".join(str(part) for part in first["loc"])
        got = repr(first.get("input"))[:80]
        raise ConfigurationError(f"{variable}: {first['msg']} (got {got})") from None


def build_backend(settings: Settings) -> StorageBackend:
    """The storage backend the settings name."""
    if settings.backend == "embedded":
        from brain_graph.stores.embedded import EmbeddedStore

        return EmbeddedStore(settings.resolved_store_path)
    if settings.backend == "neo4j-weaviate":
        from brain_graph.stores.neo4j_weaviate import Neo4jWeaviateBackend

        return Neo4jWeaviateBackend.from_settings(settings)
    raise ConfigurationError(f"unknown backend {settings.backend!r}")  # pragma: no cover - Literal


def build_services(settings: Settings | None = None) -> SearchServices:
    """Services from configuration: the backend, the default profiles, the edge allowlist, limits."""
    settings = settings or load_settings()
    safe = [name.strip() for name in settings.safe_edge_types.split(",") if name.strip()]
    return SearchServices(
        backend=build_backend(settings),
        profiles=default_profiles(),
        edges=EdgeRegistry.with_safe(safe),
        limits=SearchLimits(max_expand_depth=settings.max_expand_depth),
        service_principal=settings.service_principal,
    )


@lru_cache(maxsize=1)
def default_services() -> SearchServices:
    """Services built once per process from the environment (used when a graph is built without any)."""
    return build_services()
