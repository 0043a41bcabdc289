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
from langgraph.runtime import Runtime

from brain_graph.contracts import BrainPromptPack
from brain_graph.errors import AuthorizationError
from brain_graph.requests import as_principal, principal_from_user
from brain_graph.security import Principal
from brain_graph.services import SearchServices
from brain_graph.state import BrainSearchContext, BrainSearchState

logger = logging.getLogger("brain_graph.pipeline")

MAX_LOGGED_QUERY_CHARS = 200
RESULT_KEYS = ("hits", "graphNodes", "graphEdges", "episodes", "passages")


@dataclass(frozen=True)
class StepDeps:
    """What a step needs besides the state."""

    services: SearchServices
    principal: Principal | None


Step = Callable[[BrainSearchState, StepDeps], dict[str, Any]]
ServicesProvider = Callable[[], SearchServices]


def _context_value(context: Any, name: str) -> Any:
    """An attribute of a dataclass/model context or a key of a mapping context (a parent graph's)."""
    if isinstance(context, Mapping):
        return context.get(name)
    return getattr(context, name, None)


def resolve_deps(context: Any, default_services: ServicesProvider, server_user: Any = None) -> StepDeps:
    """Services and principal from the run context (ours or a parent graph's), else the defaults.

    ``server_user`` is the user a LangGraph server put on the run (``Runtime.server_info.user``: with
    custom auth, or LangSmith's own; none on a local ``langgraph dev`` without auth). When present it
    alone decides the principal (see :func:`brain_graph.requests.principal_from_user`): a principal in
    the run context is untrusted request data there, and one naming anyone else is refused.
    """
    services = _context_value(context, "services")
    if not isinstance(services, SearchServices):
        services = default_services()
    raw_principal = _context_value(context, "principal")
    principal = as_principal(raw_principal)
    if server_user is not None:
        authenticated = principal_from_user(server_user)
        if principal is not None and (authenticated is None or principal.principal_id != authenticated.principal_id):
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


def _field(value: Any, name: str, alias: str) -> Any:
    """A request field from the raw state (a mapping before ``embed`` validates it, a model after)."""
    if isinstance(value, Mapping):
        return value.get(alias, value.get(name))
    return getattr(value, name, None)


def _describe_input(state: Mapping[str, Any], deps: StepDeps) -> str:
    """``query=... tenant=... project=... secured=... principal=...`` plus counts of the results so far."""
    query = state.get("queryText")
    text = query[:MAX_LOGGED_QUERY_CHARS] if isinstance(query, str) else query
    raw_filter = state.get("filter")
    parts = [
        f"query={json.dumps(text, ensure_ascii=False)}",
        f"tenant={_field(raw_filter, 'tenant_id', 'tenantId') or '-'}",
        f"project={_field(raw_filter, 'project_key', 'projectKey') or '-'}",
        f"secured={json.dumps(_field(raw_filter, 'secured', 'secured'))}",
        f"principal={deps.principal.principal_id if deps.principal is not None else '-'}",
    ]
    parts += [f"{key}={len(state[key])}" for key in RESULT_KEYS if isinstance(state.get(key), list)]
    return " ".join(parts)


def _counts(update: Mapping[str, Any]) -> dict[str, int]:
    """Sizes of what a step wrote: lengths of lists and maps, citations and characters of the pack."""
    counts: dict[str, int] = {}
    for key, value in update.items():
        if isinstance(value, list | dict):
            counts[key] = len(value)
        elif isinstance(value, BrainPromptPack):
            counts["citations"] = len(value.citations)
            counts["contextChars"] = len(value.context_markdown)
    return counts


def bind_step(name: str, step: Step, default_services: ServicesProvider) -> Callable[..., dict[str, Any]]:
    """A LangGraph node running ``step`` with dependencies from the runtime context.

    Each node emits a ``custom`` stream event ``{"step", "ms", "counts"}``. With ``DEBUG_PIPELINE=1``
    it also logs (logger ``brain_graph.pipeline``, level DEBUG) ``PIPELINE <step>.in`` with the query,
    tenant, project, secured flag, principal id and result counts so far, then ``PIPELINE <step>.out``
    with the time taken and the counts written, or ``PIPELINE <step>.error``. Nothing is logged at
    INFO or above.
    """

    def node(state: BrainSearchState, runtime: Runtime[BrainSearchContext]) -> dict[str, Any]:
        server_user = runtime.server_info.user if runtime.server_info is not None else None
        deps = resolve_deps(runtime.context, default_services, server_user)
        debug = _debug_enabled()
        if debug:
            _ensure_debug_output()
            logger.debug("PIPELINE %s.in | %s", name, _describe_input(state, deps))
        started = time.perf_counter()
        try:
            update = step(state, deps)
        except Exception as error:
            if debug:
                elapsed = (time.perf_counter() - started) * 1000
                logger.debug("PIPELINE %s.error | ms=%.3f error=%s: %s", name, elapsed, type(error).__name__, error)
            raise
        elapsed_ms = round((time.perf_counter() - started) * 1000, 3)
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
