"""The gate: one check of the ``Authorization`` header, the insecure development mode, and the
per-principal rate limit with the headers that let a client back off."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from brain_graph.auth import Gate, JwtVerifier, RateLimiter, TokenIssuer, default_gate, load_auth_settings
from brain_graph.auth.gate import INSECURE_WARNING
from brain_graph.auth.rate_limit import DEFAULT_RATE_LIMIT, parse_rate_limit
from brain_graph.core.errors import AuthenticationError, ConfigurationError, RateLimitedError
from tests.unit.auth_plugin import SECRET, clean_auth_environment, configure, forget_auth_settings

ISSUER = TokenIssuer(SECRET)


@pytest.fixture(autouse=True)
def _clean_auth(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    clean_auth_environment(monkeypatch, tmp_path)
    yield
    forget_auth_settings()


def bearer(principal_id: str = "alice", *groups: str) -> str:
    return f"Bearer {ISSUER.mint(principal_id, ['acme'], groups=groups)}"


def gate(rate_limit: str = "off", *, insecure: bool = False, verifier: JwtVerifier | None = None) -> Gate:
    item = parse_rate_limit(rate_limit)
    return Gate(verifier or JwtVerifier(SECRET), RateLimiter(item) if item is not None else None, insecure=insecure)


def test_a_valid_bearer_token_is_admitted() -> None:
    admission = gate().admit(bearer("alice", "ops"))
    assert admission.credentials is not None
    assert admission.credentials.principal.principal_id == "alice"
    assert admission.credentials.principal.groups == ("ops",)
    assert admission.rate is None
    assert admission.headers() == {}


def test_the_scheme_is_case_insensitive_and_spaces_around_are_ignored() -> None:
    token = bearer().removeprefix("Bearer ")
    for header in (f"bearer {token}", f"BEARER {token}", f"  Bearer   {token}  "):
        admission = gate().admit(header)
        assert admission.credentials is not None, header


@pytest.mark.parametrize("header", [None, ""])
def test_a_missing_header_is_refused(header: str | None) -> None:
    with pytest.raises(AuthenticationError, match="missing bearer token: send 'Authorization: Bearer <token>'"):
        gate().admit(header)


@pytest.mark.parametrize("header", ["Basic YWxpY2U6cHc=", "Token abc", "Bearer", "Bearer    ", "abc"])
def test_a_header_that_is_not_bearer_is_refused(header: str) -> None:
    with pytest.raises(AuthenticationError, match="must be 'Bearer <token>'"):
        gate().admit(header)


def test_an_invalid_token_is_refused() -> None:
    with pytest.raises(AuthenticationError, match="signature does not verify"):
        gate().admit(f"Bearer {TokenIssuer('x' * 40).mint('alice', ['acme'])}")


def test_insecure_mode_admits_a_request_without_a_token() -> None:
    admission = Gate(None, None, insecure=True).admit(None)
    assert admission.credentials is None
    assert admission.headers() == {}


def test_insecure_mode_without_a_key_refuses_a_token_it_cannot_check() -> None:
    with pytest.raises(AuthenticationError, match="verifies no bearer tokens"):
        Gate(None, None, insecure=True).admit(bearer())


def test_insecure_mode_with_a_key_still_verifies_a_token_that_is_sent() -> None:
    insecure = gate(insecure=True)
    admitted = insecure.admit(bearer("alice"))
    assert admitted.credentials is not None
    assert admitted.credentials.principal.principal_id == "alice"
    with pytest.raises(AuthenticationError, match="signature"):
        insecure.admit(f"Bearer {TokenIssuer('x' * 40).mint('alice', ['acme'])}")
    assert insecure.admit(None).credentials is None


def test_insecure_mode_from_the_environment_warns(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    configure(monkeypatch, BRAIN_GRAPH_AUTH="insecure")
    with caplog.at_level(logging.WARNING, logger="brain_graph.auth"):
        configured = default_gate()
    assert configured.insecure
    assert configured.verifier is None
    assert INSECURE_WARNING in caplog.text
    assert configured.admit(None).credentials is None


def test_a_gate_with_nothing_configured_names_what_to_set() -> None:
    with pytest.raises(ConfigurationError, match="BRAIN_GRAPH_AUTH_SECRET") as caught:
        default_gate()
    assert "BRAIN_GRAPH_AUTH=insecure" in str(caught.value)
    with pytest.raises(ConfigurationError, match="BRAIN_GRAPH_AUTH_SECRET"):
        Gate(None, None)


def test_a_configured_gate_admits_minted_tokens(monkeypatch: pytest.MonkeyPatch) -> None:
    configure(monkeypatch, BRAIN_GRAPH_AUTH_SECRET=SECRET)
    token = load_auth_settings().issuer_for_minting().mint("alice", ["acme"])
    admission = default_gate().admit(f"Bearer {token}")
    assert admission.credentials is not None
    assert admission.credentials.principal.tenants == frozenset({"acme"})
    assert admission.headers()["X-RateLimit-Limit"] == DEFAULT_RATE_LIMIT.split()[0]  # on by default


def test_the_rate_limit_counts_per_principal_and_says_when_to_retry() -> None:
    limited = gate("3 per 60 seconds")
    remaining = [limited.admit(bearer("alice")).headers()["X-RateLimit-Remaining"] for _ in range(3)]
    assert remaining == ["2", "1", "0"]
    with pytest.raises(RateLimitedError, match="rate limit of 3 requests per 60 s reached") as caught:
        limited.admit(bearer("alice", "ops"))  # another token of the same principal shares the budget
    error = caught.value
    assert error.code == "RATE_LIMITED"
    assert 1 <= error.retry_after <= 60
    assert error.headers["Retry-After"] == str(error.retry_after)
    assert error.headers["X-RateLimit-Limit"] == "3"
    assert error.headers["X-RateLimit-Remaining"] == "0"
    assert 1 <= int(error.headers["X-RateLimit-Reset"]) <= 60
    other = limited.admit(bearer("bob"))  # another principal is unaffected
    assert (other.headers()["X-RateLimit-Limit"], other.headers()["X-RateLimit-Remaining"]) == ("3", "2")


def test_a_refused_token_does_not_use_the_budget() -> None:
    limited = gate("1 per 60 seconds")
    for _ in range(3):
        with pytest.raises(AuthenticationError):
            limited.admit(f"Bearer {TokenIssuer('x' * 40).mint('alice', ['acme'])}")
    assert limited.admit(bearer("alice")).headers()["X-RateLimit-Remaining"] == "0"


@pytest.mark.parametrize("value", ["off", "OFF", "none", ""])
def test_the_rate_limit_can_be_turned_off(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    configure(monkeypatch, BRAIN_GRAPH_AUTH_SECRET=SECRET, BRAIN_GRAPH_RATE_LIMIT=value)
    configured = default_gate()
    assert configured.limiter is None
    for _ in range(100):
        admission = configured.admit(bearer())
    assert admission.rate is None
    assert admission.headers() == {}


def test_the_rate_limit_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    configure(monkeypatch, BRAIN_GRAPH_AUTH_SECRET=SECRET, BRAIN_GRAPH_RATE_LIMIT="2/minute")
    configured = default_gate()
    configured.admit(bearer())
    configured.admit(bearer())
    with pytest.raises(RateLimitedError):
        configured.admit(bearer())


@pytest.mark.parametrize("value", ["fast", "60 per fortnight", "-1/minute", "60 per 60 seconds; drop table"])
def test_a_bad_rate_limit_is_a_configuration_error_naming_the_variable(
    monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    configure(monkeypatch, BRAIN_GRAPH_AUTH_SECRET=SECRET, BRAIN_GRAPH_RATE_LIMIT=value)
    with pytest.raises(ConfigurationError, match=r"^BRAIN_GRAPH_RATE_LIMIT: .*is not a rate limit"):
        load_auth_settings()
    with pytest.raises(ConfigurationError, match="BRAIN_GRAPH_RATE_LIMIT"):
        default_gate()


def test_a_short_secret_is_refused_without_echoing_it(monkeypatch: pytest.MonkeyPatch) -> None:
    short = "hunter2-is-not-long-enough"
    configure(monkeypatch, BRAIN_GRAPH_AUTH_SECRET=short)
    with pytest.raises(ConfigurationError, match=r"^BRAIN_GRAPH_AUTH_SECRET: must be at least 32 characters") as caught:
        load_auth_settings()
    assert short not in str(caught.value)
    configure(monkeypatch, BRAIN_GRAPH_AUTH_SECRET="x" * 32)
    assert load_auth_settings().secret is not None  # 32 characters are enough


def test_the_rate_limit_storage_is_configurable(monkeypatch: pytest.MonkeyPatch) -> None:
    from brain_graph.auth.rate_limit import rate_limit_storage

    assert type(rate_limit_storage("memory://")).__name__ == "MemoryStorage"
    with pytest.raises(ConfigurationError, match="BRAIN_GRAPH_RATE_LIMIT_STORAGE"):
        rate_limit_storage("bogus://nowhere")
