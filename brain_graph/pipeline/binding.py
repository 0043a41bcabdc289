"""Binding the pipeline steps to LangGraph: dependency resolution from the runtime context, and the
per-node debug log (``DEBUG_PIPELINE=1``) with timings."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from langgraph.config import get_stream_writer
from langgraph.errors import GraphBubbleUp
from langgraph.runtime import Runtime

from brain_graph.auth.principals import as_principal, is_insecure_user, principal_from_user, require_user_scope
from brain_graph.core.errors import (
    AuthorizationError,
    BackendUnavailableError,
    CapacityError,
    InternalError,
    InvalidRequestError,
    RateLimitedError,
    one_line_message,
)
from brain_graph.core.security import AccessScope, Principal, resolve_scope
from brain_graph.core.wire import SearchRequest
from brain_graph.observability.metrics import STEP_SECONDS
from brain_graph.pipeline.requests import check_context, check_context_services, context_value
from brain_graph.pipeline.run_binding import CALLER_KEY_STATE, caller_key, check_caller
from brain_graph.pipeline.services import SearchServices
from brain_graph.pipeline.state import BrainSearchContext, BrainSearchState

logger = logging.getLogger("brain_graph.pipeline")
server_logger = logging.getLogger("brain_graph.server")  # failures of server runs, with the details callers do not get
SERVER_UNAVAILABLE_DETAIL = "retry later (the server log has the details)"
# What the caller of a server run is told as it is: its request's faults (input, access, rate, a search too
# large for a server's limits).
CALLER_ERRORS: tuple[type[Exception], ...] = (
    InvalidRequestError,
    AuthorizationError,
    RateLimitedError,
    CapacityError,
    GraphBubbleUp,
)

MAX_LOGGED_QUERY_CHARS = 200
RESULT_KEYS = ("hits", "graphNodes", "graphEdges", "candidates", "episodes", "passages")


@dataclass(frozen=True)
class StepDeps:
    """What a step needs besides the state: the services and the caller, from the run's context."""

    services: SearchServices
    principal: Principal | None

    def scope(self, request: SearchRequest) -> AccessScope:
        """The data this validated request may touch (the same for every step of the run)."""
        search_filter = request["filter"]
        return resolve_scope(
            search_filter["tenantId"], search_filter["secured"], self.principal, self.services.service_principal
        )


Step = Callable[[BrainSearchState, StepDeps], Mapping[str, Any]]
ServicesProvider = Callable[[], SearchServices]


def resolve_deps(context: Any, default_services: ServicesProvider, server_user: Any = None) -> StepDeps:
    """Services and principal from the run context (ours, already validated, or a parent graph's),
    else the defaults.

    ``server_user`` is the user a LangGraph server put on the run (``Runtime.server_info.user``: with
    custom auth, or LangSmith's own; none on a local ``langgraph dev`` without auth). When present it
    alone decides the principal (see :func:`brain_graph.auth.principals.principal_from_user`): a principal in
    the run context is untrusted request data there, and one naming anyone else is refused.
    """
    check_context(context, top_level=False)
    services = context_value(context, "services")
    check_context_services(services)
    if services is None:
        services = default_services()
    principal = as_principal(context_value(context, "principal"))
    if server_user is not None and not is_insecure_user(server_user):
        require_user_scope(server_user, "reader", "searching")
        authenticated = principal_from_user(server_user)
        if principal is not None and principal.principal_id != authenticated.principal_id:
            raise AuthorizationError(
                "context.principal does not match the authenticated user; on a server with authentication "
                "the principal comes from the credentials, omit context.principal"
            )
        principal = authenticated
    return StepDeps(services=services, principal=principal)


def _debug_enabled() -> bool:
    return os.environ.get("DEBUG_PIPELINE", "").strip().lower() in {"1", "true", "yes", "on"}


def _ensure_debug_output() -> None:
    """With ``DEBUG_PIPELINE`` on, make the debug lines actually come out: the pipeline logger goes to
    DEBUG unless the application chose its level, and writes to stderr itself when no handler
    anywhere would receive its records (logging not configured at all)."""
    if logger.level == logging.NOTSET:
        logger.setLevel(logging.DEBUG)
    if not logger.hasHandlers():
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s %(message)s"))
        logger.addHandler(handler)


def _loggable(value: Any) -> str:
    """A logged field: one line, at most 200 characters, ``-`` when empty (data cannot forge a log line)."""
    return one_line_message(str(value), 200) if value not in (None, "") else "-"


def _describe_input(state: Mapping[str, Any], deps: StepDeps) -> str:
    """``query=... tenant=... project=... secured=... principal=...`` plus counts of the results so far
    (from the validated request once ``embed`` wrote it, from the raw input before)."""
    request = state.get("request")
    raw = request if isinstance(request, Mapping) else state
    query = raw.get("queryText")
    text = query[:MAX_LOGGED_QUERY_CHARS] if isinstance(query, str) else query
    search_filter = raw.get("filter")
    search_filter = search_filter if isinstance(search_filter, Mapping) else {}
    principal = deps.principal.principal_id if deps.principal is not None else "-"
    parts = [
        f"query={one_line_message(json.dumps(text, ensure_ascii=False), MAX_LOGGED_QUERY_CHARS + 50)}",
        f"tenant={_loggable(search_filter.get('tenantId'))}",
        f"project={_loggable(search_filter.get('projectKey'))}",
        f"secured={_loggable(json.dumps(search_filter.get('secured', True)))}",
        f"principal={_loggable(principal)}",
    ]
    parts += [f"{key}={len(state[key])}" for key in RESULT_KEYS if isinstance(state.get(key), list)]
    return " ".join(parts)


def _counts(update: Mapping[str, Any]) -> dict[str, int]:
    """Sizes of what a step wrote: lengths of lists and maps, the texts read for passages, citations and
    characters of the pack."""
    counts: dict[str, int] = {}
    for key, value in update.items():
        if key in ("request", "filtersApplied"):  # one object each, not a collection
            continue
        if key == "promptPack":
            counts["citations"] = len(value["citations"])
            counts["contextChars"] = len(value["contextMarkdown"])
        elif key == "passageTexts" and value is not None:
            counts[key] = len(value["texts"])
        elif key == "seedScores" and value is not None:
            counts[key] = len(value["scores"])
        elif isinstance(value, list | dict):
            counts[key] = len(value)
    return counts


def served_error(step: str, error: Exception) -> Exception | None:
    """What the caller of a server run gets instead of ``error`` (None: ``error`` itself, a fault of
    its request: :data:`CALLER_ERRORS`). A backend that is down is named without its detail; anything
    else is an :class:`~brain_graph.core.errors.InternalError`. Either way the failure is logged at ERROR on
    ``brain_graph.server`` (with its traceback unless the backend is just down)."""
    if isinstance(error, CALLER_ERRORS):
        return None
    if isinstance(error, BackendUnavailableError):
        server_logger.error("%s step: %s", step, one_line_message(str(error), 500))
        return BackendUnavailableError(error.backend, SERVER_UNAVAILABLE_DETAIL)
    server_logger.error("%s step failed: %s", step, one_line_message(str(error), 500), exc_info=error)
    return InternalError()


def observe_step(name: str, runtime: Any, seconds: float, outcome: str, deps: StepDeps | None = None) -> None:
    """The step's time in :data:`~brain_graph.observability.metrics.STEP_SECONDS` (backend ``-`` when its
    services could not be resolved)."""
    backend = deps.services.backend.name if deps is not None else "-"
    STEP_SECONDS.labels(name, backend, outcome).observe(seconds)


def bind_step(
    name: str, step: Step, default_services: ServicesProvider, *, opens_run: bool = False
) -> Callable[..., Mapping[str, Any]]:
    """A LangGraph node running ``step`` with dependencies from the runtime context.

    The first step of a pipeline (``opens_run``) writes the caller key of the run's principal with its
    update; every other step first refuses a state written for another caller
    (:mod:`brain_graph.pipeline.run_binding`).

    Each node emits a ``custom`` stream event ``{"step", "ms", "counts"}``. With ``DEBUG_PIPELINE=1``
    it also logs (logger ``brain_graph.pipeline``, level DEBUG) ``PIPELINE <step>.in`` with the query,
    tenant, project, secured flag, principal id and result counts so far, then ``PIPELINE <step>.out``
    with the time taken and the counts written, or ``PIPELINE <step>.error``; that logger logs nothing
    at INFO or above.

    In a run a LangGraph server started (``runtime.server_info`` set), only the faults of the request
    reach the caller as they are (:func:`served_error`): a backend that is down is named without its
    detail (a host, a file path, a provider's message), any other failure is an internal error; the
    details are logged at ERROR on ``brain_graph.server``, as ``/graphql`` does.
    """

    def node(state: BrainSearchState, runtime: Runtime[BrainSearchContext]) -> Mapping[str, Any]:
        debug = _debug_enabled()
        started = time.perf_counter()
        deps: StepDeps | None = None
        try:
            server_user = runtime.server_info.user if runtime.server_info is not None else None
            deps = resolve_deps(runtime.context, default_services, server_user)
            if not opens_run:
                check_caller(state, deps.principal)
            if debug:
                _ensure_debug_output()
                logger.debug("PIPELINE %s.in | %s", name, _describe_input(state, deps))
            started = time.perf_counter()
            update = step(state, deps)
            if opens_run:
                update = {**update, CALLER_KEY_STATE: caller_key(deps.principal)}
        except Exception as error:
            if not isinstance(error, GraphBubbleUp):
                observe_step(name, runtime, time.perf_counter() - started, "error", deps)
            if debug:
                elapsed = (time.perf_counter() - started) * 1000
                message = one_line_message(str(error), 500)
                logger.debug("PIPELINE %s.error | ms=%.3f error=%s: %s", name, elapsed, type(error).__name__, message)
            served = served_error(name, error) if runtime.server_info is not None else None
            if served is not None:
                raise served from None
            raise
        elapsed_s = time.perf_counter() - started
        observe_step(name, runtime, elapsed_s, "ok", deps)
        elapsed_ms = round(elapsed_s * 1000, 3)
        counts = _counts(update)
        if debug:
            written = " ".join(f"{key}={value}" for key, value in counts.items())
            logger.debug("PIPELINE %s.out | ms=%.3f %s", name, elapsed_ms, written)
        with contextlib.suppress(RuntimeError):  # outside a runnable context there is no stream
            get_stream_writer()({"step": name, "ms": elapsed_ms, "counts": counts})
        return update

    node.__name__ = name
    node.__doc__ = step.__doc__
    return node
