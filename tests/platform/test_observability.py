"""Per-step observability: ``DEBUG_PIPELINE=1`` debug lines and the ``custom`` stream events."""

from __future__ import annotations

import logging
import os
import re
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import pytest

from brain_graph.core.errors import InvalidRequestError
from brain_graph.core.security import Principal
from brain_graph.graphs.search import NODE_NAMES, BrainSearchGraph
from brain_graph.pipeline.binding import logger as pipeline_logger
from brain_graph.pipeline.state import BrainSearchContext, BrainSearchInput
from brain_graph.stores.embedded import STORE_FILE_NAME
from tests.platform.devserver import REPO_ROOT

REQUEST: dict[str, Any] = {
    "queryText": "duplicate card charges",
    "filter": {"tenantId": "acme", "projectKey": "PAY", "secured": True},
    "options": {"topK": 4},
}
CONTEXT = BrainSearchContext(principal=Principal("alice", ("security",)))


@pytest.fixture(autouse=True)
def _restore_pipeline_logger() -> Iterator[None]:
    """The debug switch may lower the pipeline logger's level; give each test a pristine logger."""
    level, handlers = pipeline_logger.level, list(pipeline_logger.handlers)
    yield
    pipeline_logger.setLevel(level)
    pipeline_logger.handlers[:] = handlers


def _search(graph: BrainSearchGraph, request: dict[str, Any] = REQUEST) -> None:
    graph.invoke(cast(BrainSearchInput, request), context=CONTEXT)


def _pipeline_records(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [record for record in caplog.records if record.name == "brain_graph.pipeline"]


def test_debug_pipeline_logs_each_step_in_and_out(
    home_graph: BrainSearchGraph, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DEBUG_PIPELINE", "1")
    with caplog.at_level(logging.DEBUG):
        _search(home_graph)
    records = _pipeline_records(caplog)
    assert {record.levelno for record in records} == {logging.DEBUG}
    messages = [record.getMessage() for record in records]
    assert [message.split(" | ")[0] for message in messages] == [
        f"PIPELINE {step}.{phase}" for step in NODE_NAMES for phase in ("in", "out")
    ]
    scope = 'query="duplicate card charges" tenant=acme project=PAY secured=true principal=alice'
    assert all(message.endswith(scope) or scope + " " in message for message in messages[0::2])
    by_phase = dict(message.split(" | ", 1) for message in messages)
    assert by_phase["PIPELINE embed.out"].startswith("ms=")
    assert re.search(r" hits=4 warnings=0 nodeRecords=4 seedLinks=\d+ hitSources=4$", by_phase["PIPELINE retrieve.out"])
    assert by_phase["PIPELINE expand.in"].endswith(" hits=4")
    assert re.search(
        r" nodeRecords=\d+ candidates=\d+ clusterMemberships=\d+ passageTexts=\d+$", by_phase["PIPELINE expand.out"]
    )
    assert "passages=" in by_phase["PIPELINE assemble_passages.out"]
    assert "citations=4 contextChars=" in by_phase["PIPELINE build_pack.out"]


def test_nothing_is_logged_without_the_switch(
    home_graph: BrainSearchGraph, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("DEBUG_PIPELINE", raising=False)
    with caplog.at_level(logging.DEBUG):
        _search(home_graph)
    assert _pipeline_records(caplog) == []


def test_nothing_is_logged_at_info_or_above(
    home_graph: BrainSearchGraph, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DEBUG_PIPELINE", "1")
    with caplog.at_level(logging.INFO):
        _search(home_graph)
    assert [record for record in caplog.records if record.name.startswith("brain_graph")] == []


def test_a_failing_step_logs_its_error(
    home_graph: BrainSearchGraph, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DEBUG_PIPELINE", "1")
    with caplog.at_level(logging.DEBUG), pytest.raises(InvalidRequestError):
        _search(home_graph, {**REQUEST, "options": {"topK": 0}})
    messages = [record.getMessage() for record in _pipeline_records(caplog)]
    assert messages[0].startswith("PIPELINE embed.in | ")
    assert messages[1].startswith("PIPELINE embed.error | ms=")
    assert "error=InvalidRequestError: invalid request: options.topK: " in messages[1]
    assert len(messages) == 2


def test_custom_stream_events_per_step(home_graph: BrainSearchGraph) -> None:
    events = list(home_graph.stream(cast(BrainSearchInput, REQUEST), context=CONTEXT, stream_mode="custom"))
    assert [event["step"] for event in events] == list(NODE_NAMES)
    assert all(set(event) == {"step", "ms", "counts"} and event["ms"] >= 0 for event in events)
    output = home_graph.invoke(cast(BrainSearchInput, REQUEST), context=CONTEXT)
    written = {
        step: update
        for chunk in home_graph.stream(cast(BrainSearchInput, REQUEST), context=CONTEXT, stream_mode="updates")
        for step, update in chunk.items()
    }
    counts = {event["step"]: event["counts"] for event in events}
    assert counts == {
        "embed": {"queryVectors": 1},
        "retrieve": {
            "hits": len(output["hits"]),
            "warnings": len(output["warnings"]),
            "nodeRecords": len(output["hits"]),
            "seedLinks": len(written["retrieve"]["seedLinks"]),
            "hitSources": len(output["hits"]),
        },
        "expand": {
            "graphNodes": len(output["graphNodes"]),
            "graphEdges": len(output["graphEdges"]),
            "nodeRecords": len(output["graphNodes"]),
            "candidates": len(output["candidates"]),
            "clusterMemberships": len(written["expand"]["clusterMemberships"]),
            "passageTexts": len(written["expand"]["passageTexts"]["texts"]),
        },
        "score_episodes": {"episodes": len(output["episodes"]), "episodeLabels": len(output["episodes"])},
        "assemble_passages": {"passages": len(output["passages"])},
        "build_pack": {
            "citations": len(output["promptPack"]["citations"]),
            "contextChars": len(output["promptPack"]["contextMarkdown"]),
        },
    }
    again = list(home_graph.stream(cast(BrainSearchInput, REQUEST), context=CONTEXT, stream_mode="custom"))
    assert [event["counts"] for event in again] == [event["counts"] for event in events]


def test_custom_events_stream_alongside_updates(home_graph: BrainSearchGraph) -> None:
    modes = [
        mode
        for mode, _ in home_graph.stream(
            cast(BrainSearchInput, REQUEST), context=CONTEXT, stream_mode=["updates", "custom"]
        )
    ]
    assert modes == ["custom", "updates"] * len(NODE_NAMES)


SCRIPT = textwrap.dedent(
    """
    import logging, sys
    from brain_graph import BrainSearchContext, Principal, SearchServices, build_graph
    from brain_graph.stores.embedded import EmbeddedStore
    setup = sys.argv[2]
    if setup == "basic-warning":
        logging.basicConfig(level=logging.WARNING)
    elif setup == "quiet-pipeline":
        logging.basicConfig(level=logging.DEBUG)
        logging.getLogger("brain_graph.pipeline").setLevel(logging.WARNING)
    graph = build_graph(SearchServices(backend=EmbeddedStore(sys.argv[1])))
    graph.invoke(
        {"queryText": "token refresh", "filter": {"tenantId": "acme", "secured": False}},
        context=BrainSearchContext(principal=Principal("alice")),
    )
    """
)


@pytest.mark.parametrize(
    ("debug", "setup", "emits"),
    [
        ("1", "none", True),  # logging never configured: the pipeline logger writes to stderr itself
        ("1", "basic-warning", True),  # root at WARNING: the switch still gets the lines out
        ("1", "quiet-pipeline", False),  # an explicit level on the pipeline logger wins
        ("", "none", False),
    ],
)
def test_the_switch_works_whatever_the_logging_setup(brain_home: Path, debug: str, setup: str, emits: bool) -> None:
    env = {**os.environ, "DEBUG_PIPELINE": debug, "PYTHONPATH": str(REPO_ROOT)}
    completed = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(brain_home / STORE_FILE_NAME), setup],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    lines = [line for line in completed.stderr.splitlines() if "PIPELINE" in line]
    assert completed.stdout == ""
    if emits:
        assert len(lines) == 2 * len(NODE_NAMES)
        assert (
            'PIPELINE embed.in | query="token refresh" tenant=acme project=- secured=false principal=alice' in lines[0]
        )
        assert lines.count(lines[0]) == 1  # one handler, no duplicates
    else:
        assert lines == []
