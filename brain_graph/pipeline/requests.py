"""Validating a request and the principal of a run: once, at the graph's entry."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langgraph.types import Command
from pydantic import ValidationError

from brain_graph.core.contracts import BrainSearchOptionsInput, BrainSearchRequest
from brain_graph.core.errors import ForbiddenError, InvalidRequestError
from brain_graph.core.errors import shown as _shown
from brain_graph.core.security import ANONYMOUS, Principal
from brain_graph.core.text import one_line
from brain_graph.core.wire import SearchRequest
from brain_graph.pipeline.services import SearchServices

REQUEST_KEYS = frozenset({"queryText", "filter", "options"})
CONTEXT_KEYS = frozenset({"principal", "services"})
OPTION_NAMES = frozenset(field.alias or name for name, field in BrainSearchOptionsInput.model_fields.items())


def _field_path(location: tuple[int | str, ...]) -> str:
    return ".".join(str(part) for part in location) or "request"


def check_top_level_keys(value: Any) -> None:
    """Refuse a graph input that is not an object, or that has keys other than ``queryText``,
    ``filter`` and ``options`` (an option put beside ``options`` would otherwise be dropped silently
    and its default applied). ``None`` (resuming a thread) passes."""
    if value is None:
        return
    if isinstance(value, Command):
        check_command(value)
        return
    if not isinstance(value, Mapping):
        raise InvalidRequestError(
            "request", f"must be an object {{queryText, filter, options}} (got {type(value).__name__})"
        )
    unknown = sorted(str(key) for key in value if key not in REQUEST_KEYS)
    if unknown:
        hint = [key for key in unknown if key in OPTION_NAMES]
        where = f"; {', '.join(hint)} belong(s) in options" if hint else ""
        names = _shown(unknown)
        raise InvalidRequestError("request", f"unknown key(s) {names}; allowed: queryText, filter, options{where}")


def check_command(command: Command[Any]) -> None:
    """Refuse a top-level ``Command`` that skips steps (``goto``) or writes what the steps write
    (:func:`check_state_update`); resuming (``resume``) and updating the input keys pass."""
    if command.goto:
        raise InvalidRequestError("command.goto", "steps cannot be skipped: a search runs from embed to build_pack")
    check_state_update(command.update, "command.update")


def check_state_update(values: Any, where: str) -> None:
    """Refuse a state update from outside a run (``update_state``, a ``Command``'s ``update``) that
    writes a key the steps write: each step trusts what the steps before it wrote (the validated
    request and its bounds, the records read within the caller's access scope). Only ``queryText``,
    ``filter`` and ``options`` may be updated; ``embed`` validates them when the search runs again."""
    if values is None:
        return
    if not isinstance(values, Mapping):
        raise InvalidRequestError(
            where, f"must be an object {{queryText, filter, options}} (got {type(values).__name__})"
        )
    written = sorted(str(key) for key in values if key not in REQUEST_KEYS)
    if written:
        raise InvalidRequestError(
            where, f"may not set {_shown(written)}, which the steps write; updatable: queryText, filter, options"
        )


def check_context_keys(value: Any) -> None:
    """Refuse a JSON run context with keys other than ``principal`` and ``services`` (a typo such as
    ``principle`` would otherwise fail deep inside LangGraph, or be ignored)."""
    if isinstance(value, Mapping):
        unknown = sorted(str(key) for key in value if key not in CONTEXT_KEYS)
        if unknown:
            raise InvalidRequestError("context", f"unknown key(s) {_shown(unknown)}; allowed: principal, services")


_NOT_A_CONTEXT = (str, bytes, bytearray, int, float, complex, list, tuple, set, frozenset, Principal)


def check_context(value: Any, *, top_level: bool) -> None:
    """Refuse a run context that cannot be one, instead of reading it as "no principal" (in
    service-principal mode that would see every secured item): a principal, a string, a number or a
    collection given where the context belongs. A mapping is checked for unknown keys. At the top level
    an object must have a ``principal`` or ``services`` attribute (a :class:`BrainSearchContext`); a
    parent graph's context, read by brain-graph as a subgraph, may have neither (defaults apply)."""
    if value is None:
        return
    if isinstance(value, Mapping):
        check_context_keys(value)
        return
    if isinstance(value, _NOT_A_CONTEXT) or (
        top_level and not any(hasattr(value, name) for name in sorted(CONTEXT_KEYS))
    ):
        hint = "; wrap it: BrainSearchContext(principal=...)" if isinstance(value, Principal) else ""
        raise InvalidRequestError(
            "context",
            f"must be a BrainSearchContext or an object {{principal, services}} (got {type(value).__name__}){hint}",
        )


def check_context_services(value: Any) -> None:
    """Refuse a context ``services`` that is set but not :class:`SearchServices` (it would otherwise be
    ignored and the default services searched)."""
    if value is not None and not isinstance(value, SearchServices):
        raise InvalidRequestError("context.services", f"must be SearchServices (got {type(value).__name__})")


def invalid_request(error: ValidationError) -> InvalidRequestError:
    """The first problem of a pydantic validation error, on one line, naming the field."""
    first = error.errors(include_url=False)[0]
    message = str(first["msg"]).removeprefix("Value error, ")
    got = f" (got {_shown(first['input'])})" if first["type"] != "missing" else ""
    return InvalidRequestError(_field_path(first["loc"]), f"{message}{got}")


def read_request(state: Mapping[str, Any], services: SearchServices) -> SearchRequest:
    """Validate ``{queryText, filter, options}`` from the graph input against the contract and the
    deployment's limits, once per run, into the normalised JSON form every step reads. Raises
    :class:`InvalidRequestError` naming the field and the allowed range."""
    raw = {key: state[key] for key in REQUEST_KEYS if state.get(key) is not None}
    try:
        request = BrainSearchRequest.model_validate(raw)
    except ValidationError as error:
        raise invalid_request(error) from None
    if not one_line(request.query_text):
        raise InvalidRequestError("queryText", "must contain text, not only white space, control or format characters")
    maximum = services.limits.max_expand_depth
    if request.options.expand_depth > maximum:
        raise InvalidRequestError(
            "options.expandDepth", f"must be between 0 and {maximum} (got {request.options.expand_depth})"
        )
    profiles = services.profiles.select(request.filter.profile_kind_in)  # rejects unknown kinds
    wire = request.to_wire()
    return SearchRequest(
        queryText=wire["queryText"],
        filter=wire["filter"],
        options=wire["options"],
        profileIds=[profile.profile_id for profile in profiles],
    )


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


def context_value(context: Any, name: str) -> Any:
    """An attribute of a dataclass/model run context or a key of a mapping one (JSON, a parent graph's)."""
    if isinstance(context, Mapping):
        return context.get(name)
    return getattr(context, name, None)


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
