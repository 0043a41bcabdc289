"""Bearer tokens: minted tokens verify, and every way a token can be wrong is refused saying why."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from brain_graph.auth import JwtVerifier, TokenIssuer, default_gate, load_auth_settings
from brain_graph.auth.tokens import MAX_TOKEN_CHARS, MAX_TTL_S
from brain_graph.core.errors import AuthenticationError, ConfigurationError, ForbiddenError, InvalidRequestError
from brain_graph.core.security import Principal
from tests.unit import auth_plugin
from tests.unit.auth_plugin import SECRET, clean_auth_environment, configure, forget_auth_settings

OTHER_SECRET = "o" * 40
NOW = 1_700_000_000  # the time a test that sets the verifier's clock verifies at


@pytest.fixture(autouse=True)
def _clean_auth(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    clean_auth_environment(monkeypatch, tmp_path)
    yield
    forget_auth_settings()


def claims(**changes: Any) -> dict[str, Any]:
    """Valid claims for the default issuer and audience, issued now (the token is verified right after),
    with ``changes`` (a ``None`` value drops the claim)."""
    now = int(time.time())
    base = {
        "sub": "alice",
        "groups": ["ops"],
        "tenants": ["acme"],
        "scope": "reader",
        "iat": now,
        "exp": now + 600,
        "iss": "brain-graph",
        "aud": "brain-graph",
    }
    merged = {**base, **changes}
    return {key: value for key, value in merged.items() if value is not None}


def rsa_key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def public_pem(key: rsa.RSAPrivateKey) -> str:
    return (
        key.public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        .decode()
    )


def test_a_minted_token_verifies_with_its_groups_tenants_and_scopes() -> None:
    token = TokenIssuer(SECRET).mint(
        "alice", ["beta", "acme"], groups=["sec", "ops", "sec"], scopes=["reader"], ttl_s=120, now=NOW
    )
    credentials = JwtVerifier(SECRET, clock=lambda: NOW + 119).verify(token)
    assert credentials.principal == Principal("alice", ("ops", "sec"), ("acme", "beta"))
    assert credentials.principal.tenants == frozenset({"acme", "beta"})
    assert credentials.scopes == frozenset({"reader"})
    assert credentials.expires_at == NOW + 120


def test_the_configured_issuer_and_verifier_agree(monkeypatch: pytest.MonkeyPatch) -> None:
    configure(monkeypatch, BRAIN_GRAPH_AUTH_SECRET=SECRET, BRAIN_GRAPH_AUTH_ISSUER="acme-idp")
    settings = load_auth_settings()
    token = settings.issuer_for_minting().mint("alice", ["acme"])
    verifier = settings.build_verifier()
    assert verifier is not None
    assert verifier.verify(token).principal.principal_id == "alice"
    assert jwt.decode(token, options={"verify_signature": False})["iss"] == "acme-idp"
    with pytest.raises(AuthenticationError, match="not issued by 'acme-idp'"):
        verifier.verify(TokenIssuer(SECRET).mint("alice", ["acme"]))  # the default issuer


def test_maintainer_implies_reader() -> None:
    token = TokenIssuer(SECRET).mint("alice", ["acme"], scopes=["maintainer"])
    assert jwt.decode(token, options={"verify_signature": False})["scope"] == "maintainer"
    credentials = JwtVerifier(SECRET).verify(token)
    assert credentials.scopes == frozenset({"reader", "maintainer"})
    credentials.require("reader", "searching")
    credentials.require("maintainer", "indexing")


def test_a_reader_token_is_not_a_maintainer_token() -> None:
    credentials = JwtVerifier(SECRET).verify(TokenIssuer(SECRET).mint("alice", ["acme"]))
    assert credentials.scopes == frozenset({"reader"})
    with pytest.raises(ForbiddenError, match="indexing needs the 'maintainer' scope; the token has: reader"):
        credentials.require("maintainer", "indexing")


def test_unknown_scope_words_in_a_token_grant_nothing() -> None:
    token = jwt.encode(claims(scope="admin superuser"), SECRET, algorithm="HS256")
    assert JwtVerifier(SECRET).verify(token).scopes == frozenset()


def test_an_expired_token_is_refused() -> None:
    token = TokenIssuer(SECRET).mint("alice", ["acme"], ttl_s=60, now=NOW)
    assert JwtVerifier(SECRET, clock=lambda: NOW + 59).verify(token).principal.principal_id == "alice"
    with pytest.raises(AuthenticationError, match="expired"):
        JwtVerifier(SECRET, clock=lambda: NOW + 60).verify(token)


def test_a_token_from_another_key_or_tampered_is_refused() -> None:
    with pytest.raises(AuthenticationError, match="signature does not verify"):
        JwtVerifier(SECRET).verify(TokenIssuer(OTHER_SECRET).mint("alice", ["acme"]))
    header, _, signature = TokenIssuer(SECRET).mint("alice", ["acme"]).split(".")
    forged = jwt.encode(claims(tenants=["beta"]), OTHER_SECRET, algorithm="HS256").split(".")[1]
    with pytest.raises(AuthenticationError, match="signature does not verify"):
        JwtVerifier(SECRET).verify(f"{header}.{forged}.{signature}")


@pytest.mark.parametrize(
    ("issuer", "audience", "message"),
    [("evil", "brain-graph", "not issued by 'brain-graph'"), ("brain-graph", "other-app", "not for audience")],
)
def test_a_token_for_another_issuer_or_audience_is_refused(issuer: str, audience: str, message: str) -> None:
    token = TokenIssuer(SECRET, issuer=issuer, audience=audience).mint("alice", ["acme"])
    with pytest.raises(AuthenticationError, match=message):
        JwtVerifier(SECRET).verify(token)


@pytest.mark.parametrize(
    "token",
    [
        pytest.param(jwt.encode(claims(), None, algorithm="none"), id="alg-none"),
        pytest.param(jwt.encode(claims(), SECRET + SECRET, algorithm="HS512"), id="hs512"),
    ],
)
def test_an_algorithm_that_is_not_allowed_is_refused(token: str) -> None:
    with pytest.raises(AuthenticationError, match=r"algorithm is not allowed \(allowed: HS256\)"):
        JwtVerifier(SECRET + SECRET, ["HS256"]).verify(token)


def test_an_unsigned_token_is_refused_even_with_a_valid_signature_stripped() -> None:
    header, payload, _ = TokenIssuer(SECRET).mint("alice", ["acme"]).split(".")
    with pytest.raises(AuthenticationError):
        JwtVerifier(SECRET).verify(f"{header}.{payload}.")


@pytest.mark.parametrize("missing", ["sub", "tenants", "exp", "iat"])
def test_a_token_without_a_required_claim_is_refused_naming_it(missing: str) -> None:
    token = jwt.encode(claims(**{missing: None}), SECRET, algorithm="HS256")
    with pytest.raises(AuthenticationError, match=f"lacks the '{missing}' claim"):
        JwtVerifier(SECRET).verify(token)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"groups": "ops"}, r"claim 'groups' must be a list of group names \(got str\)"),
        ({"groups": ["ops", ""]}, r"claim 'groups\[1\]' must not be empty"),
        ({"groups": ["group:admins"]}, r"claim 'groups\[0\]' must not start with 'user:' or 'group:'"),
        ({"tenants": []}, "claim 'tenants' must be a non-empty list"),
        ({"tenants": "acme"}, "claim 'tenants' must be a non-empty list"),
        ({"tenants": ["acme", "a\u200bb"]}, r"claim 'tenants\[1\]' must not contain control, format"),
        ({"sub": "user:bob"}, "claim 'sub' must not start with"),
        ({"sub": ""}, "claim 'sub' must name a principal"),
        ({"scope": ["reader"]}, "claim 'scope' must be a space-separated string"),
    ],
)
def test_a_malformed_claim_is_refused_naming_it(changes: dict[str, Any], message: str) -> None:
    token = jwt.encode(claims(**changes), SECRET, algorithm="HS256")
    with pytest.raises(AuthenticationError, match=message):
        JwtVerifier(SECRET).verify(token)


def test_an_overlong_token_is_refused_before_it_is_decoded() -> None:
    many_groups = [f"group-{index:04d}-{'x' * 40}" for index in range(400)]
    token = TokenIssuer(SECRET).mint("alice", ["acme"], groups=many_groups)
    assert len(token) > MAX_TOKEN_CHARS  # validly signed, but too long
    with pytest.raises(AuthenticationError, match=f"longer than {MAX_TOKEN_CHARS} characters"):
        JwtVerifier(SECRET).verify(token)
    with pytest.raises(AuthenticationError, match="longer than"):
        JwtVerifier(SECRET).verify("x" * (MAX_TOKEN_CHARS + 1))


@pytest.mark.parametrize("garbage", ["garbage", "a.b.c", "", "....", "eyJhbGciOiJIUzI1NiJ9.bnVsbA.x"])
def test_garbage_is_an_authentication_error(garbage: str) -> None:
    with pytest.raises(AuthenticationError, match="bearer token"):
        JwtVerifier(SECRET).verify(garbage)


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"ttl_s": 0}, "ttl"),
        ({"ttl_s": MAX_TTL_S + 1}, "ttl"),
        ({"scopes": ["reader", "admin"]}, "scope"),
        ({"tenants": []}, "tenant"),
        ({"tenants": [""]}, "context.principal.tenants[0]"),
        ({"principal_id": ""}, "tenant"),
        ({"groups": ["group:x"]}, "context.principal.groups[0]"),
    ],
)
def test_minting_checks_its_arguments(kwargs: dict[str, Any], field: str) -> None:
    arguments: dict[str, Any] = {"principal_id": "alice", "tenants": ["acme"], **kwargs}
    with pytest.raises(InvalidRequestError) as caught:
        TokenIssuer(SECRET).mint(arguments.pop("principal_id"), arguments.pop("tenants"), **arguments)
    assert caught.value.field == field


def test_a_principal_for_a_remote_graph_must_list_its_tenants() -> None:
    token = TokenIssuer(SECRET).for_principal(Principal("alice", ("ops",), ("acme",)), scopes=["maintainer"])
    credentials = JwtVerifier(SECRET).verify(token)
    assert credentials.principal == Principal("alice", ("ops",), ("acme",))
    assert "maintainer" in credentials.scopes
    with pytest.raises(InvalidRequestError, match="must list its tenants"):
        TokenIssuer(SECRET).for_principal(Principal("alice"))


def test_minting_needs_the_secret(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ConfigurationError, match="BRAIN_GRAPH_AUTH_SECRET"):
        load_auth_settings().issuer_for_minting()


def test_a_pluggable_verifier_replaces_the_jwt_one(monkeypatch: pytest.MonkeyPatch) -> None:
    configure(
        monkeypatch,
        BRAIN_GRAPH_AUTH_VERIFIER="tests.unit.auth_plugin:factory",
        BRAIN_GRAPH_AUTH_SECRET=SECRET,  # the plug-in wins over the secret
        BRAIN_GRAPH_AUTH_AUDIENCE="plugged-audience",
    )
    verifier = load_auth_settings().build_verifier()
    assert isinstance(verifier, auth_plugin.StaticVerifier)
    assert verifier.settings.audience == "plugged-audience"  # the factory is given the settings
    admission = default_gate().admit(f"Bearer {auth_plugin.PLUGIN_TOKEN}")
    assert admission.credentials is not None
    assert admission.credentials.principal == auth_plugin.PLUGIN_PRINCIPAL
    assert admission.credentials.scopes == frozenset({"maintainer", "reader"})
    with pytest.raises(AuthenticationError, match="plug-in does not know"):
        default_gate().admit(f"Bearer {TokenIssuer(SECRET).mint('alice', ['acme'])}")


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("tests.unit.auth_plugin:missing", "cannot load 'tests.unit.auth_plugin:missing'"),
        ("tests.unit.no_such_module:factory", "cannot load"),
        ("tests.unit.auth_plugin", "cannot load"),
        ("tests.unit.auth_plugin:not_a_verifier", "returned no TokenVerifier"),
    ],
)
def test_a_bad_verifier_plugin_is_a_configuration_error(
    monkeypatch: pytest.MonkeyPatch, value: str, message: str
) -> None:
    configure(monkeypatch, BRAIN_GRAPH_AUTH_VERIFIER=value)
    with pytest.raises(ConfigurationError, match=f"^BRAIN_GRAPH_AUTH_VERIFIER: .*{message}"):
        load_auth_settings().build_verifier()


def test_rs256_tokens_verify_with_a_public_key_file(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    key = rsa_key()
    key_file = tmp_path / "public.pem"
    key_file.write_text(public_pem(key), encoding="utf-8")
    configure(monkeypatch, BRAIN_GRAPH_AUTH_PUBLIC_KEY_FILE=str(key_file))
    verifier = load_auth_settings().build_verifier()
    assert verifier is not None
    token = TokenIssuer(key, "RS256").mint("alice", ["acme"], groups=["ops"], scopes=["maintainer"])
    credentials = verifier.verify(token)
    assert credentials.principal == Principal("alice", ("ops",), ("acme",))
    assert credentials.scopes == frozenset({"reader", "maintainer"})
    with pytest.raises(AuthenticationError, match="signature does not verify"):
        verifier.verify(TokenIssuer(rsa_key(), "RS256").mint("alice", ["acme"]))
    # the classic confusion: the public key, which anyone may have, used as an HMAC secret
    with pytest.raises(AuthenticationError, match="algorithm is not allowed"):
        verifier.verify(jwt.encode(claims(), SECRET, algorithm="HS256"))
    # an algorithm that is allowed but does not fit the key type is refused, not a crash
    with pytest.raises(AuthenticationError, match="does not match the configured key"):
        verifier.verify(TokenIssuer(ec.generate_private_key(ec.SECP256R1()), "ES256").mint("alice", ["acme"]))
    with pytest.raises(ConfigurationError, match="BRAIN_GRAPH_AUTH_SECRET"):
        load_auth_settings().issuer_for_minting()  # a public key cannot sign


def test_a_missing_public_key_file_is_a_configuration_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    configure(monkeypatch, BRAIN_GRAPH_AUTH_PUBLIC_KEY_FILE=str(tmp_path / "absent.pem"))
    with pytest.raises(ConfigurationError, match=r"^BRAIN_GRAPH_AUTH_PUBLIC_KEY_FILE: "):
        load_auth_settings().build_verifier()


def test_a_token_living_longer_than_the_maximum_is_refused() -> None:
    now = int(time.time())
    base = {"sub": "alice", "tenants": ["acme"], "iat": now, "iss": "brain-graph", "aud": "brain-graph"}
    too_long = jwt.encode({**base, "exp": now + MAX_TTL_S + 1}, SECRET, algorithm="HS256")
    with pytest.raises(AuthenticationError, match="lives longer"):
        JwtVerifier(SECRET).verify(too_long)
    longest = jwt.encode({**base, "exp": now + MAX_TTL_S}, SECRET, algorithm="HS256")
    assert JwtVerifier(SECRET).verify(longest).principal.principal_id == "alice"
