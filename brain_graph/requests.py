"""Reading and checking a request from the graph state, and deciding its access scope."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from brain_graph.contracts import BrainSearchOptionsInput, BrainSearchRequest
from brain_graph.errors import InvalidRequestError
from brain_graph.security import AccessScope, Principal, resolve_scope
from brain_graph.services import SearchServices

M = TypeVar("M", bound=BaseModel)
REQUEST_KEYS = frozenset({"queryText", "filter", "options"})
OPTION_NAMES = frozenset(field.alias or name for name, field in BrainSearchOptionsInput.model_fields.items())


def _field_path(location: tuple[int | str, ...]) -> str:
    return ".".join(str(part) for part in location) or "request"


def _shown(value: Any, limit: int = 80) -> str:
    """A bounded repr of a rejected value (a one-line error never echoes a huge input)."""
    text = repr(value)
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text)} characters)"


def check_top_level_keys(value: Any) -> None:
    """Refuse keys of a graph input other than ``queryText``, ``filter`` and ``options`` (an option
    put beside ``options`` would otherwise be dropped silently and its default applied)."""
    if not isinstance(value, Mapping):
        return
    unknown = sorted(str(key) for key in value if key not in REQUEST_KEYS)
    if unknown:
        hint = [key for key in unknown if key in OPTION_NAMES]
        where = f"; {', '.join(hint)} belong(s) in options" if hint else ""
        raise InvalidRequestError(
            "request", f"unknown key(s) {unknown}; allowed: queryText, filter, options{where}"[:300]
        )


def read_request(state: Mapping[str, Any], services: SearchServices) -> BrainSearchRequest:
    """Validate ``{queryText, filter, options}`` from the state against the contract and the
    deployment's limits. Raises :class:`InvalidRequestError` naming the field and the allowed range."""
    raw = {key: state[key] for key in ("queryText", "filter", "options") if state.get(key) is not None}
    try:
        request = BrainSearchRequest.model_validate(raw)
    except ValidationError as error:
        first = error.errors(include_url=False)[0]
        message = str(first["msg"]).removeprefix("Value error, ")
        got = f" (got {_shown(first['input'])})" if first["type"] != "missing" else ""
        raise InvalidRequestError(_field_path(first["loc"]), f"{message}{got}") from None
    if not request.query_text.strip():
        raise InvalidRequestError("queryText", "must contain text, not only white space")
    maximum = services.limits.max_expand_depth
    if request.options.expand_depth > maximum:
        raise InvalidRequestError(
            "options.expandDepth", f"must be between 0 and {maximum} (got {request.options.expand_depth})"
        )
    services.profiles.select(request.filter.profile_kind_in)  # rejects unknown kinds
    return request


PRINCIPAL_KEYS = frozenset({"principalId", "principal_id", "groups"})


def as_principal(value: Any) -> Principal | None:
    """A principal from a context value: a :class:`Principal`, or a mapping with ``principalId`` and
    optional ``groups`` (a list of group names, as sent in a JSON run context).

    Nothing is coerced: a malformed value (``principalId`` missing included) is an
    :class:`InvalidRequestError` naming the field. An empty id is no principal (``None``), so a secured
    search fails closed.
    """
    if value is None:
        return None
    if isinstance(value, Principal):
        return None if value.is_anonymous else value
    if not isinstance(value, Mapping):
        raise InvalidRequestError(
            "context.principal", f"must be an object {{principalId, groups}} (got {type(value).__name__})"
        )
    unknown = sorted(str(key) for key in value if key not in PRINCIPAL_KEYS)
    if unknown:
        raise InvalidRequestError("context.principal", f"unknown key(s) {unknown}; allowed: principalId, groups")
    principal_id = value.get("principalId", value.get("principal_id"))
    if principal_id is None:
        raise InvalidRequestError("context.principal.principalId", "is required (an empty string means no principal)")
    groups = value.get("groups")
    principal = Principal(principal_id, () if groups is None else groups)
    return None if principal.is_anonymous else principal


def _user_claim(user: Any, key: str) -> Any:
    """A claim of a LangGraph server user: an attribute, else an entry of its dict form."""
    value = getattr(user, key, None)
    if value is None and callable(getattr(user, "get", None)):
        value = user.get(key)
    return value


def principal_from_user(user: Any) -> Principal | None:
    """The principal of a user authenticated by the LangGraph server (custom auth): its ``identity``;
    groups from a ``groups`` claim (a list of names) and from ``group:<name>`` permissions. ``None``
    for an unauthenticated user or one without an identity; a malformed claim is an error."""
    if user is None or not _user_claim(user, "is_authenticated"):
        return None
    identity = _user_claim(user, "identity")
    if not isinstance(identity, str) or not identity:
        return None
    groups: list[Any] = []
    claimed = _user_claim(user, "groups")
    if claimed is not None:
        if not isinstance(claimed, list | tuple):
            raise InvalidRequestError("user.groups", f"must be a list of group names (got {type(claimed).__name__})")
        groups.extend(claimed)
    permissions = _user_claim(user, "permissions")
    if isinstance(permissions, list | tuple):
        groups.extend(p.removeprefix("group:") for p in permissions if isinstance(p, str) and p.startswith("group:"))
    return Principal(identity, tuple(groups))


def access_scope(request: BrainSearchRequest, principal: Principal | None, services: SearchServices) -> AccessScope:
    """The scope of this request; raises :class:`AuthorizationError` when secured mode has no principal."""
    return resolve_scope(request.filter.tenant_id, request.filter.secured, principal, services.service_principal)


def read_list(state: Mapping[str, Any], key: str, model: type[M]) -> list[M]:
    """A list of contract models from the state, whether it holds models or their JSON form
    (as after a checkpoint round trip or from a parent graph)."""
    return [item if isinstance(item, model) else model.model_validate(item) for item in state.get(key) or []]
