"""Readiness of a storage backend: whether each service it depends on answers now, within a bound.

A backend names its services and how to check each (:class:`ReadinessProbe`: the embedded store
reads its file; Neo4j + Weaviate send each server one cheap request); :func:`check_backend` runs
every check at once, each in its own thread, and waits for them at most ``timeout_s`` seconds in
all, so a server that does not answer makes the answer late by that bound, never more. A check
still running then is reported as not answering; its thread ends by the backend's own timeouts.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from brain_graph.core.errors import one_line_message

Check = Callable[[], None]
"""Returns when the service answers as a search needs it to; raises (saying why) when it does not."""


@runtime_checkable
class ReadinessProbe(Protocol):
    """A backend that can say which services it depends on and how to check each."""

    def readiness_checks(self) -> Mapping[str, Check]:
        """A check per service, by the name a caller may see (``embedded``, ``neo4j``, ``weaviate``)."""
        ...


@dataclass(frozen=True)
class ServiceStatus:
    """One service as its check found it: ``problem`` says why it is not ready (``None``: ready). The
    problem may name hosts, ports or paths: it is for the server log, not for callers."""

    name: str
    problem: str | None = None

    @property
    def ready(self) -> bool:
        """Whether the check returned in time without an error."""
        return self.problem is None


class _Outcome:
    """The result one check's thread leaves behind (``None`` until it returns or raises)."""

    def __init__(self) -> None:
        self.problem: str | None = None
        self.done = threading.Event()


def _run(check: Check, outcome: _Outcome) -> None:
    try:
        check()
    except Exception as error:  # any failure means "not ready"; its kind is part of the problem
        outcome.problem = one_line_message(f"{type(error).__name__}: {error}", 500)
    finally:
        outcome.done.set()


def check_services(checks: Mapping[str, Check], timeout_s: float) -> list[ServiceStatus]:
    """Run ``checks`` concurrently (daemon threads) and report each, in the order given, after at most
    ``timeout_s`` seconds: a check not finished by then is ``no answer within <timeout_s> s``."""
    outcomes = {name: _Outcome() for name in checks}
    for name, check in checks.items():
        threading.Thread(target=_run, args=(check, outcomes[name]), name=f"ready-{name}", daemon=True).start()
    deadline = time.monotonic() + timeout_s
    for outcome in outcomes.values():
        outcome.done.wait(max(0.0, deadline - time.monotonic()))
    return [
        ServiceStatus(name, outcome.problem if outcome.done.is_set() else f"no answer within {timeout_s:g} s")
        for name, outcome in outcomes.items()
    ]


def backend_checks(backend: object) -> Mapping[str, Check]:
    """The checks of the services ``backend`` depends on; none for a backend that is no
    :class:`ReadinessProbe`."""
    return backend.readiness_checks() if isinstance(backend, ReadinessProbe) else {}


def check_backend(backend: object, timeout_s: float) -> list[ServiceStatus]:
    """The status of each service ``backend`` depends on (:func:`check_services`); a backend that is
    no :class:`ReadinessProbe` has nothing to check (an empty list)."""
    return check_services(backend_checks(backend), timeout_s)
