"""Storage backends by name (``BRAIN_GRAPH_BACKEND``).

A backend is a module (or subpackage) plus one :func:`register_backend` call. Its factory builds it
from the backend's own settings class, read from the environment when the backend is built, with
overrides by field name (``build_backend("embedded", store_path=...)``). The built-in backends are
registered below by module name, so a deployment imports only the backend it uses.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import import_module
from typing import Any, cast

from brain_graph.core.errors import ConfigurationError
from brain_graph.stores.base import StorageBackend

BackendFactory = Callable[..., StorageBackend]

_FACTORIES: dict[str, BackendFactory] = {}


def register_backend(name: str, factory: BackendFactory) -> None:
    """Make ``factory(**overrides)`` the backend called ``name`` (replacing any earlier one)."""
    _FACTORIES[name] = factory


def backend_names() -> tuple[str, ...]:
    """The registered names, in registration order."""
    return tuple(_FACTORIES)


def allowed_backends() -> str:
    """The registered names as an error message lists them: ``'a', 'b' or 'c'``."""
    quoted = [repr(name) for name in _FACTORIES]
    return quoted[0] if len(quoted) == 1 else f"{', '.join(quoted[:-1])} or {quoted[-1]}"


def build_backend(name: str, **overrides: Any) -> StorageBackend:
    """The backend called ``name``, built from its settings (``overrides`` by field name)."""
    factory = _FACTORIES.get(name)
    if factory is None:
        raise ConfigurationError(f"backend {name!r} is not registered; registered: {allowed_backends()}")
    return factory(**overrides)


def module_factory(module: str) -> BackendFactory:
    """A factory calling ``from_environment(**overrides)`` of ``module``, imported on first use."""

    def factory(**overrides: Any) -> StorageBackend:
        return cast(StorageBackend, import_module(module).from_environment(**overrides))

    return factory


register_backend("embedded", module_factory("brain_graph.stores.embedded"))
register_backend("neo4j-weaviate", module_factory("brain_graph.stores.neo4j_weaviate.backend"))
register_backend("mapped", module_factory("brain_graph.stores.mapped.backend"))
