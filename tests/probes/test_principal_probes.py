"""Attack class: ACL and principal confusion. Principals that look like others (case, confusable
letters, invisible or bidi characters, kind prefixes), server users the server could not identify,
permissions smuggling a user identity, oversized or coercible group lists: none sees a secured item
it is not granted, none becomes the all-seeing service principal, every refusal is one typed line."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from brain_graph import AuthorizationError, BrainGraphError, InvalidRequestError, Principal, SearchServices
from brain_graph.auth.principals import as_principal, principal_from_user
from tests.probes.support import BIDI_AND_INVISIBLE, make_store, request, search, small_graph

SECURED_QUERY = "token refresh outage postmortem secret incident"


def _secured(**options: Any) -> dict[str, Any]:
    return request(SECURED_QUERY, secured=True, topK=50, expandDepth=2, **options)


def _secured_ids_seen(services: SearchServices, principal: Any, *, config: dict[str, Any] | None = None) -> set[str]:
    """Secured node ids (d2, s2) that appear anywhere in the result; none when the search is refused."""
    try:
        result = search(services, _secured(), principal, config=config)
    except (AuthorizationError, InvalidRequestError):
        return set()
    seen = {h.node_id for h in result.hits} | {n.node_id for n in result.graph_nodes}
    seen |= {p.source_node_id for p in result.passages}
    return seen & {"d2", "s2"}


# -- server users the server could not identify never become the service principal ----------------


class _ServerUser:
    """A user as a LangGraph server puts it on the run (``configurable.langgraph_auth_user``)."""

    def __init__(self, identity: Any, *, is_authenticated: bool = True, **claims: Any) -> None:
        self.identity = identity
        self.is_authenticated = is_authenticated
        self.permissions = claims.pop("permissions", [])
        for key, value in claims.items():
            setattr(self, key, value)


def _server_config(user: Any) -> dict[str, Any]:
    return {"configurable": {"langgraph_auth_user": user, "graph_id": "brain_search"}}


@pytest.mark.parametrize(
    "user",
    [
        _ServerUser("", is_authenticated=True),
        _ServerUser("mallory", is_authenticated=False),
        _ServerUser(None, is_authenticated=True),
    ],
    ids=["authenticated-without-identity", "unauthenticated", "identity-none"],
)
def test_server_user_without_identity_is_not_promoted_to_service_principal(tmp_path: Path, user: Any) -> None:
    """With server authentication, the principal comes from the credentials; a user the server could not
    identify must fail closed, never fall back to the all-seeing service principal (end to end, through
    the run config)."""
    services = SearchServices(backend=make_store(tmp_path, small_graph()).backend, service_principal=True)
    assert _secured_ids_seen(services, None, config=_server_config(user)) == set()


def test_server_user_principal_is_used_end_to_end(tmp_path: Path) -> None:
    services = make_store(tmp_path, small_graph())
    user = _ServerUser("bob", groups=["security"])
    assert "d2" in _secured_ids_seen(services, None, config=_server_config(user))
    with pytest.raises(AuthorizationError):
        search(services, _secured(), {"principalId": "carol"}, config=_server_config(user))


def test_server_permissions_cannot_smuggle_a_user_identity() -> None:
    with pytest.raises(InvalidRequestError):
        principal_from_user(_ServerUser("bob", permissions=["group:user:carol"]))
    with pytest.raises(InvalidRequestError):
        principal_from_user(_ServerUser("bob", permissions=["group:"]))


# -- names: kinds, case, invisible characters ------------------------------------------------------


@pytest.mark.parametrize("char", list(BIDI_AND_INVISIBLE), ids=[f"U+{ord(c):04X}" for c in BIDI_AND_INVISIBLE])
def test_principal_names_with_invisible_or_bidi_characters_are_refused(char: str) -> None:
    """``alice\\u200b`` renders as ``alice`` in logs, audit lines and admin UIs, and a right-to-left
    override reorders them: names holding Unicode format characters (bidi controls, zero-width
    characters, BOM, soft hyphen) are refused like control characters are."""
    with pytest.raises(InvalidRequestError, match=r"context\.principal\.principalId: .*format"):
        Principal(f"ali{char}ce")
    with pytest.raises(InvalidRequestError, match=r"context\.principal\.groups\[0\]: .*format"):
        Principal("bob", (f"secu{char}rity",))
    with pytest.raises(InvalidRequestError, match=r"user\.identity"):
        principal_from_user(_ServerUser(f"bo{char}b"))


@pytest.mark.parametrize(
    ("pid", "groups"),
    [
        ("bob", ("Security",)),
        ("bob", ("SECURITY",)),
        ("bob", ("securit\u0443",)),  # Cyrillic u
        ("bob", ("ｓｅｃｕｒｉｔｙ",)),  # fullwidth
        ("Carol", ()),
        ("carol\u0301", ()),
        ("bob", ("carol",)),
        ("bob", ("security:",)),
        ("bob", ("group",)),
        ("bob", ("security,carol",)),
        ("bob", ("security carol",)),
        ("bob", ("*",)),
        ("bob", ("%",)),
        ("bob", (".*",)),
    ],
)
def test_lookalike_principals_see_no_secured_item(
    small_services: SearchServices, pid: str, groups: tuple[str, ...]
) -> None:
    assert _secured_ids_seen(small_services, Principal(pid, groups)) == set()


@pytest.mark.parametrize(
    "pid", ["ＵＳＥＲ:carol", "user\u200b:carol", "usеr:carol", "GROUP:security", " group:security"]
)
def test_kind_prefix_variants_never_match_across_kinds(small_services: SearchServices, pid: str) -> None:
    try:
        principal = Principal(pid)
    except InvalidRequestError:
        return
    assert _secured_ids_seen(small_services, principal) == set()


# -- group lists -----------------------------------------------------------------------------------


def test_many_long_groups_are_accepted_and_fast(small_services: SearchServices) -> None:
    groups = (*(f"g{n:04d}" + "x" * 250 for n in range(999)), "security")
    started = time.perf_counter()
    assert _secured_ids_seen(small_services, Principal("bob", groups)) == {"d2"}
    assert time.perf_counter() - started < 3.0


def test_more_than_max_groups_is_a_typed_error() -> None:
    with pytest.raises(InvalidRequestError, match="groups"):
        Principal("bob", tuple(f"g{n}" for n in range(1001)))
    with pytest.raises(InvalidRequestError, match="groups"):
        as_principal({"principalId": "bob", "groups": [f"g{n}" for n in range(1001)]})


@pytest.mark.parametrize("groups", [{"security"}, frozenset({"security"}), (g for g in ["security"]), b"security"])
def test_non_list_groups_are_refused(groups: Any) -> None:
    with pytest.raises(InvalidRequestError):
        Principal("bob", groups)


@pytest.mark.parametrize(
    "value",
    [{"principalId": "bob", "x\n" * 50_000: 1}, {"principalId": "bob", "groups": ["a\nb" * 50_000]}],
    ids=["huge-key", "huge-group"],
)
def test_principal_errors_are_one_bounded_line(value: dict[str, Any]) -> None:
    with pytest.raises(BrainGraphError) as caught:
        as_principal(value)
    message = str(caught.value)
    assert "\n" not in message
    assert len(message) < 1_000, len(message)
