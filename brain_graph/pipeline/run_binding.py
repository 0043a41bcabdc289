"""Whether a run is a subgraph of another, and whose run wrote a search's state: from what only this
process decides, never from a caller's config or state.

- A run is a *subgraph run* when LangGraph is running it as a task of a parent graph: the config
  then carries the parent task's channel reader, a function. A config from JSON (the runs API of a
  LangGraph server) cannot hold one, whatever ``checkpoint_ns`` or other keys it names.
- The keys the steps write (the validated request, the hits, the records read within the caller's
  scope) come only from the steps: callers cannot write them (:func:`~brain_graph.pipeline.requests.check_state_update`,
  :func:`~brain_graph.pipeline.requests.check_command`). The first step also writes the *caller key* of the
  run's principal, and every later step refuses a state written for another caller: a thread that
  stopped mid-way (a breakpoint in Studio, a failed step) continues only for the caller it started
  for, never for another principal, groups or tenants.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from langchain_core.runnables import RunnableConfig, ensure_config

from brain_graph.core.errors import InvalidRequestError
from brain_graph.core.security import Principal

CALLER_KEY_STATE = "callerKey"  # in the state: the caller key of the principal the steps' keys were read for
_PARENT_READER = "__pregel_read"  # LangGraph's CONFIG_KEY_READ: a parent task's channel reader (a function)


def is_subgraph_run(config: RunnableConfig | None) -> bool:
    """Whether LangGraph runs this graph as a task of a parent graph (its config holds the parent
    task's channel reader, which JSON cannot express)."""
    return callable(ensure_config(config).get("configurable", {}).get(_PARENT_READER))


def caller_key(principal: Principal | None) -> str:
    """A digest naming everything access depends on of ``principal`` (id, groups, tenants; ``-`` for
    none): equal for the same caller, different for any other."""
    described: Any = None
    if principal is not None:
        tenants = None if principal.tenants is None else sorted(principal.tenants)
        described = [principal.principal_id, sorted(principal.groups), tenants]
    canonical = json.dumps(described, ensure_ascii=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


def check_caller(state: Mapping[str, Any], principal: Principal | None) -> None:
    """Refuse a state the first step did not write for this caller (see the module docstring)."""
    if state.get(CALLER_KEY_STATE) != caller_key(principal):
        raise InvalidRequestError(
            "state",
            "was not written for this caller by this search's first step: a search runs from its first "
            "step, and one stopped mid-way continues only for the caller it started for (run it again "
            "with its input)",
        )
