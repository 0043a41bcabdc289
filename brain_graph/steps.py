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

from brain_graph.requests import as_principal
from brain_graph.security import Principal
from brain_graph.services import SearchServices
from brain_graph.state import BrainSearchContext, BrainSearchState

logger = logging.getLogger("brain_graph.pipeline")


@dataclass(frozen=True)
class StepDeps:
    """What a step needs besides the state."""

    services: SearchServices
    principal: Principal | None


Step = Callable[[BrainSearchState, StepDeps], dict[str, Any]]
ServicesProvider = Callable[[], SearchServices]


def resolve_deps(context: Any, default_services: ServicesProvider) -> StepDeps:
    """Services and principal from the run context (ours or a parent graph's), else the defaults."""
    services = getattr(context, "services", None) if context is not None else None
    if isinstance(context, Mapping):
        services = context.get("services")
    if not isinstance(services, SearchServices):
        services = default_services()
    raw_principal = context.get("principal") if isinstance(context, Mapping) else getattr(context, "principal", None)
    return StepDeps(services=services, principal=as_principal(raw_principal))


def _debug_enabled() -> bool:
    return os.environ.get("DEBUG_PIPELINE", "").strip().lower() in {"1", "true", "yes", "on"}


def _counts(update: Mapping[str, Any]) -> dict[str, Any]:
    return {
        key: len(value) if isinstance(value, list | dict) else type(value).__name__ for key, value in update.items()
    }


def bind_step(name: str, step: Step, default_services: ServicesProvider) -> Callable[..., dict[str, Any]]:
    """A LangGraph node running ``step`` with dependencies from the runtime context.

    Each node emits a ``custom`` stream event ``{"step", "ms", "counts"}`` and, with
    ``DEBUG_PIPELINE=1``, ``PIPELINE <step>.in`` / ``.out`` debug log lines.
    """

    def node(state: BrainSearchState, runtime: Runtime[BrainSearchContext]) -> dict[str, Any]:
        deps = resolve_deps(runtime.context, default_services)
        debug = _debug_enabled()
        if debug:
            logger.debug("PIPELINE %s.in | query=%s", name, json.dumps(state.get("queryText")))
        started = time.perf_counter()
        update = step(state, deps)
        elapsed_ms = round((time.perf_counter() - started) * 1000, 3)
        counts = _counts(update)
        if debug:
            logger.debug("PIPELINE %s.out | ms=%.3f counts=%s", name, elapsed_ms, json.dumps(counts, sort_keys=True))
        with contextlib.suppress(RuntimeError):  # outside a runnable context there is no stream
            get_stream_writer()({"step": name, "ms": elapsed_ms, "counts": counts})
        return update

    node.__name__ = name
    node.__doc__ = step.__doc__
    return node
