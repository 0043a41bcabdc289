"""The brainSearch LangGraph graph: six nodes over a typed state."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Checkpointer, StateUpdate

from brain_graph.nodes import PIPELINE as _PIPELINE
from brain_graph.observability.searches import ameasured, measured
from brain_graph.pipeline.binding import ServicesProvider, Step, bind_step
from brain_graph.pipeline.config import default_services
from brain_graph.pipeline.requests import check_context, check_state_update, check_top_level_keys
from brain_graph.pipeline.run_binding import is_subgraph_run
from brain_graph.pipeline.services import SearchServices
from brain_graph.pipeline.state import BrainSearchContext, BrainSearchInput, BrainSearchOutput, BrainSearchState

PIPELINE: tuple[tuple[str, Step], ...] = _PIPELINE  # typed here: mypy checks nodes/ as its own package
GRAPH_NAME = "brain_search"
NODE_NAMES = tuple(name for name, _ in PIPELINE)


STATE_KEYS = tuple(BrainSearchState.__annotations__)


def _modes(stream_mode: Any) -> list[str]:
    return [stream_mode] if isinstance(stream_mode, str) else list(stream_mode or ())


def _only_keys(event: Any, keys: Sequence[str], modes: list[str], single: bool, subgraphs: bool) -> Any:
    """A stream event with its top-level ``values`` chunk cut back to ``keys`` (other events as they are)."""
    namespace: tuple[str, ...] = ()
    if subgraphs:
        namespace, *rest = event
        mode, chunk = (modes[0], rest[0]) if single else rest
    else:
        mode, chunk = (modes[0], event) if single else event
    if mode != "values" or namespace or not isinstance(chunk, dict):
        return event
    chunk = {key: chunk[key] for key in keys if key in chunk}
    if single:
        return (namespace, chunk) if subgraphs else chunk
    return (namespace, mode, chunk) if subgraphs else (mode, chunk)


def _check_updates(supersteps: Sequence[Sequence[StateUpdate]]) -> None:
    """Every update of ``update_state`` (and of a thread created with updates) writes input keys only."""
    for superstep in supersteps:
        for update in superstep:
            check_state_update(update[0], "state")


class BrainSearchGraph(CompiledStateGraph[BrainSearchState, BrainSearchContext, BrainSearchInput, BrainSearchOutput]):
    """The compiled brainSearch graph.

    - A top-level input with keys other than ``queryText``, ``filter`` and ``options`` is refused
      (:class:`~brain_graph.core.errors.InvalidRequestError`) instead of being dropped silently; as a
      subgraph node it receives the parent's state and reads only its own keys.
    - A top-level ``Command`` may resume and update the input keys, not ``goto`` a step; a state update
      (``update_state``) may write ``queryText``, ``filter`` and ``options`` only: the keys the steps
      write are trusted by the next steps (the validated request, records read within the caller's
      access scope), so a caller cannot skip ``embed``'s checks or hand a step ids to read. Whether a
      run is a subgraph of a parent comes from LangGraph's own task machinery, never from the config
      a caller sends (:func:`~brain_graph.pipeline.run_binding.is_subgraph_run`).
    - A step refuses a state the first step wrote for another caller (a thread stopped mid-way and
      continued, copied or forked under another principal): :mod:`brain_graph.pipeline.run_binding`.
    - The ``updates`` stream shows every key a step wrote, even when the caller restricts the stream
      to some ``output_keys`` (as the LangGraph server does, with the output schema's keys): ``embed``'s
      ``request`` and ``queryVectors`` are its real update, not ``null``. ``values`` chunks keep the
      requested keys.
    """

    def _prepare(self, input: Any, config: RunnableConfig | None, kwargs: dict[str, Any]) -> Callable[[Any], Any]:
        if not is_subgraph_run(config):
            check_top_level_keys(input)
            check_context(kwargs.get("context"), top_level=True)
        modes = _modes(kwargs.get("stream_mode") or self.stream_mode)
        requested = kwargs.get("output_keys")
        if "updates" not in modes or not requested or kwargs.get("version", "v1") != "v1":
            return lambda event: event
        keys = [requested] if isinstance(requested, str) else list(requested)
        kwargs["output_keys"] = list(dict.fromkeys([*keys, *STATE_KEYS]))
        single = isinstance(kwargs.get("stream_mode") or self.stream_mode, str)
        subgraphs = bool(kwargs.get("subgraphs"))
        return lambda event: _only_keys(event, keys, modes, single, subgraphs)

    def bulk_update_state(self, config: RunnableConfig, supersteps: Sequence[Sequence[StateUpdate]]) -> RunnableConfig:
        _check_updates(supersteps)
        return super().bulk_update_state(config, supersteps)

    async def abulk_update_state(
        self, config: RunnableConfig, supersteps: Sequence[Sequence[StateUpdate]]
    ) -> RunnableConfig:
        _check_updates(supersteps)
        return await super().abulk_update_state(config, supersteps)

    def stream(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Iterator[Any]:
        restore = self._prepare(input, config, kwargs)
        return (restore(event) for event in measured(super().stream(input, config, **kwargs)))

    def astream(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> AsyncIterator[Any]:
        restore = self._prepare(input, config, kwargs)
        events = ameasured(super().astream(input, config, **kwargs))

        async def restored() -> AsyncIterator[Any]:
            async for event in events:
                yield restore(event)

        return restored()


def build_graph(
    services: SearchServices | None = None, *, name: str = GRAPH_NAME, checkpointer: Checkpointer = None
) -> BrainSearchGraph:
    """Compile the pipeline ``embed → retrieve → expand → score_episodes → assemble_passages → build_pack``.

    ``services`` are the default dependencies; a run's context (``BrainSearchContext.services``)
    overrides them. Without either, services are built once from the environment (embedded store
    unless ``BRAIN_GRAPH_BACKEND`` says otherwise).
    """
    provider: ServicesProvider = (lambda: services) if services is not None else default_services
    return compile_steps(PIPELINE, provider, name=name, checkpointer=checkpointer)


def compile_steps(
    steps: Sequence[tuple[str, Step]],
    provider: ServicesProvider,
    *,
    name: str = GRAPH_NAME,
    checkpointer: Checkpointer = None,
) -> BrainSearchGraph:
    """The graph of :func:`build_graph` over other ``steps`` (name, step), run in that order: the same
    state, schemas, node wrappers and compiled class. For instrumenting the pipeline (the profiler of
    ``benchmarks/step_profile.py`` times each step and replays recorded updates); a search graph is
    :func:`build_graph`'s."""
    builder: StateGraph[Any, Any, Any, Any] = StateGraph(
        BrainSearchState,
        context_schema=BrainSearchContext,
        input_schema=BrainSearchInput,
        output_schema=BrainSearchOutput,
    )
    previous = START
    for position, (node_name, step) in enumerate(steps):
        builder.add_node(node_name, bind_step(node_name, step, provider, opens_run=position == 0))
        builder.add_edge(previous, node_name)
        previous = node_name
    builder.add_edge(previous, END)
    compiled = builder.compile(name=name, checkpointer=checkpointer)
    compiled.__class__ = BrainSearchGraph  # StateGraph.compile has no hook for the compiled class
    return compiled  # type: ignore[return-value]
