"""Settings read from the environment (and an optional ``.env`` file), with one-line errors.

The global settings (:mod:`brain_graph.config`) and each backend's own settings class use
:data:`ENV_CONFIG` and are read through :func:`read_settings`.
"""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import ValidationError
from pydantic_settings import BaseSettings, SettingsConfigDict

from brain_graph.errors import ConfigurationError

ENV_CONFIG = SettingsConfigDict(env_file=".env", env_file_encoding="utf-8", extra="ignore", populate_by_name=True)

S = TypeVar("S", bound=BaseSettings)


def read_settings(cls: type[S], **overrides: Any) -> S:
    """``cls`` from the environment, with ``overrides`` (by field name) taking precedence; a bad value
    is one :class:`ConfigurationError` line naming the variable, what it allows and what it got."""
    try:
        return cls(**overrides)
    except ValidationError as error:
        first = error.errors(include_url=False)[0]
        variable = ".".join(str(part) for part in first["loc"])
        got = repr(first.get("input"))[:80]
        raise ConfigurationError(f"{variable}: {first['msg']} (got {got})") from None
