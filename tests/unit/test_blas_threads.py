"""The BLAS thread limit around the stores' matrix products: one thread inside, the previous limit
restored when the last overlapping caller leaves."""

from __future__ import annotations

import threading

import numpy as np  # noqa: F401  (loads the BLAS library the controller finds)
import pytest
from threadpoolctl import ThreadpoolController, threadpool_limits

import brain_graph.stores.blas_threads as blas_threads_module
from brain_graph.core.errors import ConfigurationError
from brain_graph.stores.blas_threads import limited_blas_threads


def blas_threads() -> list[int]:
    """The thread limits of numpy's BLAS libraries (those loaded when the module was imported; other
    libraries loaded since, such as torch's, do not score vectors)."""
    numpy_blas = {info["filepath"] for info in blas_threads_module._controller.select(user_api="blas").info()}
    found = ThreadpoolController().select(user_api="blas").info()
    return [info["num_threads"] for info in found if info["filepath"] in numpy_blas]


def test_one_thread_inside_and_the_previous_limit_after() -> None:
    with threadpool_limits(limits=2, user_api="blas"):
        assert blas_threads()
        assert set(blas_threads()) == {2}
        with limited_blas_threads():
            assert set(blas_threads()) == {1}
            with limited_blas_threads():
                assert set(blas_threads()) == {1}
            assert set(blas_threads()) == {1}
        assert set(blas_threads()) == {2}


def test_overlapping_callers_on_threads_never_restore_under_one_another() -> None:
    entered, leave_first, first_left = threading.Event(), threading.Event(), threading.Event()
    seen: dict[str, list[int]] = {}

    def first() -> None:
        with limited_blas_threads():
            entered.set()
            leave_first.wait(10)
        first_left.set()

    with threadpool_limits(limits=2, user_api="blas"):
        worker = threading.Thread(target=first)
        worker.start()
        assert entered.wait(10)
        with limited_blas_threads():
            leave_first.set()
            assert first_left.wait(10)
            seen["after the first left"] = blas_threads()
        worker.join(10)
        seen["after both"] = blas_threads()
    assert set(seen["after the first left"]) == {1}
    assert set(seen["after both"]) == {2}


def test_an_error_inside_restores_the_limit() -> None:
    with threadpool_limits(limits=2, user_api="blas"):
        try:
            with limited_blas_threads():
                raise RuntimeError("scan failed")
        except RuntimeError:
            pass
        assert set(blas_threads()) == {2}


def test_the_scan_threads_setting_is_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BRAIN_GRAPH_SCAN_THREADS", "0")
    monkeypatch.setattr(blas_threads_module, "_threads", None)
    with pytest.raises(ConfigurationError, match="BRAIN_GRAPH_SCAN_THREADS"):
        blas_threads_module.scan_threads()
    monkeypatch.setenv("BRAIN_GRAPH_SCAN_THREADS", "2")
    monkeypatch.setattr(blas_threads_module, "_threads", None)
    with threadpool_limits(limits=1, user_api="blas"), limited_blas_threads():
        assert set(blas_threads()) == {2}
    monkeypatch.setattr(blas_threads_module, "_threads", None)
