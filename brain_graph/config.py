"""Global configuration from the environment (and an optional ``.env`` file), and the services it
builds. Which backend runs is ``BRAIN_GRAPH_BACKEND``, one of the registered names
(:mod:`brain_graph.stores.registry`); each backend reads its own settings when it is built."""

from __future__ import annotations

from functools import lru_cache

from pydantic import Field, field_validator
from pydantic_core import PydanticCustomError
from pydantic_settings import BaseSettings

from brain_graph.edges import DEFAULT_SAFE_EDGE_TYPES, EdgeRegistry
from brain_graph.environment import ENV_CONFIG, read_settings
from brain_graph.errors import ConfigurationError
from brain_graph.profiles import default_profiles
from brain_graph.services import DEFAULT_MAX_EXPAND_DEPTH, SearchLimits, SearchServices
from brain_graph.stores.base import StorageBackend
from brain_graph.stores.registry import allowed_backends, backend_names, build_backend
from brain_graph.vocabulary import check_edge_type


class Settings(BaseSettings):
    """The settings every deployment has, read from environment variables (names in the README)."""

    model_config = ENV_CONFIG

    backend: str = Field(default="embedded", validation_alias="BRAIN_GRAPH_BACKEND")
    service_principal: bool = Field(default=False, validation_alias="BRAIN_GRAPH_SERVICE_PRINCIPAL")
    max_expand_depth: int = Field(
        default=DEFAULT_MAX_EXPAND_DEPTH, ge=0, le=6, validation_alias="BRAIN_GRAPH_MAX_EXPAND_DEPTH"
    )
    safe_edge_types: str = Field(
        default=",".join(DEFAULT_SAFE_EDGE_TYPES), validation_alias="BRAIN_GRAPH_SAFE_EDGE_TYPES"
    )

    @field_validator("backend")
    @classmethod
    def _registered(cls, value: str) -> str:
        if value not in backend_names():
            raise PydanticCustomError("literal_error", "Input should be {expected}", {"expected": allowed_backends()})
        return value

    @field_validator("safe_edge_types")
    @classmethod
    def _edge_types(cls, value: str) -> str:
        """A comma-separated list of UPPER_SNAKE_CASE edge types (``HAS_SIGNAL``/``IN_CLUSTER`` are
        accepted, though each is followed anyway behind its option)."""
        for name in safe_edge_type_names(value):
            try:
                check_edge_type(name)
            except ConfigurationError:
                raise PydanticCustomError(
                    "edge_type",
                    "a comma-separated list of UPPER_SNAKE_CASE edge types (A-Z, 0-9 and _, starting with a "
                    "letter, at most 64 characters); {name} is not one",
                    {"name": repr(name[:64])},
                ) from None
        return value


def safe_edge_type_names(value: str) -> list[str]:
    """The edge types of a ``BRAIN_GRAPH_SAFE_EDGE_TYPES`` value (comma-separated, blanks ignored)."""
    return [name.strip() for name in value.split(",") if name.strip()]


def load_settings() -> Settings:
    """Settings from the environment; a bad value is one :class:`ConfigurationError` line naming the
    variable, what it allows and what it got."""
    return read_settings(Settings)


def build_services(settings: Settings | None = None, *, backend: StorageBackend | None = None) -> SearchServices:
    """Services from configuration: the backend (built from its own settings unless given), the default
    profiles, the edge allowlist, limits."""
    settings = settings or load_settings()
    safe = safe_edge_type_names(settings.safe_edge_types)
    return SearchServices(
        backend=backend if backend is not None else build_backend(settings.backend),
        profiles=default_profiles(),
        edges=EdgeRegistry.with_safe(safe),
        limits=SearchLimits(max_expand_depth=settings.max_expand_depth),
        service_principal=settings.service_principal,
    )


@lru_cache(maxsize=1)
def default_services() -> SearchServices:
    """Services built once per process from the environment (used when a graph is built without any)."""
    return build_services()
