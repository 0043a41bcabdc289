"""Principals from what a caller presents: the JSON form of a run context's principal, and the claims,
scopes and permissions of a user a LangGraph server authenticated. Nothing is coerced: a malformed
value is an :class:`~brain_graph.core.errors.InvalidRequestError` naming the field."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from brain_graph.core.errors import ForbiddenError, InvalidRequestError
from brain_graph.core.errors import shown as _shown
from brain_graph.core.security import ANONYMOUS, Principal

PRINCIPAL_KEYS = frozenset({"principalId", "principal_id", "groups", "tenants"})


def as_principal(value: Any) -> Principal | None:
    """A principal from a context value: a :class:`Principal`, or a mapping with ``principalId`` and
    optional ``groups`` (a list of group names) and ``tenants`` (the tenants it may read), as sent in a
    JSON run context.

    Nothing is coerced: a malformed value (``principalId`` missing included) is an
    :class:`InvalidRequestError` naming the field. An empty id gives the anonymous principal, which sees
    no secured item and is never taken for the service principal: a secured search fails closed.
    """
    if value is None:
        return None
    if isinstance(value, Principal):
        return value
    if not isinstance(value, Mapping):
        raise InvalidRequestError(
            "context.principal", f"must be an object {{principalId, groups}} (got {type(value).__name__})"
        )
    unknown = sorted(str(key) for key in value if key not in PRINCIPAL_KEYS)
    if unknown:
        raise InvalidRequestError(
            "context.principal", f"unknown key(s) {_shown(unknown)}; allowed: principalId, groups, tenants"
        )
    if "principalId" in value and "principal_id" in value:
        raise InvalidRequestError("context.principal", "give principalId or principal_id, not both")
    principal_id = value.get("principalId", value.get("principal_id"))
    if principal_id is None:
        raise InvalidRequestError("context.principal.principalId", "is required (an empty string means no principal)")
    groups = value.get("groups")
    return Principal(principal_id, () if groups is None else groups, value.get("tenants"))


def user_claim(user: Any, key: str) -> Any:
    """A claim of a LangGraph server user: an attribute, else an entry of its dict form."""
    value = getattr(user, key, None)
    if value is None and callable(getattr(user, "get", None)):
        value = user.get(key)
    return value


def principal_from_user(user: Any) -> Principal:
    """The principal of a user a LangGraph server put on the run (custom auth): its ``identity``;
    groups from a ``groups`` claim (a list of names) and from ``group:<name>`` permissions. An
    unauthenticated user, or one without an identity, is the anonymous principal (it never falls back
    to the service principal); a malformed claim is an error naming it (``user.identity``, ...). A
    ``tenants`` claim (brain-graph's bearer tokens carry one) limits the tenants it may search; an auth
    handler of the deployment's own without that claim leaves the tenant to the request."""
    if user is None or not user_claim(user, "is_authenticated"):
        return ANONYMOUS
    identity = user_claim(user, "identity")
    if not isinstance(identity, str) or not identity:
        return ANONYMOUS
    groups: list[Any] = []
    claimed = user_claim(user, "groups")
    if claimed is not None:
        if not isinstance(claimed, list | tuple):
            raise InvalidRequestError("user.groups", f"must be a list of group names (got {type(claimed).__name__})")
        groups.extend(claimed)
    permissions = user_claim(user, "permissions")
    if isinstance(permissions, list | tuple):
        groups.extend(p.removeprefix("group:") for p in permissions if isinstance(p, str) and p.startswith("group:"))
    tenants = user_claim(user, "tenants")
    try:
        return Principal(identity, tuple(groups), tenants)
    except InvalidRequestError as error:
        claim = next((f"user.{name}" for name in ("tenants", "groups") if f".{name}" in error.field), "user.identity")
        raise InvalidRequestError(claim, error.problem) from None


INSECURE_CLAIM = "brain_graph_insecure"


def is_insecure_user(user: Any) -> bool:
    """Whether the server user is the stand-in of brain-graph's insecure development mode
    (``BRAIN_GRAPH_AUTH=insecure``): the server authenticated nobody, and the run context's principal
    is taken as given, as on a server without authentication."""
    return user is not None and user_claim(user, INSECURE_CLAIM) is True


SCOPES_CLAIM = "scopes"  # the server user's scopes (present only with brain-graph's auth)


def user_scopes(user: Any) -> frozenset[str] | None:
    """The scopes of a server user authenticated by brain-graph's bearer tokens (``scopes`` claim),
    or ``None`` for a user of another auth handler (which decides access itself)."""
    scopes = user_claim(user, SCOPES_CLAIM)
    if scopes is None:
        return None
    if not isinstance(scopes, list | tuple):
        raise InvalidRequestError("user.scopes", f"must be a list of scopes (got {type(scopes).__name__})")
    return frozenset(str(scope) for scope in scopes)


def require_user_scope(user: Any, scope: str, action: str) -> None:
    """Raise :class:`ForbiddenError` when a bearer-token user lacks ``scope`` for ``action``."""
    scopes = user_scopes(user)
    if scopes is not None and scope not in scopes:
        raise missing_scope(scope, action, scopes)


def missing_scope(scope: str, action: str, held: frozenset[str]) -> ForbiddenError:
    """The refusal of ``action`` to credentials holding ``held`` but not ``scope``."""
    return ForbiddenError(f"{action} needs the {scope!r} scope; the token has: {', '.join(sorted(held)) or 'none'}")
