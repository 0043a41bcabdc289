"""Attack class: log forging and flooding. The debug log (``DEBUG_PIPELINE=1``) quotes request strings
(tenant, project, option keys, query); line breaks in them cannot start a forged log line and huge
values cannot flood it: every message is one bounded line."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from brain_graph import BrainGraphError, SearchServices
from tests.probes.support import request, search


def _assert_one_bounded_line(message: str) -> None:
    assert "\n" not in message, repr(message[:300])
    assert "\r" not in message, repr(message[:300])
    assert "\u2028" not in message, repr(message[:300])
    assert len(message) < 2_000, len(message)


@pytest.mark.parametrize(
    "raw",
    [
        {
            "queryText": "token",
            "filter": {"tenantId": "t1\n2026-01-01 DEBUG brain_graph.pipeline PIPELINE forged", "secured": False},
        },
        {"queryText": "token", "filter": {"tenantId": "t1", "projectKey": "P\r\nPIPELINE forged", "secured": False}},
        {"queryText": "token", "filter": {"tenantId": "t1", "secured": False}, "options": {"x\nPIPELINE forged": 1}},
        {"queryText": "token", "filter": {"tenantId": "t" * 200_000, "secured": False}},
    ],
    ids=["tenant-newline", "project-crlf", "option-key-newline", "tenant-huge"],
)
def test_debug_log_lines_of_refused_requests_cannot_be_forged_or_flooded(
    small_services: SearchServices,
    raw: dict[str, Any],
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("DEBUG_PIPELINE", "1")
    with caplog.at_level(logging.DEBUG, logger="brain_graph.pipeline"), pytest.raises(BrainGraphError):
        search(small_services, raw)
    messages = [record.getMessage() for record in caplog.records if record.name.startswith("brain_graph")]
    assert messages
    for message in messages:
        _assert_one_bounded_line(message)


def test_debug_log_of_a_valid_request_is_one_line_each(
    small_services: SearchServices, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DEBUG_PIPELINE", "1")
    with caplog.at_level(logging.DEBUG, logger="brain_graph.pipeline"):
        search(small_services, request("token\nrefresh\u2028PIPELINE forged " + "x" * 1_900))
    assert caplog.records
    for record in caplog.records:
        _assert_one_bounded_line(record.getMessage())
