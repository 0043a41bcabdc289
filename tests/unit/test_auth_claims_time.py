"""A token's time claims (``iat``, ``exp``, ``nbf``) must be JSON numbers: PyJWT would take numeric
strings (and booleans) for them, which would skip the lifetime cap or crash the ``exp - iat`` check."""

from __future__ import annotations

import time
from typing import Any

import jwt
import pytest

from brain_graph.auth import JwtVerifier
from brain_graph.auth.tokens import MAX_TTL_S
from brain_graph.errors import AuthenticationError
from tests.unit.auth_plugin import SECRET


def token(**changes: Any) -> str:
    now = int(time.time())
    claims = {"sub": "alice", "tenants": ["acme"], "iat": now, "exp": now + 600, "iss": "brain-graph"}
    return jwt.encode({**claims, "aud": "brain-graph", **changes}, SECRET, algorithm="HS256")


NOW = int(time.time())


@pytest.mark.parametrize(
    ("claim", "value"),
    [
        ("iat", str(NOW)),
        ("exp", str(NOW + 600)),
        ("exp", "9999999999"),  # a string would skip the 366-day cap
        ("nbf", str(NOW - 10)),
        ("iat", True),
        ("nbf", False),
    ],
)
def test_a_time_claim_that_is_not_a_number_is_refused_naming_it(claim: str, value: Any) -> None:
    with pytest.raises(AuthenticationError, match=f"^bearer token claim '{claim}' must be a number") as refused:
        JwtVerifier(SECRET).verify(token(**{claim: value}))
    assert "\n" not in str(refused.value)


def test_a_time_claim_pyjwt_cannot_read_is_refused() -> None:
    with pytest.raises(AuthenticationError, match=r"\(exp\) must be an integer"):
        JwtVerifier(SECRET).verify(token(exp=[NOW + 600]))
    with pytest.raises(AuthenticationError, match="has expired"):  # PyJWT reads true as 1
        JwtVerifier(SECRET).verify(token(exp=True))


def test_the_lifetime_cap_applies_whatever_the_numbers() -> None:
    with pytest.raises(AuthenticationError, match="lives longer"):
        JwtVerifier(SECRET).verify(token(iat=NOW, exp=NOW + MAX_TTL_S + 1))
    with pytest.raises(AuthenticationError, match="lives longer"):
        JwtVerifier(SECRET).verify(token(iat=float(NOW), exp=NOW + MAX_TTL_S + 0.5))


def test_numeric_time_claims_verify_and_set_the_expiry() -> None:
    assert JwtVerifier(SECRET).verify(token(exp=NOW + 600)).expires_at == NOW + 600
    fractional = JwtVerifier(SECRET).verify(token(iat=NOW - 0.25, exp=NOW + 600.5, nbf=NOW - 1))
    assert fractional.expires_at == NOW + 600  # RFC 7519 NumericDate may carry fractions of a second
    assert fractional.principal.principal_id == "alice"
