"""The default budget of the embedded store's vector cache: a quarter of the memory the process may use."""

from __future__ import annotations

from pathlib import Path

import pytest

from brain_graph.core.environment import read_settings
from brain_graph.core.errors import ConfigurationError
from brain_graph.stores.embedded import memory
from brain_graph.stores.embedded.memory import (
    MIN_DEFAULT_CACHE_MB,
    MiB,
    available_memory,
    container_limit,
    default_cache_mb,
)
from brain_graph.stores.embedded.vectors import VectorCacheSettings

GiB = 1024 * MiB


def cgroup(root: Path, name: str, text: str) -> Path:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="ascii")
    return root


def test_a_quarter_of_the_available_memory() -> None:
    assert default_cache_mb(24 * GiB) == 6 * 1024
    assert default_cache_mb(8 * GiB + 3) == 2 * 1024


def test_never_below_the_minimum() -> None:
    assert default_cache_mb(1 * GiB) == MIN_DEFAULT_CACHE_MB
    assert default_cache_mb(0) == MIN_DEFAULT_CACHE_MB


def test_unknown_memory_keeps_the_minimum(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(memory, "physical_memory", lambda: None)
    monkeypatch.setattr(memory, "CGROUP_ROOT", tmp_path)
    assert available_memory(tmp_path) is None
    assert default_cache_mb() == MIN_DEFAULT_CACHE_MB


@pytest.mark.parametrize(
    ("name", "text", "limit"),
    [
        ("memory.max", "2147483648\n", 2 * GiB),
        ("memory.max", "max\n", None),
        ("memory/memory.limit_in_bytes", "4294967296\n", 4 * GiB),
        ("memory/memory.limit_in_bytes", "9223372036854771712\n", None),  # v1 without a limit
        ("memory.max", "garbage\n", None),
    ],
)
def test_container_limits(tmp_path: Path, name: str, text: str, limit: int | None) -> None:
    assert container_limit(cgroup(tmp_path, name, text)) == limit


def test_no_cgroup_files_means_no_limit(tmp_path: Path) -> None:
    assert container_limit(tmp_path) is None


def test_a_container_limit_below_physical_memory_wins(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(memory, "physical_memory", lambda: 64 * GiB)
    root = cgroup(tmp_path, "memory.max", str(4 * GiB))
    assert available_memory(root) == 4 * GiB
    monkeypatch.setattr(memory, "CGROUP_ROOT", root)
    assert default_cache_mb() == 1024


def test_the_physical_memory_of_this_machine_is_read() -> None:
    physical = memory.physical_memory()
    assert physical is None or physical > 64 * MiB


def test_the_setting_defaults_to_the_budget_and_the_variable_overrides_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("BRAIN_GRAPH_VECTOR_CACHE_MB", raising=False)
    assert read_settings(VectorCacheSettings).vector_cache_mb == default_cache_mb()
    monkeypatch.setenv("BRAIN_GRAPH_VECTOR_CACHE_MB", "64")
    assert read_settings(VectorCacheSettings).vector_cache_mb == 64
    monkeypatch.setenv("BRAIN_GRAPH_VECTOR_CACHE_MB", "-1")
    with pytest.raises(ConfigurationError, match="BRAIN_GRAPH_VECTOR_CACHE_MB"):
        read_settings(VectorCacheSettings)
