"""brain-graph's Prometheus metrics, on a registry of its own (:data:`REGISTRY`, never the process's
default one), exposed by :func:`exposition`.

Labels are bounded: step names, backend names, operation names, error codes, route templates and
status codes; never a tenant, a query or an id. Under several worker processes set
``PROMETHEUS_MULTIPROC_DIR`` (a directory shared by the workers, emptied before they start): each
process writes its samples there and :func:`exposition` sums them, so any worker's ``/brain/metrics``
shows the whole deployment.
"""

from __future__ import annotations

import os

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.multiprocess import MultiProcessCollector

REGISTRY = CollectorRegistry(auto_describe=True)
MULTIPROCESS_DIR_VARIABLE = "PROMETHEUS_MULTIPROC_DIR"
# From 1 ms to 10 s: a search step on the embedded store takes about a millisecond, a cold one seconds.
LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)

SEARCHES = Counter(
    "brain_graph_searches",
    "Runs of the brain_search graph, by outcome (ok, error).",
    ("outcome",),
    registry=REGISTRY,
)
SEARCH_ERRORS = Counter(
    "brain_graph_search_errors",
    "Failed runs of the brain_search graph, by error code (the brain-graph error's, else INTERNAL_SERVER_ERROR).",
    ("code",),
    registry=REGISTRY,
)
SEARCH_SECONDS = Histogram(
    "brain_graph_search_seconds",
    "Time of a whole run of the brain_search graph.",
    buckets=LATENCY_BUCKETS,
    registry=REGISTRY,
)
STEP_SECONDS = Histogram(
    "brain_graph_step_seconds",
    "Time of one pipeline step, by step, backend and outcome (ok, error).",
    ("step", "backend", "outcome"),
    buckets=LATENCY_BUCKETS,
    registry=REGISTRY,
)
BACKEND_CALL_SECONDS = Histogram(
    "brain_graph_backend_call_seconds",
    "Time of one combined backend read of a search (SearchReads), by backend, operation and outcome.",
    ("backend", "operation", "outcome"),
    buckets=LATENCY_BUCKETS,
    registry=REGISTRY,
)
HTTP_REQUESTS = Counter(
    "brain_graph_http_requests",
    "HTTP requests to brain-graph's routes, by route template, method and status code.",
    ("route", "method", "status"),
    registry=REGISTRY,
)
HTTP_SECONDS = Histogram(
    "brain_graph_http_request_seconds",
    "Time to answer an HTTP request to brain-graph's routes, by route template.",
    ("route",),
    buckets=LATENCY_BUCKETS,
    registry=REGISTRY,
)


def exposition() -> tuple[bytes, str]:
    """The metrics in the Prometheus text format, and its content type: this process's, or every
    worker's under ``PROMETHEUS_MULTIPROC_DIR``."""
    if os.environ.get(MULTIPROCESS_DIR_VARIABLE):
        registry = CollectorRegistry()
        MultiProcessCollector(registry)  # type: ignore[no-untyped-call]
        return generate_latest(registry), CONTENT_TYPE_LATEST
    return generate_latest(REGISTRY), CONTENT_TYPE_LATEST
