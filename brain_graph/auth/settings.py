"""``BRAIN_GRAPH_AUTH*`` settings: how bearer tokens are verified, the rate limit, and the insecure
development mode."""

from __future__ import annotations

import importlib
from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import BaseSettings

from brain_graph.auth.rate_limit import DEFAULT_RATE_LIMIT, parse_rate_limit
from brain_graph.auth.tokens import DEFAULT_AUDIENCE, DEFAULT_ISSUER, JwtVerifier, TokenIssuer, TokenVerifier
from brain_graph.core.environment import ENV_CONFIG, read_settings
from brain_graph.core.errors import ConfigurationError

MIN_SECRET_CHARS = 32  # HS256 keys shorter than the hash are refused (RFC 7518 section 3.2)
NOT_CONFIGURED = (
    "bearer-token authentication is not configured: set BRAIN_GRAPH_AUTH_SECRET (at least "
    f"{MIN_SECRET_CHARS} characters), BRAIN_GRAPH_AUTH_PUBLIC_KEY_FILE or BRAIN_GRAPH_AUTH_VERIFIER, or "
    "BRAIN_GRAPH_AUTH=insecure for local development only"
)


class AuthSettings(BaseSettings):
    """Authentication settings (names in the README)."""

    model_config = ENV_CONFIG

    mode: Literal["jwt", "insecure"] = Field(default="jwt", validation_alias="BRAIN_GRAPH_AUTH")
    secret: SecretStr | None = Field(default=None, validation_alias="BRAIN_GRAPH_AUTH_SECRET")
    public_key_file: Path | None = Field(default=None, validation_alias="BRAIN_GRAPH_AUTH_PUBLIC_KEY_FILE")
    algorithms: str = Field(default="", validation_alias="BRAIN_GRAPH_AUTH_ALGORITHMS")
    issuer: str = Field(default=DEFAULT_ISSUER, min_length=1, validation_alias="BRAIN_GRAPH_AUTH_ISSUER")
    audience: str = Field(default=DEFAULT_AUDIENCE, min_length=1, validation_alias="BRAIN_GRAPH_AUTH_AUDIENCE")
    verifier: str = Field(default="", validation_alias="BRAIN_GRAPH_AUTH_VERIFIER")
    rate_limit: str = Field(default=DEFAULT_RATE_LIMIT, validation_alias="BRAIN_GRAPH_RATE_LIMIT")
    rate_limit_storage: str = Field(default="memory://", validation_alias="BRAIN_GRAPH_RATE_LIMIT_STORAGE")

    @field_validator("secret")
    @classmethod
    def _long_enough(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None and len(value.get_secret_value()) < MIN_SECRET_CHARS:
            raise ConfigurationError(f"BRAIN_GRAPH_AUTH_SECRET: must be at least {MIN_SECRET_CHARS} characters")
        return value

    @field_validator("rate_limit")
    @classmethod
    def _rate_limit(cls, value: str) -> str:
        parse_rate_limit(value)
        return value

    @property
    def insecure(self) -> bool:
        """Whether the insecure development mode is on (``BRAIN_GRAPH_AUTH=insecure``)."""
        return self.mode == "insecure"

    def signing_algorithms(self) -> list[str]:
        """The algorithms tokens may use: ``BRAIN_GRAPH_AUTH_ALGORITHMS``, else HS256 with a secret and
        RS256/ES256/EdDSA with a public key."""
        if self.algorithms.strip():
            return [name.strip() for name in self.algorithms.split(",") if name.strip()]
        return ["HS256"] if self.public_key_file is None else ["RS256", "ES256", "EdDSA"]

    def build_verifier(self) -> TokenVerifier | None:
        """The configured verifier: a plug-in (``module:factory``, called with these settings), a
        public-key or a shared-secret :class:`JwtVerifier`, or ``None`` when nothing is configured."""
        if self.verifier:
            module_name, _, attribute = self.verifier.partition(":")
            try:
                factory = getattr(importlib.import_module(module_name), attribute)
            except (ImportError, AttributeError, ValueError) as error:
                raise ConfigurationError(f"BRAIN_GRAPH_AUTH_VERIFIER: cannot load {self.verifier!r}: {error}") from None
            verifier = factory(self)
            if not isinstance(verifier, TokenVerifier):
                raise ConfigurationError(
                    f"BRAIN_GRAPH_AUTH_VERIFIER: {self.verifier!r} returned no TokenVerifier (verify(token) method)"
                )
            return verifier
        if self.public_key_file is not None:
            try:
                key = self.public_key_file.read_text(encoding="utf-8")
            except OSError as error:
                raise ConfigurationError(f"BRAIN_GRAPH_AUTH_PUBLIC_KEY_FILE: {error.strerror or error}") from None
            return JwtVerifier(key, self.signing_algorithms(), issuer=self.issuer, audience=self.audience)
        if self.secret is not None:
            return JwtVerifier(
                self.secret.get_secret_value(), self.signing_algorithms(), issuer=self.issuer, audience=self.audience
            )
        return None

    def issuer_for_minting(self) -> TokenIssuer:
        """A :class:`TokenIssuer` with the shared secret (minting needs the secret; a public key cannot sign)."""
        if self.secret is None:
            raise ConfigurationError("minting a token needs BRAIN_GRAPH_AUTH_SECRET (the key the server verifies with)")
        shared = [name for name in self.signing_algorithms() if name.upper().startswith("HS")]
        if not shared:
            raise ConfigurationError(
                "minting a token needs an HS* algorithm in BRAIN_GRAPH_AUTH_ALGORITHMS (the server would refuse it)"
            )
        return TokenIssuer(self.secret.get_secret_value(), shared[0], issuer=self.issuer, audience=self.audience)


@lru_cache(maxsize=1)
def load_auth_settings() -> AuthSettings:
    """The process's authentication settings, read once."""
    return read_settings(AuthSettings)
