"""Attack class: identities that differ only in case, encoding or white space, on the real Neo4j +
Weaviate servers (``eval "$(scripts/services env)"`` first). Weaviate's tenant alphabet, its ``field``
tokenization and Neo4j's string matching must not merge what the embedded store keeps apart: tenants,
ACL entries and project keys match exactly, and long group lists stay fast.

Every tenant gets a prefix unique to the run and is dropped afterwards.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from brain_graph import Principal, SearchServices
from brain_graph.indexing.dataset import Dataset, load_dataset
from tests.integration.servers import connect, unique_prefix
from tests.probes.support import make_store, node, request, search

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def server() -> Iterator[tuple[SearchServices, str, list[str]]]:
    backend = connect()
    services = SearchServices(backend=backend)
    prefix = unique_prefix("probe")
    tenants: list[str] = []
    try:
        yield services, prefix, tenants
    finally:
        try:
            if tenants:
                backend.drop_tenants(sorted(set(tenants)))
        finally:
            backend.close()


def _load(services: SearchServices, tenants: list[str], data: dict[str, Any]) -> None:
    tenants.extend(n["tenantId"] for n in data["nodes"])
    load_dataset(Dataset.model_validate(data), services.backend, services.profiles)


def test_server_tenants_differing_in_case_or_encoding_are_isolated(server: Any) -> None:
    services, prefix, tenants = server
    names = [
        f"{prefix}Case",
        f"{prefix}case",
        f"{prefix}a_b",
        f"{prefix}a-b",
        f"{prefix}a_5fb",
        f"{prefix}caf\u00e9",
        f"{prefix}cafe\u0301",
        f"{prefix}{'x' * 40}1",
        f"{prefix}{'x' * 40}2",
        f"{prefix}__x",
        f"{prefix}a_g1",
    ]
    nodes = [
        node(t, "w1", "cdm.work_item", f"Token refresh {i}", text={"summary": f"token refresh {i}"})
        for i, t in enumerate(names)
    ]
    _load(services, tenants, {"nodes": nodes, "edges": []})
    for i, tenant in enumerate(names):
        assert [h.title for h in search(services, request("token refresh", tenant)).hits] == [f"Token refresh {i}"]


def test_server_acl_matches_exactly(server: Any) -> None:
    services, prefix, tenants = server
    tenant = f"{prefix}acl"
    acls = {"a": "group:Sec", "b": "group:a  b", "c": "group:x\u00a0y", "d": "user:Bob", "e": "group:caf\u00e9"}
    nodes = [
        node(
            tenant,
            key,
            "cdm.work_item",
            f"Token refresh {key}",
            secured=True,
            acl=[acl],
            text={"summary": "token refresh"},
        )
        for key, acl in acls.items()
    ]
    _load(services, tenants, {"nodes": nodes, "edges": []})
    cases = [
        (Principal("u", ("sec", "SEC", "a b", "x y", "cafe\u0301", "Bob")), set()),
        (Principal("bob"), set()),
        (Principal("u", ("Sec",)), {"a"}),
        (Principal("u", ("a  b",)), {"b"}),
        (Principal("u", ("x\u00a0y",)), {"c"}),
        (Principal("Bob"), {"d"}),
        (Principal("u", ("caf\u00e9",)), {"e"}),
    ]
    for principal, expected in cases:
        result = search(services, request("token refresh", tenant, secured=True), principal)
        assert {h.node_id for h in result.hits} == expected, principal


def test_server_many_long_groups(server: Any) -> None:
    services, prefix, tenants = server
    tenant = f"{prefix}groups"
    nodes = [
        node(
            tenant,
            "w1",
            "cdm.work_item",
            "Token refresh",
            secured=True,
            acl=["group:needle"],
            text={"summary": "token refresh"},
        )
    ]
    _load(services, tenants, {"nodes": nodes, "edges": []})
    groups = (*(f"g{n:04d}" + "\U0001f600" * 250 for n in range(999)), "needle")
    started = time.perf_counter()
    result = search(services, request("token refresh", tenant, secured=True), Principal("u", groups))
    assert [h.node_id for h in result.hits] == ["w1"]
    assert time.perf_counter() - started < 5.0


def test_server_project_keys_differing_in_inner_white_space_match_the_embedded_store(
    server: Any, tmp_path: Path
) -> None:
    """Weaviate's ``field`` tokenization trims white space; keys cannot start or end with it (refused at
    load and search), and inner white space keeps keys apart on both backends."""
    services, prefix, tenants = server
    tenant = f"{prefix}proj"
    projects = ["P Q", "P  Q", "P\u00a0Q", "P\u3000Q"]
    nodes = [
        node(tenant, f"w{n}", "cdm.work_item", "Token refresh", project=project, text={"summary": "token refresh"})
        for n, project in enumerate(projects)
    ]
    data = {"nodes": nodes, "edges": []}
    _load(services, tenants, data)
    embedded = make_store(tmp_path, data)
    for n, project in enumerate(projects):
        raw = request("token refresh", tenant)
        raw["filter"]["projectKey"] = project
        result = search(services, raw)
        assert [h.node_id for h in result.hits] == [f"w{n}"]
        assert result.model_dump() == search(embedded, raw).model_dump()
