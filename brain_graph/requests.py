"""Reading and checking a request from the graph state, and deciding its access scope."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from brain_graph.contracts import BrainSearchRequest
from brain_graph.errors import InvalidRequestError
from brain_graph.security import AccessScope, Principal, resolve_scope
from brain_graph.services import SearchServices

M = TypeVar("M", bound=BaseModel)


def _field_path(location: tuple[int | str, ...]) -> str:
    return ".".join(str(part) for part in location) or "request"


def read_request(state: Mapping[str, Any], services: SearchServices) -> BrainSearchRequest:
    """Validate ``{queryText, filter, options}`` from the state against the contract and the
    deployment's limits. Raises :class:`InvalidRequestError` naming the field and the allowed range."""
    raw = {key: state[key] for key in ("queryText", "filter", "options") if state.get(key) is not None}
    try:
        request = BrainSearchRequest.model_validate(raw)
    except ValidationError as error:
        first = error.errors(include_url=False)[0]
        got = f" (got {first['input']!r})" if first["type"] != "missing" else ""
        raise InvalidRequestError(_field_path(first["loc"]), f"{first['msg']}{got}") from None
    if not request.query_text.strip():
        raise InvalidRequestError("queryText", "must contain text, not only white space")
    if not request.filter.tenant_id.strip():
        raise InvalidRequestError("filter.tenantId", "must not be blank")
    maximum = services.limits.max_expand_depth
    if request.options.expand_depth > maximum:
        raise InvalidRequestError(
            "options.expandDepth", f"must be between 0 and {maximum} (got {request.options.expand_depth})"
        )
    services.profiles.select(request.filter.profile_kind_in)  # rejects unknown kinds
    return request


def as_principal(value: Any) -> Principal | None:
    """A principal from a context value: a :class:`Principal`, or a mapping with ``principalId`` and
    optional ``groups`` (as sent in a JSON run context)."""
    if value is None or isinstance(value, Principal):
        return value
    if isinstance(value, Mapping):
        principal_id = value.get("principalId") or value.get("principal_id")
        if isinstance(principal_id, str) and principal_id:
            groups = value.get("groups") or ()
            return Principal(principal_id, tuple(str(group) for group in groups))
    raise InvalidRequestError("context.principal", "must be an object with a non-empty principalId")


def _user_claim(user: Any, key: str) -> Any:
    """A claim of a LangGraph server user: an attribute, else an entry of its dict form."""
    value = getattr(user, key, None)
    if value is None and callable(getattr(user, "get", None)):
        value = user.get(key)
    return value


def principal_from_user(user: Any) -> Principal | None:
    """The principal of a user authenticated by the LangGraph server (custom auth): its ``identity``;
    groups from a ``groups`` claim and from ``group:<name>`` permissions. ``None`` for an
    unauthenticated user or one without an identity."""
    if user is None or not _user_claim(user, "is_authenticated"):
        return None
    identity = _user_claim(user, "identity")
    if not isinstance(identity, str) or not identity:
        return None
    groups: list[str] = []
    claimed = _user_claim(user, "groups")
    if isinstance(claimed, list | tuple):
        groups.extend(str(group) for group in claimed)
    permissions = _user_claim(user, "permissions")
    if isinstance(permissions, list | tuple):
        groups.extend(str(p).removeprefix("group:") for p in permissions if str(p).startswith("group:"))
    return Principal(identity, tuple(sorted(set(groups))))


def access_scope(request: BrainSearchRequest, principal: Principal | None, services: SearchServices) -> AccessScope:
    """The scope of this request; raises :class:`AuthorizationError` when secured mode has no principal."""
    return resolve_scope(request.filter.tenant_id, request.filter.secured, principal, services.service_principal)


def read_list(state: Mapping[str, Any], key: str, model: type[M]) -> list[M]:
    """A list of contract models from the state, whether it holds models or their JSON form
    (as after a checkpoint round trip or from a parent graph)."""
    return [item if isinstance(item, model) else model.model_validate(item) for item in state.get(key) or []]
