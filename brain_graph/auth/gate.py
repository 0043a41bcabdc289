"""One check of a request's credentials, shared by the GraphQL endpoint and the LangGraph runs API so
that a principal has one identity and one rate-limit budget on a server."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import lru_cache

from brain_graph.auth.credentials import Credentials
from brain_graph.auth.rate_limit import (
    STORAGE_NAME,
    RateDecision,
    RateLimiter,
    parse_rate_limit,
    rate_limit_storage,
    storage_label,
)
from brain_graph.auth.settings import NOT_CONFIGURED, AuthSettings, load_auth_settings
from brain_graph.auth.tokens import TokenVerifier
from brain_graph.core.errors import AuthenticationError, ConfigurationError

logger = logging.getLogger("brain_graph.auth")

INSECURE_WARNING = (
    "BRAIN_GRAPH_AUTH=insecure: requests without a bearer token are served without authentication and "
    "the principal in a run's context is trusted; use this for local development only"
)


@dataclass(frozen=True)
class Admission:
    """A request the gate let in: its credentials (``None`` in insecure mode without a token) and its
    rate-limit decision (``None`` when no limit applies)."""

    credentials: Credentials | None
    rate: RateDecision | None

    def headers(self) -> dict[str, str]:
        """The rate-limit headers of the response."""
        return self.rate.headers() if self.rate is not None else {}


class Gate:
    """Verifies ``Authorization: Bearer <token>`` and counts the request against its principal's limit.

    With ``insecure`` on, a request without a token passes with no credentials (a token that is sent
    is still verified, when a verifier is configured).
    """

    def __init__(self, verifier: TokenVerifier | None, limiter: RateLimiter | None, *, insecure: bool = False) -> None:
        if verifier is None and not insecure:
            raise ConfigurationError(NOT_CONFIGURED)
        self.verifier = verifier
        self.limiter = limiter
        self.insecure = insecure

    @classmethod
    def from_settings(cls, settings: AuthSettings) -> Gate:
        item = parse_rate_limit(settings.rate_limit)
        uri = settings.rate_limit_storage
        limiter = None
        if item is not None:
            limiter = RateLimiter(item, rate_limit_storage(uri), label=storage_label(uri))
        return cls(settings.build_verifier(), limiter, insecure=settings.insecure)

    def readiness_checks(self) -> Mapping[str, Callable[[], None]]:
        """The check of the shared rate-limit storage, named :data:`STORAGE_NAME` (none for a limit in
        process memory or no limit): a server that cannot count requests cannot admit any."""
        if self.limiter is None or not self.limiter.shared:
            return {}
        return {STORAGE_NAME: self.limiter.check_storage}

    def admit(self, authorization: str | None, *, charge: bool = True) -> Admission:
        """The credentials of an ``Authorization`` header value, counted against the rate limit unless
        ``charge`` is false: :class:`AuthenticationError` when missing or invalid,
        :class:`RateLimitedError` over the limit."""
        if not authorization:
            if self.insecure:
                return Admission(credentials=None, rate=None)
            raise AuthenticationError("missing bearer token: send 'Authorization: Bearer <token>'")
        scheme, _, token = authorization.strip().partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise AuthenticationError("the Authorization header must be 'Bearer <token>'")
        if self.verifier is None:
            raise AuthenticationError("this server verifies no bearer tokens (insecure mode without a key)")
        credentials = self.verifier.verify(token.strip())
        principal = credentials.principal
        if principal.is_anonymous or not principal.tenants:  # a plug-in verifier is held to the same rules
            raise AuthenticationError("the verified token names no principal or no tenant")
        rate = self.charge(principal.principal_id) if charge else None
        return Admission(credentials=credentials, rate=rate)

    def charge(self, principal_id: str) -> RateDecision | None:
        """Count one request (or run) against ``principal_id``'s limit; :class:`RateLimitedError` over
        it, :class:`~brain_graph.core.errors.BackendUnavailableError` when the shared storage cannot
        be reached (fail closed: the request is not admitted)."""
        return self.limiter.hit(principal_id) if self.limiter is not None else None


@lru_cache(maxsize=1)
def default_gate() -> Gate:
    """The process's gate, from :func:`load_auth_settings`; warns once when insecure mode is on."""
    settings = load_auth_settings()
    if settings.insecure:
        logger.warning(INSECURE_WARNING)
    return Gate.from_settings(settings)
