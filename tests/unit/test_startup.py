"""Only a worker of ``langgraph dev``'s reloader names a reloader to end with it."""

from __future__ import annotations

import pytest

from brain_graph.serving.startup import DEV_VARIANT, dev_reloader_pid


def test_a_process_that_no_dev_server_spawned_has_no_reloader(monkeypatch: pytest.MonkeyPatch) -> None:
    name, value = DEV_VARIANT
    monkeypatch.delenv(name, raising=False)
    assert dev_reloader_pid() is None
    monkeypatch.setenv(name, value)  # the variable alone is not enough: no multiprocessing parent
    assert dev_reloader_pid() is None
