"""CPU time of the local Neo4j and Weaviate processes started by ``scripts/services``.

On one machine the client and both servers share the cores: a search's wall time cannot fall below
the CPU all three spend on it divided by the cores, however the round trips are arranged. The
benchmark reads each server's CPU time (``/proc/<pid>/stat``, Linux) before and after a run of
searches and reports the mean per search next to the client's own.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

SERVICES = ("neo4j", "weaviate")


def run_dir() -> Path:
    """Where ``scripts/services`` keeps each service's state (its ``pid`` file among it)."""
    return Path(os.environ.get("BRAIN_GRAPH_RUN_DIR", "/tmp/brain-graph-services"))


def cpu_seconds(pid: int) -> float | None:
    """User plus system CPU seconds of process ``pid`` (None: not readable here)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text(encoding="ascii").rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return None


def server_pids(folder: Path | None = None) -> dict[str, int]:
    """The pids of the running services started by ``scripts/services`` (none elsewhere)."""
    pids = {}
    for service in SERVICES:
        try:
            pid = int((folder or run_dir()).joinpath(service, "pid").read_text(encoding="ascii").strip())
        except (OSError, ValueError):
            continue
        if cpu_seconds(pid) is not None:
            pids[service] = pid
    return pids


def snapshot(pids: Mapping[str, int]) -> dict[str, float]:
    """Each readable process's CPU seconds now."""
    seconds = {service: cpu_seconds(pid) for service, pid in pids.items()}
    return {service: value for service, value in seconds.items() if value is not None}


def per_search_ms(before: Mapping[str, float], after: Mapping[str, float], searches: int) -> dict[str, float]:
    """Mean CPU milliseconds per search of each process read both times."""
    if searches <= 0:
        return {}
    return {service: (after[service] - before[service]) * 1000 / searches for service in before if service in after}
