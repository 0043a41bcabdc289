"""The ``brain_index`` graph refuses top-level input keys it does not know instead of dropping them
(``{"tenant": [...], "full": True}`` would otherwise re-embed every tenant)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langgraph.graph import END, START, StateGraph
from typing_extensions import TypedDict

from brain_graph.core.errors import InvalidRequestError
from brain_graph.graphs.index import build_index_graph
from brain_graph.pipeline.services import SearchServices
from tests.helpers import vector_states


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        (
            {"tenant": ["t1"], "full": True},
            r"^invalid request: request: unknown key\(s\) \['tenant'\]; allowed: tenants, profiles, full; "
            r"did you mean tenants\?$",
        ),
        ({"foo": 1}, r"^invalid request: request: unknown key\(s\) \['foo'\]; allowed: tenants, profiles, full$"),
        ({"tenants": ["t1"], "Full": True}, r"unknown key\(s\) \['Full'\]; .*did you mean full\?$"),
        (["t1"], r"^invalid request: request: must be an object \{tenants, profiles, full\} \(got list\)$"),
    ],
)
def test_unknown_keys_are_refused_before_anything_is_written(
    small_services: SearchServices, payload: Any, message: str
) -> None:
    before = vector_states(small_services)
    graph = build_index_graph(small_services)
    with pytest.raises(InvalidRequestError, match=message):
        graph.invoke(payload)
    with pytest.raises(InvalidRequestError, match=message):
        asyncio.run(graph.ainvoke(payload))
    with pytest.raises(InvalidRequestError, match=message):
        list(graph.stream(payload, stream_mode=["updates", "custom"]))
    assert vector_states(small_services) == before


def test_known_keys_and_an_empty_input_pass(small_services: SearchServices) -> None:
    graph = build_index_graph(small_services)
    assert graph.invoke({})["report"]["tenants"] == ["t1", "t2"]
    report = graph.invoke({"tenants": ["t1"], "profiles": ["cdm.doc.body"], "full": False})["report"]
    assert (report["tenants"], report["profiles"]) == (["t1"], ["cdm.doc.body"])


def test_as_a_subgraph_it_reads_its_own_keys_of_the_parent_state(small_services: SearchServices) -> None:
    class Parent(TypedDict, total=False):
        tenants: list[str]
        report: dict[str, Any]
        question: str

    builder: StateGraph[Any, Any, Any, Any] = StateGraph(Parent)
    builder.add_node("index", build_index_graph(small_services))
    builder.add_edge(START, "index")
    builder.add_edge("index", END)
    result = builder.compile().invoke({"tenants": ["t1"], "question": "kept"})
    assert (result["report"]["tenants"], result["question"]) == (["t1"], "kept")


@pytest.mark.parametrize(
    ("context", "message"),
    [
        ({"service": None}, r"^invalid request: context: unknown key\(s\) \['service'\]; allowed: services$"),
        ("x", r"^invalid request: context: must be a BrainIndexContext or an object \{services\} \(got str\)$"),
        ({"services": "x"}, r"^invalid request: context.services: must be SearchServices"),
    ],
)
def test_a_context_that_is_not_one_is_refused(small_services: SearchServices, context: Any, message: str) -> None:
    before = vector_states(small_services)
    with pytest.raises(InvalidRequestError, match=message):
        build_index_graph(small_services).invoke({"tenants": ["t1"], "full": True}, context=context)
    assert vector_states(small_services) == before


def test_a_checkpoint_namespace_from_the_caller_does_not_lift_the_check(small_services: SearchServices) -> None:
    before = vector_states(small_services)
    graph = build_index_graph(small_services)
    for namespace in ("x", "brain_index:1"):
        config: dict[str, Any] = {"configurable": {"checkpoint_ns": namespace, "__pregel_read": "parent"}}
        with pytest.raises(InvalidRequestError, match=r"unknown key\(s\) \['tenant'\]"):
            graph.invoke({"tenant": ["t1"], "full": True}, config)
        with pytest.raises(InvalidRequestError, match="context"):
            graph.invoke({"tenants": ["t1"]}, config, context="services")
    assert vector_states(small_services) == before
