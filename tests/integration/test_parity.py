"""Parity: the full graph result on Neo4j + Weaviate is IDENTICAL to the embedded backend's."""

from __future__ import annotations

from collections import Counter
from typing import Any, cast

import pytest

from brain_graph.core.contracts import BrainSearchResult
from brain_graph.core.security import Principal
from brain_graph.graphs.search import build_graph
from brain_graph.indexing.dataset import Dataset
from brain_graph.pipeline.services import SearchServices
from brain_graph.pipeline.state import BrainSearchContext, BrainSearchInput
from tests.integration.conftest import Loaded

pytestmark = pytest.mark.integration


def search(services: SearchServices, request: dict[str, Any], principal: Principal | None) -> dict[str, Any]:
    output = build_graph(services).invoke(cast(BrainSearchInput, request), context=BrainSearchContext(principal))
    return BrainSearchResult.model_validate(output).to_wire()


def parity_requests(dataset: Dataset) -> list[tuple[str, dict[str, Any], Principal | None]]:
    """Requests derived from the data itself (titles, projects, ACL entries), so they hit real items
    whatever the dataset."""
    tenant = Counter(node.tenant_id for node in dataset.nodes).most_common(1)[0][0]
    mine = sorted((n for n in dataset.nodes if n.tenant_id == tenant), key=lambda n: n.id)
    other = sorted({n.tenant_id for n in dataset.nodes} - {tenant})

    def title(node_type: str, secured: bool = False) -> str:
        return next((n.title for n in mine if n.node_type == node_type and n.secured == secured and n.title), "x")

    work, doc = title("cdm.work_item"), title("cdm.doc")
    project = Counter(n.project_key for n in mine if n.project_key).most_common(1)[0][0]
    acl = sorted({entry for n in mine for entry in n.acl})
    users = [entry.split(":", 1)[1] for entry in acl if entry.startswith("user:")]
    groups = [entry.split(":", 1)[1] for entry in acl if entry.startswith("group:")]
    secured_text = next((n.title for n in mine if n.secured and n.title), work)

    def req(query: str, *, secured: bool = False, tenant_id: str = tenant, **options: Any) -> dict[str, Any]:
        filters = {"tenantId": tenant_id, "secured": secured}
        filters.update({k: options.pop(k) for k in ("projectKey", "profileKindIn") if k in options})
        return {"queryText": query, "filter": filters, "options": options}

    cases: list[tuple[str, dict[str, Any], Principal | None]] = [
        ("default", req(work), None),
        ("doc-depth0", req(doc, expandDepth=0), None),
        ("depth2", req(work, expandDepth=2, topK=10), None),
        ("wide", req(f"{work} {doc}", topK=50, expandDepth=3, maxNodes=400, maxEpisodes=20), None),
        ("episodes-off", req(work, includeEpisodes=False), None),
        ("no-signals-no-clusters", req(work, includeSignals=False, includeClusters=False, maxNodes=15), None),
        ("project", req(work, projectKey=project, expandDepth=2), None),
        ("code-only", req(work, profileKindIn=["code"]), None),
        ("all-kinds", req(doc, profileKindIn=["work", "doc", "code"], topK=30), None),
        ("small-budget", req(work, topK=3, maxNodes=5, maxEpisodes=1), None),
        ("empty-unknown-project", req(work, projectKey="NO-SUCH-PROJECT"), None),
        ("empty-unknown-tenant", req(work, tenant_id=tenant + "-nobody"), None),
    ]
    if users:
        cases.append(("secured-user", req(secured_text, secured=True, expandDepth=2), Principal(users[0])))
    if groups:
        cases.append(("secured-group", req(secured_text, secured=True), Principal("someone", (groups[0],))))
    cases.append(("secured-no-acl-match", req(secured_text, secured=True), Principal("stranger")))
    for name in other:
        cases.append((f"tenant-{name[-12:]}", req(work, tenant_id=name, expandDepth=2), None))
    return cases


def test_parity_with_the_embedded_backend(loaded: Loaded) -> None:
    cases = parity_requests(loaded.dataset)
    totals: Counter[str] = Counter()
    for name, request, principal in cases:
        expected = search(loaded.embedded, request, principal)
        got = search(loaded.server, request, principal)
        assert got == expected, f"{name}: neo4j-weaviate differs from embedded"
        for key in ("hits", "episodes", "graphNodes", "graphEdges", "passages"):
            totals[key] += len(expected[key])
        if name.startswith("empty"):
            assert expected["hits"] == []
            assert expected["graphNodes"] == []
    # the comparison is not vacuous
    assert all(totals[key] > 0 for key in ("hits", "episodes", "graphNodes", "graphEdges", "passages")), totals


def test_parity_in_service_principal_mode(loaded: Loaded) -> None:
    embedded = SearchServices(backend=loaded.embedded.backend, service_principal=True)
    server = SearchServices(backend=loaded.server.backend, service_principal=True)
    tenant = loaded.tenants[0]
    secured_titles = [n.title for n in loaded.dataset.nodes if n.tenant_id == tenant and n.secured and n.title]
    request = {
        "queryText": secured_titles[0] if secured_titles else "token",
        "filter": {"tenantId": tenant, "secured": True},
        "options": {"topK": 30, "expandDepth": 2},
    }
    expected = search(embedded, request, None)
    assert search(server, request, None) == expected
    assert expected["hits"]
