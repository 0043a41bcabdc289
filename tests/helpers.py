"""Test data builders shared by the test modules."""

from __future__ import annotations

import socket
import sqlite3
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from brain_graph.indexing.dataset import Dataset, load_dataset
from brain_graph.pipeline.services import SearchServices
from brain_graph.stores.embedded import EmbeddedStore

SEED_OPTION_DEFAULTS: dict[str, Any] = {
    "topK": 20,
    "maxEpisodes": 10,
    "expandDepth": 1,
    "maxNodes": 200,
    "includeEpisodes": True,
    "includeSignals": True,
    "includeClusters": True,
    "retrievalMode": None,
    "minScore": None,
}


def node(tenant: str, node_id: str, node_type: str, title: str | None, **extra: Any) -> dict[str, Any]:
    """A dataset node with defaults."""
    return {
        "tenantId": tenant,
        "id": node_id,
        "nodeType": node_type,
        "projectKey": extra.pop("project", "P"),
        "title": title,
        **extra,
    }


def edge(tenant: str, edge_type: str, source: str, target: str) -> dict[str, Any]:
    """A dataset edge."""
    return {"tenantId": tenant, "edgeType": edge_type, "fromNodeId": source, "toNodeId": target}


SMALL_GRAPH: dict[str, Any] = {
    "nodes": [
        node(
            "t1",
            "w1",
            "cdm.work_item",
            "Fix token refresh race",
            url="https://t/w1",
            text={"summary": "Token refresh fails under concurrent load.", "description": "Details " * 200},
        ),
        node(
            "t1",
            "w2",
            "cdm.work_item",
            "Token refresh metrics",
            url="https://t/w2",
            text={"summary": "Add metrics for token refresh latency."},
        ),
        node(
            "t1",
            "w3",
            "cdm.work_item",
            "Billing export",
            project="Q",
            url="https://t/w3",
            text={"summary": "Export invoices as CSV."},
        ),
        node(
            "t1",
            "d1",
            "cdm.doc",
            "Token refresh design",
            url="https://t/d1",
            text={"body": "How token refresh works. " * 150},
        ),
        node(
            "t1",
            "d2",
            "cdm.doc",
            "Token refresh outage postmortem",
            url="https://t/d2",
            secured=True,
            acl=["group:security"],
            text={"body": "Root cause of the token refresh outage."},
        ),
        node(
            "t1",
            "c1",
            "code.file",
            "auth/token_refresh.py",
            url="https://t/c1",
            text={"summary": "Token refresh client.", "body": "def refresh(token):\n    return token\n"},
        ),
        node("t1", "s1", "signal.instance", "Token refresh error rate alert", text={"summary": "5xx on /token"}),
        node("t1", "s2", "signal.instance", "Secret incident", secured=True, acl=["user:carol"]),
        node("t1", "k1", "kg.cluster", "Token refresh outage", properties={"clusterKind": "episode"}),
        node("t1", "k2", "kg.cluster", "Observability theme", properties={"clusterKind": "theme"}),
        node("t1", "p1", "cdm.person", "Alice Example", project=None, properties={"email": "alice@example.com"}),
        node("t2", "w1", "cdm.work_item", "Token refresh in tenant two", text={"summary": "Token refresh again."}),
        node("t2", "k9", "kg.cluster", "Other tenant episode", properties={"clusterKind": "episode"}),
    ],
    "edges": [
        edge("t1", "HAS_SIGNAL", "w1", "s1"),
        edge("t1", "HAS_SIGNAL", "w1", "s2"),
        edge("t1", "IN_CLUSTER", "w1", "k1"),
        edge("t1", "IN_CLUSTER", "d1", "k1"),
        edge("t1", "IN_CLUSTER", "d2", "k1"),
        edge("t1", "IN_CLUSTER", "w2", "k2"),
        edge("t1", "IN_CLUSTER", "w1", "k2"),
        edge("t1", "REFERENCES", "w1", "d1"),
        edge("t1", "REFERENCES", "w2", "d2"),
        edge("t1", "IMPLEMENTED_BY", "w1", "c1"),
        edge("t1", "ASSIGNED_TO", "w1", "p1"),
        edge("t2", "IN_CLUSTER", "w1", "k9"),
    ],
}


def make_store(tmp_path: Path, data: dict[str, Any] | Dataset, name: str = "store.sqlite3") -> SearchServices:
    """An embedded store in ``tmp_path`` loaded with ``data``, and services over it."""
    store = EmbeddedStore(tmp_path / name)
    services = SearchServices(backend=store)
    dataset = data if isinstance(data, Dataset) else Dataset.model_validate(data)
    load_dataset(dataset, store, services.profiles)
    return services


def vector_states(services: SearchServices, tenant: str = "t1") -> list[Any]:
    """The tenant's vector states in every profile (unchanged states: nothing was re-embedded)."""
    store = services.backend.index_store
    return [store.vector_states(tenant, profile.profile_id) for profile in services.profiles.profiles]


def request(query: str, tenant: str = "t1", *, secured: bool = False, **options: Any) -> dict[str, Any]:
    """A graph input with ``secured`` false by default (public items only)."""
    return {"queryText": query, "filter": {"tenantId": tenant, "secured": secured}, "options": options}


def closed_port() -> int:
    """A local TCP port nobody listens on (bound once, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def sqlite_steps(path: Path, statement: str, params: Mapping[str, Any]) -> tuple[int, list[Any]]:
    """The SQLite virtual machine steps (in hundreds) of one statement on the store file ``path``, and
    its rows: the work of a read, independent of the machine's speed."""
    connection = sqlite3.connect(path)
    steps = 0

    def counted() -> int:
        nonlocal steps
        steps += 1
        return 0

    connection.set_progress_handler(counted, 100)
    try:
        rows = connection.execute(statement, dict(params)).fetchall()
    finally:
        connection.close()
    return steps, rows
