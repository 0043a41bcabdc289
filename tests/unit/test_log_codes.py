"""JSON log lines name the brain-graph error a record is about by its code (``BRAIN_GRAPH_LOG_FORMAT=json``)."""

from __future__ import annotations

import io
import json
import logging
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from brain_graph.core.errors import BackendUnavailableError, InvalidRequestError
from brain_graph.observability.logs import CallerErrorsAtInfo, configure_logging
from brain_graph.observability.requests import REQUEST_ID


@pytest.fixture
def json_lines(monkeypatch: pytest.MonkeyPatch) -> Iterator[io.StringIO]:
    """brain-graph's loggers configured for JSON to a captured stderr; their state restored after."""
    logger = logging.getLogger("brain_graph")
    saved = (list(logger.handlers), logger.level, logger.propagate)
    stream = io.StringIO()
    monkeypatch.setattr(sys, "stderr", stream)
    configure_logging("json")
    try:
        yield stream
    finally:
        logger.handlers[:], logger.level, logger.propagate = saved


def lines(stream: io.StringIO) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stream.getvalue().splitlines()]


def test_a_record_about_a_brain_graph_error_has_its_code_and_the_request_id(json_lines: io.StringIO) -> None:
    token = REQUEST_ID.set("req-9")
    try:
        logging.getLogger("brain_graph.x").warning(
            "search failed", exc_info=BackendUnavailableError("neo4j", "connection refused")
        )
    finally:
        REQUEST_ID.reset(token)
    [line] = lines(json_lines)
    assert (line["level"], line["logger"], line["request_id"], line["code"]) == (
        "WARNING",
        "brain_graph.x",
        "req-9",
        "BACKEND_UNAVAILABLE",
    )
    assert line["message"] == "search failed"


def test_records_about_other_errors_or_none_have_no_code_and_a_given_code_is_kept(json_lines: io.StringIO) -> None:
    log = logging.getLogger("brain_graph.x")
    log.error("boom", exc_info=RuntimeError("boom"))
    log.info("plain")
    log.info("given", extra={"code": "RATE_LIMITED"}, exc_info=InvalidRequestError("topK", "too big"))
    boom, plain, given = lines(json_lines)
    assert "code" not in boom
    assert "code" not in plain
    assert (boom["level"], boom["request_id"]) == ("ERROR", "-")
    assert given["code"] == "RATE_LIMITED"


def test_a_caller_error_rewritten_to_info_carries_its_code() -> None:
    record = logging.LogRecord("langgraph_api.worker", logging.ERROR, __file__, 1, "Background run failed", (), None)
    error = InvalidRequestError("options.topK", "must be at most 100 (got 5000)")
    record.exc_info = (type(error), error, None)
    assert CallerErrorsAtInfo().filter(record)
    assert (record.levelno, record.code, record.exc_info) == (logging.INFO, "INVALID_REQUEST", None)  # type: ignore[attr-defined]
