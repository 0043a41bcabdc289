"""Settings of the embedded backend: where its SQLite file lives."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from platformdirs import user_data_dir
from pydantic import Field
from pydantic_settings import BaseSettings

from brain_graph.core.environment import ENV_CONFIG, read_settings
from brain_graph.stores.embedded.store import EmbeddedStore

STORE_FILE_NAME = "brain-graph.sqlite3"


class EmbeddedSettings(BaseSettings):
    """``BRAIN_GRAPH_STORE_PATH`` (the file), else ``BRAIN_GRAPH_HOME`` (its folder), else the per-user
    data folder."""

    model_config = ENV_CONFIG

    home: Path | None = Field(default=None, validation_alias="BRAIN_GRAPH_HOME")
    store_path: Path | None = Field(default=None, validation_alias="BRAIN_GRAPH_STORE_PATH")

    @property
    def resolved_store_path(self) -> Path:
        """The store file: explicit path, else ``home``, else the user data dir."""
        if self.store_path is not None:
            return self.store_path.expanduser()
        home = self.home.expanduser() if self.home is not None else Path(user_data_dir("brain-graph"))
        return home / STORE_FILE_NAME


def from_environment(**overrides: Any) -> EmbeddedStore:
    """The store the environment describes (``overrides`` by field name, e.g. ``store_path``); a store
    path given explicitly must exist for a search (see :class:`EmbeddedStore`)."""
    settings = read_settings(EmbeddedSettings, **overrides)
    return EmbeddedStore(settings.resolved_store_path, explicit=settings.store_path is not None)
