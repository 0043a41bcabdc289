"""The ``brain_index`` LangGraph graph in process: plan → index → report, with progress events."""

from __future__ import annotations

from pathlib import Path

import pytest

from brain_graph.errors import InvalidRequestError
from brain_graph.index_graph import build_index_graph
from tests.helpers import SMALL_GRAPH, make_store


def test_the_index_graph_reports_like_the_cli_and_streams_progress(tmp_path: Path) -> None:
    services = make_store(tmp_path, SMALL_GRAPH)
    graph = build_index_graph(services)
    first = graph.invoke({"full": True})["report"]
    assert first["embedded"] > 0
    assert "t1" in first["tenants"]
    events = list(graph.stream({"tenants": ["t1"]}, stream_mode=["updates", "custom"]))
    steps = [next(iter(chunk)) for mode, chunk in events if mode == "updates"]
    assert steps == ["plan", "index", "report"]
    progress = [chunk for mode, chunk in events if mode == "custom"]
    assert progress
    assert progress[-1]["done"] == progress[-1]["total"]
    report = next(chunk for mode, chunk in events if mode == "updates" and "report" in chunk)["report"]["report"]
    assert (report["embedded"], report["tenants"]) == (0, ["t1"])


@pytest.mark.parametrize(
    ("payload", "field"),
    [({"full": "yes"}, "full"), ({"tenants": []}, "tenants"), ({"profiles": "cdm.doc.body"}, "profiles")],
)
def test_bad_input_names_the_field(tmp_path: Path, payload: dict[str, object], field: str) -> None:
    graph = build_index_graph(make_store(tmp_path, SMALL_GRAPH))
    with pytest.raises(InvalidRequestError, match=field):
        graph.invoke(payload)


def test_services_from_a_json_context_are_refused(tmp_path: Path) -> None:
    graph = build_index_graph(make_store(tmp_path, SMALL_GRAPH))
    with pytest.raises(InvalidRequestError, match=r"context\.services"):
        graph.invoke({}, context={"services": {"backend": "x"}})
