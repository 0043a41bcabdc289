"""The ``brain_index`` LangGraph graph: the incremental indexer (:mod:`brain_graph.indexing.indexer`)
as three steps, ``plan → index → report``, so indexing runs on the same LangGraph server as the
searches and its steps show in Studio.

Input ``{"tenants"?: [...], "profiles"?: [...], "full"?: bool}`` (all optional: every tenant and
profile, incremental); output ``{"report": {...}}`` with the counts of ``brain-graph index --json``.
``index`` emits a ``custom`` stream event ``{"step": "index", "done", "total"}`` (nodes examined)
after each page of nodes. Services come from the run context (``services``) or the environment, as
for ``brain_search``. Each step plans again from the input (a resumed run never repeats a profile
rebuild that already happened). On a server with authentication, rebuilding a profile for a new
embedder (which drops its vectors first) needs the ``brain:maintainer`` permission.

Bad input is an :class:`~brain_graph.core.errors.InvalidRequestError` naming the field, before anything is
read or written: a top-level key other than ``tenants``, ``profiles`` and ``full`` (a typo such as
``tenant`` would otherwise be dropped and every tenant indexed), or a tenant id search would refuse
(the identifier rule of :func:`~brain_graph.core.contracts.identifier_problem`).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Iterator, Mapping
from dataclasses import dataclass
from difflib import get_close_matches
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.config import get_stream_writer
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime
from langgraph.types import Command
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from typing_extensions import TypedDict  # pydantic, hence LangGraph's JSON schemas, needs it on Python < 3.12

from brain_graph.auth.principals import (
    is_insecure_user,
    principal_from_user,
    require_user_scope,
    user_claim,
    user_scopes,
)
from brain_graph.core.errors import AuthorizationError, ForbiddenError, InvalidRequestError, shown
from brain_graph.indexing.indexer import Indexer, IndexPlan, check_tenant_ids
from brain_graph.indexing.report import IndexReport
from brain_graph.pipeline.config import default_services
from brain_graph.pipeline.requests import context_value
from brain_graph.pipeline.run_binding import is_subgraph_run
from brain_graph.pipeline.services import SearchServices

INDEX_GRAPH_NAME = "brain_index"
MAINTAINER = "brain:maintainer"  # the server permission a profile rebuild over HTTP needs, with auth on
INPUT_KEYS = ("tenants", "profiles", "full")


class BrainIndexInput(TypedDict, total=False):
    tenants: list[str]
    profiles: list[str]
    full: bool


class BrainIndexOutput(TypedDict, total=False):
    report: dict[str, Any]


class BrainIndexState(BrainIndexInput, BrainIndexOutput, total=False):
    plan: dict[str, Any]
    counts: dict[str, Any]


@dataclass(frozen=True)
class BrainIndexContext:
    """Run-scoped dependencies: ``services`` overrides the stores and profiles the graph was built with."""

    services: Any = None  # SearchServices


class _Request(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    tenants: list[str] | None = Field(default=None, min_length=1)
    profiles: list[str] | None = Field(default=None, min_length=1)
    full: bool = False


def check_input_keys(value: Any) -> None:
    """Refuse a graph input that is not an object, or that has keys other than ``tenants``,
    ``profiles`` and ``full`` (LangGraph would drop them silently). ``None`` (resuming a thread) and a
    :class:`~langgraph.types.Command` pass."""
    if value is None or isinstance(value, Command):
        return
    allowed = ", ".join(INPUT_KEYS)
    if not isinstance(value, Mapping):
        raise InvalidRequestError("request", f"must be an object {{{allowed}}} (got {type(value).__name__})")
    unknown = sorted(str(key) for key in value if key not in INPUT_KEYS)
    if unknown:
        close = [match for key in unknown for match in get_close_matches(key, INPUT_KEYS, n=1)]
        hint = f"; did you mean {', '.join(dict.fromkeys(close))}?" if close else ""
        raise InvalidRequestError("request", f"unknown key(s) {shown(unknown)}; allowed: {allowed}{hint}")


def _request(state: BrainIndexState) -> _Request:
    raw = {key: value for key, value in state.items() if key in INPUT_KEYS}
    try:
        request = _Request.model_validate(raw)
    except ValidationError as error:
        first = error.errors(include_url=False)[0]
        where = ".".join(str(part) for part in first["loc"]) or "input"
        raise InvalidRequestError(where, str(first["msg"])) from None
    if request.tenants is not None:
        check_tenant_ids(request.tenants)
    return request


def _check_token_user(user: Any, tenants: list[str] | None) -> None:
    """A user of brain-graph's bearer tokens indexes only with the ``maintainer`` scope, and only the
    tenants its token names (listed in the request: "every tenant" is refused)."""
    if user_scopes(user) is None:
        return  # another auth handler: it decides who may run this graph
    require_user_scope(user, "maintainer", "indexing")
    allowed = principal_from_user(user).tenants
    if allowed is None:
        return
    if tenants is None:
        raise ForbiddenError(f"name the tenants to index; this token may index: {', '.join(sorted(allowed))}")
    refused = sorted(set(tenants).difference(allowed))
    if refused:
        allowed_text = ", ".join(sorted(allowed))
        raise ForbiddenError(f"this token may not index tenant(s) {refused}; it may index: {allowed_text}")


def check_index_context(value: Any) -> None:
    """Refuse a top-level run context that is not one: a mapping with keys other than ``services``,
    or an object without a ``services`` attribute (a principal or a string given as the context)."""
    if value is None:
        return
    if isinstance(value, Mapping):
        unknown = sorted(str(key) for key in value if key != "services")
        if unknown:
            raise InvalidRequestError("context", f"unknown key(s) {shown(unknown)}; allowed: services")
    elif not hasattr(value, "services"):
        raise InvalidRequestError(
            "context", f"must be a BrainIndexContext or an object {{services}} (got {type(value).__name__})"
        )


class BrainIndexGraph(CompiledStateGraph[BrainIndexState, BrainIndexContext, BrainIndexInput, BrainIndexOutput]):
    """The compiled ``brain_index`` graph: a top-level input with unknown keys is refused
    (:func:`check_input_keys`) instead of being dropped, and so is a run context that is not one
    (:func:`check_index_context`); as a subgraph it reads only its own keys of the parent's state."""

    def stream(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Iterator[Any]:
        if not is_subgraph_run(config):
            check_input_keys(input)
            check_index_context(kwargs.get("context"))
        return super().stream(input, config, **kwargs)

    def astream(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> AsyncIterator[Any]:
        if not is_subgraph_run(config):
            check_input_keys(input)
            check_index_context(kwargs.get("context"))
        return super().astream(input, config, **kwargs)


def build_index_graph(services: SearchServices | None = None, *, name: str = INDEX_GRAPH_NAME) -> BrainIndexGraph:
    """Compile ``plan → index → report`` (see the module docstring)."""

    def indexer(runtime: Runtime[BrainIndexContext]) -> Indexer:
        chosen = context_value(runtime.context, "services") or services or default_services()
        if not isinstance(chosen, SearchServices):
            raise InvalidRequestError("context.services", "must be SearchServices (set in Python, not over HTTP)")
        return Indexer(chosen.backend, chosen.profiles)

    def checked(state: BrainIndexState, runtime: Runtime[BrainIndexContext]) -> tuple[Indexer, IndexPlan]:
        """The request's plan, made again by every step that needs it (a resumed run re-plans)."""
        request = _request(state)
        user = runtime.server_info.user if runtime.server_info is not None else None
        if user is not None and not is_insecure_user(user):
            _check_token_user(user, request.tenants)
        made = indexer(runtime).plan(request.tenants, request.profiles, full=request.full)
        if made.reindexed and user is not None and MAINTAINER not in (user_claim(user, "permissions") or ()):
            raise AuthorizationError(
                f"rebuilding profile(s) {list(made.reindexed)} for a new embedder needs the {MAINTAINER!r} "
                "permission; run brain-graph index --full where the store is"
            )
        return indexer(runtime), made

    def plan(state: BrainIndexState, runtime: Runtime[BrainIndexContext]) -> dict[str, Any]:
        """Check the request and what it covers (unknown profiles, embedder changes) before any write."""
        _, made = checked(state, runtime)
        return {
            "plan": {
                "tenants": list(made.tenants),
                "profiles": [p.profile_id for p in made.profiles],
                "full": made.full,
                "reindexed": list(made.reindexed),
            }
        }

    def index(state: BrainIndexState, runtime: Runtime[BrainIndexContext]) -> dict[str, Any]:
        """Embed new and changed nodes, delete vectors of deleted ones, page by page."""
        worker, made = checked(state, runtime)
        total = worker.total_nodes(made)
        done = 0

        def progress(count: int) -> None:
            nonlocal done
            done += count
            with contextlib.suppress(RuntimeError):
                get_stream_writer()({"step": "index", "done": done, "total": total})

        report: IndexReport = worker.execute(made, progress=progress)
        return {"counts": report.to_json()}

    def report(state: BrainIndexState) -> dict[str, Any]:
        """The run's report: what was covered and the counts."""
        planned = state["plan"]
        return {"report": {"tenants": planned["tenants"], "profiles": planned["profiles"], **state["counts"]}}

    builder: StateGraph[Any, Any, Any, Any] = StateGraph(
        BrainIndexState, context_schema=BrainIndexContext, input_schema=BrainIndexInput, output_schema=BrainIndexOutput
    )
    builder.add_node("plan", plan)
    builder.add_node("index", index)
    builder.add_node("report", report)
    builder.add_edge(START, "plan")
    builder.add_edge("plan", "index")
    builder.add_edge("index", "report")
    builder.add_edge("report", END)
    compiled = builder.compile(name=name)
    compiled.__class__ = BrainIndexGraph  # StateGraph.compile has no hook for the compiled class
    return compiled  # type: ignore[return-value]
