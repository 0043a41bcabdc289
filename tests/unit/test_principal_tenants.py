"""A principal's tenants: validated like every identifier, enforced by ``resolve_scope`` (a refusal,
never an empty result), read from the server user; and the scopes a bearer-token user holds."""

from __future__ import annotations

from typing import Any

import pytest

from brain_graph.auth import Credentials
from brain_graph.auth.principals import (
    INSECURE_CLAIM,
    as_principal,
    is_insecure_user,
    principal_from_user,
    require_user_scope,
    user_scopes,
)
from brain_graph.core.errors import AuthorizationError, ForbiddenError, InvalidRequestError
from brain_graph.core.security import MAX_GROUPS, AccessScope, Principal, resolve_scope
from brain_graph.graphs.index import _check_token_user


class User(dict[str, Any]):
    """A LangGraph server user in its dict form."""


def token_user(*scopes: str, tenants: list[str] | None = None, **claims: Any) -> User:
    user = User(is_authenticated=True, identity="ann", groups=["ops"], scopes=list(scopes), **claims)
    if tenants is not None:
        user["tenants"] = tenants
    return user


@pytest.mark.parametrize(
    ("tenants", "field", "problem"),
    [
        ("acme", "context.principal.tenants", "must be a list of tenant ids (got str)"),
        (5, "context.principal.tenants", "must be a list of tenant ids (got int)"),
        ([""], "context.principal.tenants[0]", "must be a tenant id of 1 to 256 characters"),
        (["acme", 7], "context.principal.tenants[1]", "must be a tenant id"),
        (["acme", "x" * 257], "context.principal.tenants[1]", "1 to 256 characters"),
        (["ac\nme"], "context.principal.tenants[0]", "must not contain control"),
        (["a\u202eb"], "context.principal.tenants[0]", "U+202E"),
        ([f"t{i}" for i in range(MAX_GROUPS + 1)], "context.principal.tenants", f"at most {MAX_GROUPS} tenants"),
    ],
)
def test_invalid_tenants_name_the_field(tenants: Any, field: str, problem: str) -> None:
    with pytest.raises(InvalidRequestError) as caught:
        Principal("ann", (), tenants)
    assert caught.value.field == field
    assert problem in caught.value.problem


def test_tenants_are_a_set_and_sorted_on_the_wire() -> None:
    principal = Principal("ann", ("ops",), ["beta", "acme", "beta"])
    assert principal.tenants == frozenset({"acme", "beta"})
    assert principal == Principal("ann", ("ops",), ("acme", "beta"))
    assert hash(principal) == hash(Principal("ann", ("ops",), {"beta", "acme"}))
    assert principal.to_wire() == {"principalId": "ann", "groups": ["ops"], "tenants": ["acme", "beta"]}
    assert Principal("ann").to_wire() == {"principalId": "ann", "groups": []}


@pytest.mark.parametrize("secured", [False, True])
@pytest.mark.parametrize("service_principal", [False, True])
def test_another_tenant_is_forbidden_secured_or_not(secured: bool, service_principal: bool) -> None:
    principal = Principal("ann", ("ops",), ["acme"])
    with pytest.raises(
        ForbiddenError, match="principal 'ann' may not read tenant 'beta'; its credentials allow 'acme'"
    ):
        resolve_scope("beta", secured, principal, service_principal)
    scope = resolve_scope("acme", secured, principal, service_principal)
    assert scope.tenant_id == "acme"
    assert scope.identities == (frozenset({"user:ann", "group:ops"}) if secured else None)


def test_a_forbidden_tenant_is_an_authorization_error_with_its_own_code() -> None:
    with pytest.raises(AuthorizationError) as caught:
        resolve_scope("beta", False, Principal("ann", (), ["acme"]), False)
    assert isinstance(caught.value, ForbiddenError)
    assert caught.value.code == "FORBIDDEN"


def test_an_empty_tenant_list_reads_no_tenant() -> None:
    with pytest.raises(ForbiddenError, match="allow no tenant"):
        resolve_scope("acme", False, Principal("ann", (), []), False)


def test_the_anonymous_principal_is_held_to_its_tenants_too() -> None:
    with pytest.raises(ForbiddenError):
        resolve_scope("beta", False, Principal("", (), ["acme"]), True)
    assert resolve_scope("acme", False, Principal("", (), ["acme"]), True) == AccessScope(tenant_id="acme")


@pytest.mark.parametrize("tenant", ["acme", "beta", "anything"])
def test_no_tenant_list_means_every_tenant(tenant: str) -> None:
    principal = Principal("ann", ("ops",))
    assert principal.tenants is None
    assert principal.may_read_tenant(tenant)
    assert resolve_scope(tenant, True, principal, False).identities == frozenset({"user:ann", "group:ops"})
    assert resolve_scope(tenant, False, None, False) == AccessScope(tenant_id=tenant)


def test_principal_from_user_reads_the_tenants_claim() -> None:
    user = User(is_authenticated=True, identity="ann", groups=["ops"], tenants=["acme", "beta"])
    assert principal_from_user(user) == Principal("ann", ("ops",), ("acme", "beta"))
    assert principal_from_user(User(is_authenticated=True, identity="ann")).tenants is None


@pytest.mark.parametrize("tenants", ["acme", [""], ["a\u200bb"], [None]])
def test_a_malformed_tenants_claim_names_it(tenants: Any) -> None:
    with pytest.raises(InvalidRequestError) as caught:
        principal_from_user(User(is_authenticated=True, identity="ann", tenants=tenants))
    assert caught.value.field == "user.tenants"


def test_an_unauthenticated_user_is_anonymous_whatever_its_tenants() -> None:
    principal = principal_from_user(User(is_authenticated=False, identity="ann", tenants=["acme"]))
    assert principal.is_anonymous
    assert principal.tenants is None


def test_credentials_survive_the_trip_through_the_server_user() -> None:
    credentials = Credentials(Principal("ann", ("ops",), ("acme", "beta")), frozenset({"maintainer"}))
    user = credentials.server_user()
    assert principal_from_user(user) == credentials.principal
    assert user_scopes(user) == frozenset({"maintainer", "reader"})
    assert user["permissions"] == ["brain:maintainer", "brain:reader"]


def test_as_principal_accepts_tenants() -> None:
    principal = as_principal({"principalId": "ann", "groups": ["ops"], "tenants": ["acme"]})
    assert principal == Principal("ann", ("ops",), ("acme",))
    assert as_principal({"principalId": "ann"}) == Principal("ann")
    assert as_principal({"principalId": "ann", "tenants": None}) == Principal("ann")
    with pytest.raises(InvalidRequestError) as caught:
        as_principal({"principalId": "ann", "tenants": "acme"})
    assert caught.value.field == "context.principal.tenants"
    with pytest.raises(InvalidRequestError, match="allowed: principalId, groups, tenants"):
        as_principal({"principalId": "ann", "tenant": ["acme"]})


def test_require_user_scope() -> None:
    require_user_scope(token_user("reader"), "reader", "searching")
    require_user_scope(token_user("maintainer", "reader"), "maintainer", "indexing")
    with pytest.raises(ForbiddenError, match="indexing needs the 'maintainer' scope; the token has: reader"):
        require_user_scope(token_user("reader"), "maintainer", "indexing")
    with pytest.raises(ForbiddenError, match="the token has: none"):
        require_user_scope(token_user(), "reader", "searching")
    # a user of another auth handler has no scopes claim: that handler decides
    require_user_scope(User(is_authenticated=True, identity="ann"), "maintainer", "indexing")
    assert user_scopes(User(is_authenticated=True, identity="ann")) is None
    assert user_scopes(None) is None
    with pytest.raises(InvalidRequestError) as caught:
        user_scopes(User(scopes="reader"))
    assert caught.value.field == "user.scopes"


def test_only_the_exact_insecure_claim_marks_the_insecure_user() -> None:
    assert is_insecure_user(User(is_authenticated=False, identity="insecure-dev", **{INSECURE_CLAIM: True}))
    assert not is_insecure_user(User(is_authenticated=False, **{INSECURE_CLAIM: "true"}))
    assert not is_insecure_user(User(is_authenticated=True, identity="ann"))
    assert not is_insecure_user(None)


def test_indexing_with_a_token_needs_the_maintainer_scope_and_its_tenants() -> None:
    _check_token_user(User(is_authenticated=True, identity="ann"), None)  # another auth handler decides
    maintainer = token_user("maintainer", "reader", tenants=["acme"])
    _check_token_user(maintainer, ["acme"])
    with pytest.raises(ForbiddenError, match="indexing needs the 'maintainer' scope"):
        _check_token_user(token_user("reader", tenants=["acme"]), ["acme"])
    with pytest.raises(ForbiddenError, match=r"may not index tenant\(s\) \['beta'\]; it may index: acme"):
        _check_token_user(maintainer, ["acme", "beta"])
    with pytest.raises(ForbiddenError, match="name the tenants to index"):
        _check_token_user(maintainer, None)  # "every tenant" is refused to a token with a tenant list
