"""Test support for the authentication tests: a token-verifier plug-in
(``BRAIN_GRAPH_AUTH_VERIFIER=tests.unit.auth_plugin:factory``) and a clean authentication environment."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from brain_graph.auth import AuthSettings, Credentials, default_gate, load_auth_settings
from brain_graph.core.errors import AuthenticationError
from brain_graph.core.security import Principal

SECRET = "s" * 40  # long enough for HS256 (32 characters at least)
PLUGIN_TOKEN = "open-sesame"
PLUGIN_PRINCIPAL = Principal("plugged", ("ops",), ("acme",))


class StaticVerifier:
    """Accepts one token, as the principal ``plugged`` with the maintainer scope."""

    def __init__(self, settings: AuthSettings) -> None:
        self.settings = settings

    def verify(self, token: str) -> Credentials:
        if token != PLUGIN_TOKEN:
            raise AuthenticationError("the plug-in does not know this token")
        return Credentials(PLUGIN_PRINCIPAL, frozenset({"maintainer"}))


def factory(settings: AuthSettings) -> StaticVerifier:
    return StaticVerifier(settings)


def not_a_verifier(settings: AuthSettings) -> object:
    return object()


def forget_auth_settings() -> None:
    """Drop the cached settings and gate, so the next call reads the environment again."""
    load_auth_settings.cache_clear()
    default_gate.cache_clear()


def clean_auth_environment(monkeypatch: pytest.MonkeyPatch, folder: Path) -> None:
    """No authentication variable set (by its ``BRAIN_GRAPH_*`` name or its field name), no ``.env``
    file in the working folder (``folder``), and no cached settings."""
    names = {name.lower() for name in AuthSettings.model_fields}
    names |= {str(field.validation_alias).lower() for field in AuthSettings.model_fields.values()}
    for variable in list(os.environ):
        if variable.lower() in names:
            monkeypatch.delenv(variable)
    monkeypatch.chdir(folder)
    forget_auth_settings()


def configure(monkeypatch: pytest.MonkeyPatch, **variables: str) -> None:
    """Set authentication variables (``BRAIN_GRAPH_AUTH_SECRET=...``) and forget the cached settings."""
    for name, value in variables.items():
        monkeypatch.setenv(name, value)
    forget_auth_settings()
