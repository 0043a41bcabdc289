"""Where a search's principal comes from: the run context without server auth, the authenticated user
(``Runtime.server_info.user``, from ``configurable["langgraph_auth_user"]``) with it."""

from __future__ import annotations

from typing import Any, cast

import pytest
from langchain_core.runnables import RunnableConfig
from langgraph_sdk.auth.types import StudioUser

from brain_graph.auth.principals import principal_from_user
from brain_graph.core.errors import AuthorizationError
from brain_graph.core.security import ANONYMOUS, Principal
from brain_graph.graphs.search import BrainSearchGraph
from brain_graph.pipeline.binding import resolve_deps
from brain_graph.pipeline.services import SearchServices
from brain_graph.pipeline.state import BrainSearchContext, BrainSearchInput
from tests.platform.cases import SECURED_POSTMORTEM

SECURED = {"queryText": "token refresh postmortem", "filter": {"tenantId": "acme", "secured": True}}


class ServerUser:
    """A user as the LangGraph server hands it to a run (attributes plus a dict form)."""

    def __init__(self, identity: str, *, authenticated: bool = True, **claims: Any) -> None:
        self.identity = identity
        self.is_authenticated = authenticated
        self.display_name = identity
        self.permissions: list[str] = claims.pop("permissions", [])
        self._claims = claims

    def get(self, key: str, default: Any = None) -> Any:
        return self._claims.get(key, default)


def _as(user: Any) -> RunnableConfig:
    return {"configurable": {"langgraph_auth_user": user}}


def _hits(graph: BrainSearchGraph, config: RunnableConfig | None = None, **context: Any) -> list[str]:
    output = graph.invoke(cast(BrainSearchInput, SECURED), config, context=BrainSearchContext(**context))
    return [hit["nodeId"] for hit in output["hits"]]


@pytest.mark.parametrize(
    ("user", "principal"),
    [
        (ServerUser("alice", groups=["security"]), Principal("alice", ("security",))),
        (ServerUser("carol", permissions=["group:security", "threads:write"]), Principal("carol", ("security",))),
        (ServerUser("bob"), Principal("bob")),
        (ServerUser("eve", authenticated=False, groups=["security"]), ANONYMOUS),
        (ServerUser("", groups=["security"]), ANONYMOUS),
        (StudioUser("dev@example.com", is_authenticated=True), Principal("dev@example.com")),
        (StudioUser("langgraph-studio-user"), ANONYMOUS),  # langgraph dev's unverified Studio access
        (None, ANONYMOUS),
    ],
)
def test_principal_from_a_server_user(user: Any, principal: Principal) -> None:
    assert principal_from_user(user) == principal


def test_without_server_auth_the_context_principal_is_used(home_graph: BrainSearchGraph) -> None:
    assert SECURED_POSTMORTEM in _hits(home_graph, principal={"principalId": "alice", "groups": ["security"]})
    with pytest.raises(AuthorizationError):
        _hits(home_graph)


def test_with_server_auth_the_authenticated_user_is_the_principal(home_graph: BrainSearchGraph) -> None:
    assert SECURED_POSTMORTEM in _hits(home_graph, _as(ServerUser("alice", groups=["security"])))
    assert SECURED_POSTMORTEM not in _hits(home_graph, _as(ServerUser("bob")))


def test_with_server_auth_the_context_cannot_impersonate_or_add_groups(home_graph: BrainSearchGraph) -> None:
    with pytest.raises(AuthorizationError, match="does not match the authenticated user"):
        _hits(home_graph, _as(ServerUser("bob")), principal=Principal("alice", ("security",)))
    same_id_more_groups = _hits(home_graph, _as(ServerUser("bob")), principal=Principal("bob", ("security",)))
    assert SECURED_POSTMORTEM not in same_id_more_groups


def test_an_unauthenticated_server_user_fails_closed(home_graph: BrainSearchGraph) -> None:
    with pytest.raises(AuthorizationError):
        _hits(home_graph, _as(ServerUser("eve", authenticated=False)))
    with pytest.raises(AuthorizationError):
        _hits(home_graph, _as(ServerUser("eve", authenticated=False)), principal=Principal("eve", ("security",)))


def test_resolve_deps_reads_a_mapping_or_an_object_context(home_services: SearchServices) -> None:
    def defaults() -> SearchServices:
        return home_services

    deps = resolve_deps({"principal": {"principalId": "bob"}}, defaults)
    assert deps.principal == Principal("bob")
    assert deps.services is home_services
    context = BrainSearchContext(principal=Principal("alice", ("security",)))
    assert resolve_deps(context, defaults, ServerUser("alice")).principal == Principal(
        "alice"
    )  # groups: credentials only
