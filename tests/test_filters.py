"""Filters through the whole pipeline on the example graph: they constrain the hits (seeds) and not
the nodes graph expansion reaches; the result echoes the filter applied, warns when recency skips
nodes without timestamps, and the pack says what narrowed it."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from brain_graph.core.contracts import BrainSearchResult
from brain_graph.core.filters import SeedFilter, parse_timestamp
from brain_graph.graphs.search import build_graph
from brain_graph.indexing.dataset import Dataset
from brain_graph.pipeline.filters import deployment_clock
from brain_graph.pipeline.services import SearchServices
from brain_graph.stores.base import NodeRecord, node_facets


def run(services: SearchServices, query: str, options: dict[str, Any] | None = None, **filters: Any) -> dict[str, Any]:
    request = {
        "queryText": query,
        "filter": {"tenantId": "acme", "secured": False, **filters},
        "options": options or {},
    }
    return BrainSearchResult.model_validate(build_graph(services).invoke(request)).to_wire()


def records(dataset: Dataset) -> dict[str, NodeRecord]:
    return {node.id: node.to_record() for node in dataset.nodes if node.tenant_id == "acme"}


def passes(node: NodeRecord, seed_filter: SeedFilter) -> bool:
    return seed_filter.matches(node.project_key, node_facets(node))


def test_filters_constrain_the_hits_and_not_what_expansion_reaches(
    example_services: SearchServices, example_dataset: Dataset
) -> None:
    nodes = records(example_dataset)
    only = SeedFilter(tags=("idempotency",))
    result = run(example_services, "payment retries duplicate charges", {"expandDepth": 1}, tags=["Idempotency"])
    assert result["hits"]
    assert all(passes(nodes[hit["nodeId"]], only) for hit in result["hits"])
    reached = [c for c in result["candidates"] if c["reachedBy"] == "graph"]
    assert any(not passes(nodes[c["nodeId"]], only) for c in reached)  # a linked node without the tag
    flat = run(example_services, "payment retries duplicate charges", {"expandDepth": 0}, tags=["Idempotency"])
    assert all(passes(nodes[c["nodeId"]], only) for c in flat["candidates"])
    assert result["filtersApplied"]["tags"] == ["idempotency"]
    assert "**Filters:** tags `idempotency`\n" in result["promptPack"]["contextMarkdown"]
    unfiltered = run(example_services, "payment retries duplicate charges", {"expandDepth": 1})
    assert "**Filters:**" not in unfiltered["promptPack"]["contextMarkdown"]
    assert unfiltered["warnings"] == []


def test_node_types_choose_the_profiles_and_recency_warns_about_untimed_nodes(
    example_services: SearchServices, example_dataset: Dataset
) -> None:
    nodes = records(example_dataset)
    cutoff = "2026-05-01"
    docs = run(example_services, "runbook", {"expandDepth": 0}, nodeTypes=["cdm.doc"], updatedAfter=cutoff)
    recent = SeedFilter(node_types=("cdm.doc",), updated_after=parse_timestamp(cutoff))
    assert docs["hits"]
    assert all(passes(nodes[hit["nodeId"]], recent) for hit in docs["hits"])
    assert docs["warnings"] == []  # every embedded doc has an update time
    assert docs["filtersApplied"]["profileKinds"] == ["doc"]
    both = run(example_services, "runbook", nodeTypes=["cdm.doc", "cdm.work_item"], updatedAfter=cutoff)
    assert both["warnings"] == [
        {"code": "recency_untimed", "message": "recency filter skipped results lacking timestamps"}
    ]  # work items have none
    code = run(example_services, "token refresh", nodeTypes=["code.file"], namespaces=["SDK"])
    assert [hit["nodeId"] for hit in code["hits"]] == ["acme:code:sdk/mobile/TokenRefresher.kt"]
    assert code["filtersApplied"]["profileKinds"] == ["code"]


def test_max_age_counts_back_from_the_deployment_clock_and_is_echoed(
    example_services: SearchServices, example_dataset: Dataset
) -> None:
    nodes = records(example_dataset)
    clocked = replace(example_services, clock=deployment_clock("2026-07-15T00:00:00Z"))
    result = run(clocked, "design", {"expandDepth": 0}, nodeTypes=["cdm.doc"], maxAgeDays=80)
    applied = result["filtersApplied"]
    assert (applied["asOf"], applied["updatedAfter"], applied["maxAgeDays"]) == (
        "2026-07-15T00:00:00Z",
        "2026-04-26T00:00:00Z",
        80,
    )
    cutoff = SeedFilter(updated_after=parse_timestamp("2026-04-26"))
    assert result["hits"]
    assert all(passes(nodes[hit["nodeId"]], cutoff) for hit in result["hits"])
    replayed = run(
        example_services, "design", {"expandDepth": 0}, nodeTypes=["cdm.doc"], maxAgeDays=80, asOf=applied["asOf"]
    )
    assert replayed == result  # the echoed request time reproduces the result without the clock
