"""Validating a request and the principal of a run: once, at the graph's entry."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langgraph.types import Command
from pydantic import ValidationError

from brain_graph.core.contracts import BrainSearchOptionsInput, BrainSearchRequest
from brain_graph.core.errors import InvalidRequestError
from brain_graph.core.errors import shown as _shown
from brain_graph.core.security import Principal
from brain_graph.core.text import one_line
from brain_graph.core.wire import SearchRequest
from brain_graph.pipeline.filters import resolve_filters, searched_profiles
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
    profiles = searched_profiles(request.filter, services.profiles)  # rejects unknown kinds and node types
    applied = resolve_filters(request.filter, profiles, services.clock)
    wire = request.to_wire()
    mode = request.options.retrieval_mode or services.default_mode()
    if mode != "vector" and not services.lexical:
        raise InvalidRequestError(
            "options.retrievalMode",
            f"{mode} retrieval needs lexical documents, which the {getattr(services.backend, 'name', 'configured')} "
            "backend does not hold; use vector",
        )
    wire["options"]["retrievalMode"] = mode
    return SearchRequest(
        queryText=wire["queryText"],
        filter=wire["filter"],
        options=wire["options"],
        profileIds=[profile.profile_id for profile in profiles],
        filtersApplied=applied,
    )


def context_value(context: Any, name: str) -> Any:
    """An attribute of a dataclass/model run context or a key of a mapping one (JSON, a parent graph's)."""
    if isinstance(context, Mapping):
        return context.get(name)
    return getattr(context, name, None)
