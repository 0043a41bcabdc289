"""Signed bearer tokens (JWT, via PyJWT): minting for local use and verification.

Claims: ``sub`` (principal id), ``groups`` (group names), ``tenants`` (the tenants it may read, at
least one), ``scope`` (space-separated: ``reader``, ``maintainer``), ``iat`` and ``exp`` (JSON numbers,
at most :data:`MAX_TTL_S` apart), ``iss`` and ``aud`` (both ``brain-graph`` unless configured).
Verification is pluggable: anything with ``verify(token) -> Credentials`` is a :class:`TokenVerifier`.
The time claims are checked against the verifier's clock (:data:`Clock`, the system's by default), not
PyJWT's, so a caller (a test) can set the time a token is verified at.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Protocol, runtime_checkable

import jwt
from jwt.types import Options

from brain_graph.auth.credentials import SCOPES, Credentials
from brain_graph.core.errors import AuthenticationError, InvalidRequestError
from brain_graph.core.security import Principal

DEFAULT_ISSUER = "brain-graph"
DEFAULT_AUDIENCE = "brain-graph"
DEFAULT_TTL_S = 3600
MAX_TTL_S = 366 * 24 * 3600
MAX_TOKEN_CHARS = 16_384
REQUIRED_CLAIMS = ("sub", "tenants", "exp", "iat")
TIME_CLAIMS = ("iat", "exp", "nbf")  # finite JSON numbers, checked against the verifier's clock
Clock = Callable[[], float]
"""The current time in seconds since the epoch (:func:`time.time`)."""
DECODE_OPTIONS: Options = {  # the time claims are checked against the verifier's clock (check_times)
    "require": list(REQUIRED_CLAIMS),
    "verify_exp": False,
    "verify_iat": False,
    "verify_nbf": False,
}


@runtime_checkable
class TokenVerifier(Protocol):
    """Turns a bearer token into credentials, or raises :class:`AuthenticationError` saying why not."""

    def verify(self, token: str) -> Credentials: ...


class JwtVerifier:
    """Checks a JWT's signature (``key``: a shared secret, or a public key in PEM for RS/ES/EdDSA
    algorithms), issuer, audience and time claims, then reads the principal and scopes from its claims.

    The time claims must be finite JSON numbers; at ``clock()`` (with ``leeway_s`` either way) the token
    must be issued (``iat``) and valid (``nbf``) already and not expired (``exp``), compared in whole
    seconds as PyJWT compares them."""

    def __init__(
        self,
        key: Any,
        algorithms: Sequence[str] = ("HS256",),
        *,
        issuer: str = DEFAULT_ISSUER,
        audience: str = DEFAULT_AUDIENCE,
        leeway_s: float = 0.0,
        clock: Clock = time.time,
    ) -> None:
        self._key = key
        self._algorithms = list(algorithms)
        self._issuer = issuer
        self._audience = audience
        self._leeway_s = leeway_s
        self._clock = clock

    def verify(self, token: str) -> Credentials:
        if len(token) > MAX_TOKEN_CHARS:
            raise AuthenticationError(f"bearer token is longer than {MAX_TOKEN_CHARS} characters")
        try:
            claims = jwt.decode(
                token,
                self._key,
                algorithms=self._algorithms,
                audience=self._audience,
                issuer=self._issuer,
                options=DECODE_OPTIONS,
            )
        except jwt.InvalidSignatureError:
            raise AuthenticationError("bearer token signature does not verify with the configured key") from None
        except jwt.MissingRequiredClaimError as error:
            raise AuthenticationError(f"bearer token lacks the {error.claim!r} claim") from None
        except jwt.InvalidAudienceError:
            raise AuthenticationError(f"bearer token is not for audience {self._audience!r}") from None
        except jwt.InvalidIssuerError:
            raise AuthenticationError(f"bearer token was not issued by {self._issuer!r}") from None
        except jwt.InvalidAlgorithmError:
            allowed = ", ".join(self._algorithms)
            raise AuthenticationError(f"bearer token algorithm is not allowed (allowed: {allowed})") from None
        except jwt.InvalidKeyError:  # e.g. an ES256 token against an RSA key: not an InvalidTokenError
            raise AuthenticationError("bearer token algorithm does not match the configured key") from None
        except jwt.InvalidTokenError as error:
            raise AuthenticationError(f"bearer token is invalid: {error}") from None
        for claim in TIME_CLAIMS:  # PyJWT would read numeric strings and booleans too (int(value))
            if claim in claims and not _is_number(claims[claim]):
                raise AuthenticationError(f"bearer token claim {claim!r} must be a number (seconds since the epoch)")
        check_times(claims, self._clock(), self._leeway_s)
        if claims["exp"] - claims["iat"] > MAX_TTL_S:
            raise AuthenticationError(f"bearer token lives longer than {MAX_TTL_S} s (exp - iat); mint a shorter one")
        return credentials_from_claims(claims)


def check_times(claims: dict[str, Any], now: float, leeway_s: float) -> None:
    """Refuse (:class:`AuthenticationError`) a token whose numeric time claims say it is not valid at
    ``now``: issued (``iat``) or valid from (``nbf``) later than ``now + leeway_s``, or expired
    (``exp`` at or before ``now - leeway_s``); each claim is taken in whole seconds, as PyJWT does."""
    for claim in ("iat", "nbf"):
        if claim in claims and int(claims[claim]) > now + leeway_s:
            raise AuthenticationError(f"bearer token is not valid yet ({claim} is in the future); check the clocks")
    if int(claims["exp"]) <= now - leeway_s:
        raise AuthenticationError("bearer token has expired; mint a new one")


def _is_number(value: Any) -> bool:
    """A finite JSON number (RFC 7519 NumericDate: an integer or a fraction), not a boolean or a string."""
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def credentials_from_claims(claims: dict[str, Any]) -> Credentials:
    """The credentials a verified token's claims describe; a malformed claim is an
    :class:`AuthenticationError` naming it."""
    scope = claims.get("scope", "")
    if not isinstance(scope, str):
        raise AuthenticationError("bearer token claim 'scope' must be a space-separated string")
    tenants = claims.get("tenants")
    if not isinstance(tenants, list) or not tenants:
        raise AuthenticationError("bearer token claim 'tenants' must be a non-empty list of tenant ids")
    groups = claims.get("groups", [])
    try:
        principal = Principal(claims["sub"], groups, tenants)
    except InvalidRequestError as error:
        claim = error.field.removeprefix("context.principal.").replace("principalId", "sub")
        raise AuthenticationError(f"bearer token claim {claim!r} {error.problem}") from None
    if principal.is_anonymous:
        raise AuthenticationError("bearer token claim 'sub' must name a principal")
    expires = claims.get("exp")
    return Credentials(
        principal=principal,
        scopes=frozenset(word for word in scope.split() if word in SCOPES),
        expires_at=int(expires) if isinstance(expires, int | float) else None,
    )


class TokenIssuer:
    """Mints signed tokens the matching :class:`JwtVerifier` accepts (local use, tests, delegation)."""

    def __init__(
        self,
        key: Any,
        algorithm: str = "HS256",
        *,
        issuer: str = DEFAULT_ISSUER,
        audience: str = DEFAULT_AUDIENCE,
    ) -> None:
        self._key = key
        self._algorithm = algorithm
        self._issuer = issuer
        self._audience = audience

    def mint(
        self,
        principal_id: str,
        tenants: Iterable[str],
        *,
        groups: Iterable[str] = (),
        scopes: Iterable[str] = ("reader",),
        ttl_s: int = DEFAULT_TTL_S,
        now: float | None = None,
    ) -> str:
        """A token for ``principal_id`` valid ``ttl_s`` seconds; the arguments are checked as the
        verifier would (:class:`InvalidRequestError` naming the one that is wrong)."""
        if not 1 <= ttl_s <= MAX_TTL_S:
            raise InvalidRequestError("ttl", f"must be between 1 and {MAX_TTL_S} seconds (got {ttl_s})")
        unknown = sorted(set(scopes) - set(SCOPES))
        if unknown:
            raise InvalidRequestError("scope", f"unknown scope(s) {unknown}; allowed: {', '.join(SCOPES)}")
        principal = Principal(principal_id, tuple(groups), tuple(tenants))
        if principal.is_anonymous or not principal.tenants:
            raise InvalidRequestError("tenant", "a token needs a principal id and at least one tenant")
        issued = int(time.time() if now is None else now)
        claims = {
            "sub": principal.principal_id,
            "groups": list(principal.groups),
            "tenants": sorted(principal.tenants),
            "scope": " ".join(sorted(set(scopes))),
            "iat": issued,
            "exp": issued + ttl_s,
            "iss": self._issuer,
            "aud": self._audience,
        }
        return jwt.encode(claims, self._key, algorithm=self._algorithm)

    def for_principal(self, principal: Principal, *, scopes: Iterable[str] = ("reader",), ttl_s: int = 60) -> str:
        """A short-lived token carrying ``principal`` as it is (delegation to a remote graph)."""
        if principal.tenants is None:
            raise InvalidRequestError(
                "context.principal.tenants", "a principal sent to a remote graph must list its tenants"
            )
        return self.mint(principal.principal_id, principal.tenants, groups=principal.groups, scopes=scopes, ttl_s=ttl_s)
