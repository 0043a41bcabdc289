"""Settings read from the environment (and an optional ``.env`` file), with one-line errors.

The global settings (:mod:`brain_graph.pipeline.config`) and each backend's own settings class use
:data:`ENV_CONFIG` and are read through :func:`read_settings`. A ``.env`` file that is not UTF-8 or
cannot be read is a one-line :class:`~brain_graph.core.errors.ConfigurationError` naming it, like a bad value.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypeVar

from pydantic import ValidationError
from pydantic_settings import BaseSettings, SettingsConfigDict

from brain_graph.core.errors import ConfigurationError

ENV_FILE = ".env"
# No populate_by_name: pydantic-settings would also read each field's bare name from the environment
# (HOME as BRAIN_GRAPH_HOME, MODE as BRAIN_GRAPH_AUTH, SECRET...). Overrides go by alias instead.
ENV_CONFIG = SettingsConfigDict(env_file=ENV_FILE, env_file_encoding="utf-8", extra="ignore")

S = TypeVar("S", bound=BaseSettings)


def read_settings(cls: type[S], **overrides: Any) -> S:
    """``cls`` from the environment, with ``overrides`` (by field name) taking precedence; a bad value
    is one :class:`ConfigurationError` line naming the variable, what it allows and what it got (or
    naming the ``.env`` file, when that cannot be read as UTF-8 text)."""
    try:
        fields = cls.model_fields
        return cls(**{str(fields[name].validation_alias or name): value for name, value in overrides.items()})
    except ValidationError as error:
        first = error.errors(include_url=False)[0]
        variable = ".".join(str(part) for part in first["loc"])
        got = repr(first.get("input"))[:80]
        message = str(first["msg"]).removeprefix("Value error, ")
        raise ConfigurationError(f"{variable}: {message} (got {got})") from None
    except UnicodeDecodeError as error:  # only the .env file is decoded: the environment holds text
        where = f"byte 0x{error.object[error.start]:02x} at offset {error.start}"
        raise ConfigurationError(f"{Path(ENV_FILE).absolute()}: not UTF-8 ({where}); save it as UTF-8") from None
    except OSError as error:
        raise ConfigurationError(f"{Path(ENV_FILE).absolute()}: not readable ({error.strerror or error})") from None
