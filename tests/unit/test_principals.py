"""Principals are validated, never coerced; ACL identities are typed (``user:``/``group:``)."""

from __future__ import annotations

from typing import Any

import pytest

from brain_graph.auth.principals import as_principal, principal_from_user
from brain_graph.core.contracts import BrainSearchResult
from brain_graph.core.errors import AuthorizationError, InvalidRequestError
from brain_graph.core.security import Principal, parse_acl_entry
from brain_graph.graphs.search import BrainSearchGraph, build_graph
from brain_graph.pipeline.binding import resolve_deps
from brain_graph.pipeline.requests import read_request
from brain_graph.pipeline.services import SearchServices
from brain_graph.pipeline.state import BrainSearchContext
from tests.helpers import request


def search(graph: BrainSearchGraph, principal: Any) -> BrainSearchResult:
    raw = request("token refresh outage postmortem", secured=True, expandDepth=2, topK=50)
    return BrainSearchResult.model_validate(graph.invoke(raw, context=BrainSearchContext(principal=principal)))


def cited(result: BrainSearchResult) -> set[str]:
    return {citation.source_node_id for citation in result.prompt_pack.citations}


def test_identities_are_typed_and_never_raw() -> None:
    assert Principal("alice", ("security", "ops")).identities == {"user:alice", "group:security", "group:ops"}


@pytest.mark.parametrize(
    ("principal_id", "groups"),
    [("group:security", ()), ("USER:alice", ()), ("bob", ("user:alice",)), ("bob", ("Group:x",))],
)
def test_names_that_read_as_another_kind_are_refused(principal_id: str, groups: tuple[str, ...]) -> None:
    with pytest.raises(InvalidRequestError, match=r"context\.principal"):
        Principal(principal_id, groups)


@pytest.mark.parametrize(
    ("value", "field"),
    [
        ({"principalId": "bob", "groups": {"security": False}}, "context.principal.groups"),
        ({"principalId": "bob", "groups": "security"}, "context.principal.groups"),
        ({"principalId": "bob", "groups": ["security", 7]}, r"context.principal.groups\[1\]"),
        ({"principalId": 42}, "context.principal.principalId"),
        ({"groups": ["security"]}, "context.principal.principalId"),
        ({}, "context.principal.principalId"),
        ({"principalId": " bob"}, "context.principal.principalId"),
        ({"principalId": "bob\n"}, "context.principal.principalId"),
        ({"principalId": "bo\u2028b"}, "context.principal.principalId"),
        ({"principalId": "x" * 257}, "context.principal.principalId"),
        ({"principalId": "bob", "isAdmin": True}, "context.principal"),
        ("bob", "context.principal"),
        (["bob"], "context.principal"),
    ],
)
def test_malformed_principals_are_typed_errors(value: Any, field: str) -> None:
    with pytest.raises(InvalidRequestError, match=field):
        as_principal(value)


@pytest.mark.parametrize("value", [Principal(""), {"principalId": ""}, {"principalId": "", "groups": ["security"]}])
def test_an_empty_id_is_no_principal(small_graph: BrainSearchGraph, value: Any) -> None:
    principal = as_principal(value)
    assert principal is not None
    assert principal.is_anonymous
    with pytest.raises(AuthorizationError, match="no principal"):
        search(small_graph, value)


def test_a_coercible_groups_value_grants_nothing(small_graph: BrainSearchGraph) -> None:
    with pytest.raises(InvalidRequestError, match="groups"):
        search(small_graph, {"principalId": "bob", "groups": {"security": False}})
    with pytest.raises(InvalidRequestError, match="groups"):
        search(small_graph, {"principalId": "bob", "groups": "security"})


def test_a_principal_named_like_a_group_entry_sees_nothing_of_the_group(small_graph: BrainSearchGraph) -> None:
    # d2's ACL is group:security, s2's is user:carol
    assert "d2" in cited(search(small_graph, Principal("bob", ("security",))))
    assert "d2" not in cited(search(small_graph, Principal("security")))
    assert "s2" not in cited(search(small_graph, Principal("bob", ("carol",))))
    with pytest.raises(InvalidRequestError):
        search(small_graph, {"principalId": "group:security"})


def test_server_user_claims_are_validated() -> None:
    class User(dict[str, Any]):
        pass

    assert principal_from_user(User(is_authenticated=True, identity="ann", groups=["ops"])) == Principal(
        "ann", ("ops",)
    )
    with pytest.raises(InvalidRequestError, match="groups"):
        principal_from_user(User(is_authenticated=True, identity="ann", groups="ops"))
    with pytest.raises(InvalidRequestError, match=r"user\.identity"):
        principal_from_user(User(is_authenticated=True, identity="group:ops"))


@pytest.mark.parametrize(
    ("entry", "parsed"), [("user:alice", ("user", "alice")), ("group:a b", ("group", "a b")), ("user:é", ("user", "é"))]
)
def test_acl_entries_parse(entry: str, parsed: tuple[str, str]) -> None:
    assert parse_acl_entry(entry) == parsed


@pytest.mark.parametrize("entry", ["alice", "user:", "group:", "user: x", "team:x", "user:group:x", "group:x\n", 3])
def test_invalid_acl_entries_are_refused(entry: object) -> None:
    with pytest.raises(ValueError, match="ACL entry"):
        parse_acl_entry(entry)


@pytest.mark.parametrize(
    "value", [Principal(""), {"principalId": ""}, {"principal_id": ""}, {"principalId": "", "groups": ["security"]}]
)
def test_service_principal_mode_never_promotes_an_anonymous_principal(small_services: Any, value: Any) -> None:
    graph = build_graph(SearchServices(backend=small_services.backend, service_principal=True))
    with pytest.raises(AuthorizationError):
        search(graph, value)
    assert "d2" in cited(search(graph, None))  # no principal at all: the service principal


def test_an_unauthenticated_server_user_is_never_the_service_principal(small_services: Any) -> None:
    class User(dict[str, Any]):
        pass

    services = SearchServices(backend=small_services.backend, service_principal=True)
    for user in (User(is_authenticated=False, identity="x"), User(is_authenticated=True, identity="")):
        deps = resolve_deps(None, lambda: services, user)
        assert deps.principal is not None
        assert deps.principal.is_anonymous
        with pytest.raises(AuthorizationError):
            deps.scope(read_request(request("x", secured=True), services))


def test_both_spellings_of_the_principal_id_are_refused() -> None:
    with pytest.raises(InvalidRequestError, match="not both"):
        as_principal({"principalId": "alice", "principal_id": "bob"})
