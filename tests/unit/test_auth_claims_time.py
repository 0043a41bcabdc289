"""A token's time claims (``iat``, ``exp``, ``nbf``): finite JSON numbers (PyJWT would take numeric
strings and booleans for them, which would skip the lifetime cap or crash the ``exp - iat`` check),
checked against the verifier's clock. The clock is set here, so nothing depends on when the tests run."""

from __future__ import annotations

import time
from typing import Any

import jwt
import pytest

from brain_graph.auth import JwtVerifier
from brain_graph.auth.tokens import MAX_TTL_S
from brain_graph.core.errors import AuthenticationError
from tests.unit.auth_plugin import SECRET

NOW = 1_700_000_000  # the time every token here is verified at


def verifier(now: float = NOW, leeway_s: float = 0.0) -> JwtVerifier:
    return JwtVerifier(SECRET, leeway_s=leeway_s, clock=lambda: now)


def token(**changes: Any) -> str:
    """A token issued at :data:`NOW`, expiring ten minutes later, with ``changes``."""
    claims = {"sub": "alice", "tenants": ["acme"], "iat": NOW, "exp": NOW + 600, "iss": "brain-graph"}
    return jwt.encode({**claims, "aud": "brain-graph", **changes}, SECRET, algorithm="HS256")


@pytest.mark.parametrize(
    ("claim", "value"),
    [
        ("iat", str(NOW)),
        ("exp", str(NOW + 600)),
        ("exp", "9999999999"),  # a string would skip the 366-day cap
        ("nbf", str(NOW - 10)),
        ("iat", True),
        ("nbf", False),
        ("exp", True),  # PyJWT would read true as 1 (expired long ago)
        ("exp", [NOW + 600]),  # PyJWT could not read it as a number at all
        ("exp", float("inf")),  # JSON 1e999
        ("iat", float("nan")),  # NaN, which Python's JSON decoder reads
    ],
)
def test_a_time_claim_that_is_not_a_finite_number_is_refused_naming_it(claim: str, value: Any) -> None:
    with pytest.raises(AuthenticationError, match=f"^bearer token claim '{claim}' must be a number") as refused:
        verifier().verify(token(**{claim: value}))
    assert "\n" not in str(refused.value)


def test_a_token_expires_at_its_exp_by_the_verifiers_clock() -> None:
    assert verifier(NOW + 599).verify(token()).expires_at == NOW + 600
    assert verifier(NOW + 599.9).verify(token()).principal.principal_id == "alice"
    for later in (NOW + 600, NOW + 601, NOW + 10**9):
        with pytest.raises(AuthenticationError, match=r"^bearer token has expired; mint a new one$"):
            verifier(later).verify(token())


def test_a_token_is_not_valid_before_it_was_issued_or_before_nbf() -> None:
    with pytest.raises(AuthenticationError, match=r"not valid yet \(iat is in the future\)"):
        verifier(NOW - 1).verify(token())
    with pytest.raises(AuthenticationError, match=r"not valid yet \(nbf is in the future\)"):
        verifier().verify(token(nbf=NOW + 1))
    assert verifier().verify(token(nbf=NOW)).principal.principal_id == "alice"


def test_the_leeway_applies_to_each_time_claim() -> None:
    assert verifier(NOW + 629, leeway_s=30).verify(token()).principal.principal_id == "alice"
    with pytest.raises(AuthenticationError, match="has expired"):
        verifier(NOW + 630, leeway_s=30).verify(token())
    assert verifier(NOW - 30, leeway_s=30).verify(token()).principal.principal_id == "alice"
    with pytest.raises(AuthenticationError, match="not valid yet"):
        verifier(NOW - 31, leeway_s=30).verify(token())


def test_the_lifetime_cap_applies_whatever_the_numbers() -> None:
    with pytest.raises(AuthenticationError, match="lives longer"):
        verifier().verify(token(iat=NOW, exp=NOW + MAX_TTL_S + 1))
    with pytest.raises(AuthenticationError, match="lives longer"):
        verifier().verify(token(iat=float(NOW), exp=NOW + MAX_TTL_S + 0.5))
    assert verifier().verify(token(iat=NOW, exp=NOW + MAX_TTL_S)).principal.principal_id == "alice"


def test_numeric_time_claims_verify_and_set_the_expiry() -> None:
    assert verifier().verify(token(exp=NOW + 600)).expires_at == NOW + 600
    fractional = verifier().verify(token(iat=NOW - 0.25, exp=NOW + 600.5, nbf=NOW - 1))
    assert fractional.expires_at == NOW + 600  # RFC 7519 NumericDate may carry fractions of a second
    assert fractional.principal.principal_id == "alice"


def test_the_default_clock_is_the_systems() -> None:
    """A token issued now verifies without a clock given; one that expired a second ago does not."""
    issued = int(time.time())  # right before the calls
    assert JwtVerifier(SECRET).verify(token(iat=issued, exp=issued + 600)).principal.principal_id == "alice"
    with pytest.raises(AuthenticationError, match="has expired"):
        JwtVerifier(SECRET).verify(token(iat=issued - 600, exp=issued - 1))
