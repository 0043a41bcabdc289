"""Frozen prompt packs and results for example searches over the bundled example graph.

Snapshots change only on purpose: run ``pytest tests/test_snapshots.py --snapshot-update`` and read
the diff of ``tests/__snapshots__/test_snapshots/`` before committing it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from syrupy.assertion import SnapshotAssertion
from syrupy.extensions.json import JSONSnapshotExtension
from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode

from brain_graph.core.contracts import BrainSearchResult
from brain_graph.core.security import Principal
from brain_graph.graphs.search import BrainSearchGraph, build_graph
from brain_graph.pipeline.state import BrainSearchContext
from tests.helpers import make_store
from tests.unit.hostile_graph import hostile_dataset, hostile_request


class MarkdownSnapshotExtension(SingleFileSnapshotExtension):
    """One ``.md`` file per snapshot, so the frozen prompt pack reads as it renders."""

    file_extension = "md"
    _write_mode = WriteMode.TEXT

    def serialize(self, data: Any, **_: Any) -> str:
        return str(data)


ALICE = Principal("alice", ("security",))

CASES: dict[str, tuple[dict[str, Any], Principal | None]] = {
    "public-token-refresh-depth1": (
        {"queryText": "token refresh outage", "filter": {"tenantId": "acme", "secured": False}, "options": {"topK": 8}},
        None,
    ),
    "secured-postmortem-as-security-group": (
        {
            "queryText": "token refresh outage postmortem root cause",
            "filter": {"tenantId": "acme", "projectKey": "AUTH"},
            "options": {"topK": 6},
        },
        ALICE,
    ),
    "project-filter-depth2-episodes": (
        {
            "queryText": "duplicate card charges idempotency",
            "filter": {"tenantId": "acme", "projectKey": "PAY", "secured": False},
            "options": {"topK": 6, "expandDepth": 2, "maxNodes": 40, "maxEpisodes": 3},
        },
        None,
    ),
    "depth0-docs-only-no-episodes": (
        {
            "queryText": "runbook",
            "filter": {"tenantId": "acme", "profileKindIn": ["doc"], "secured": False},
            "options": {"topK": 5, "expandDepth": 0, "includeEpisodes": False},
        },
        None,
    ),
    "other-tenant-code-kind": (
        {
            "queryText": "token refresh",
            "filter": {"tenantId": "globex", "profileKindIn": ["code", "work"], "secured": False},
            "options": {"topK": 5, "includeSignals": False},
        },
        None,
    ),
    "empty-result-unknown-project": (
        {"queryText": "token refresh", "filter": {"tenantId": "acme", "projectKey": "NOPE", "secured": False}},
        None,
    ),
}


def run_case(graph: BrainSearchGraph, name: str) -> BrainSearchResult:
    raw, principal = CASES[name]
    output = graph.invoke(raw, context=BrainSearchContext(principal=principal))  # type: ignore[arg-type]
    return BrainSearchResult.model_validate(output)


@pytest.mark.parametrize("case", sorted(CASES))
def test_prompt_pack_markdown(example_graph: BrainSearchGraph, snapshot: SnapshotAssertion, case: str) -> None:
    pack = run_case(example_graph, case).prompt_pack
    assert pack.context_markdown == snapshot(extension_class=MarkdownSnapshotExtension)


@pytest.mark.parametrize("case", sorted(CASES))
def test_prompt_pack_citations(example_graph: BrainSearchGraph, snapshot: SnapshotAssertion, case: str) -> None:
    citations = [citation.to_wire() for citation in run_case(example_graph, case).prompt_pack.citations]
    assert citations == snapshot(extension_class=JSONSnapshotExtension)


@pytest.mark.parametrize("case", sorted(CASES))
def test_whole_result(example_graph: BrainSearchGraph, snapshot: SnapshotAssertion, case: str) -> None:
    assert run_case(example_graph, case).to_wire() == snapshot(extension_class=JSONSnapshotExtension)


def test_hostile_prompt_pack_markdown(tmp_path: Path, snapshot: SnapshotAssertion) -> None:
    """Text that tries to forge the pack's structure (``tests/unit/hostile_graph.py``), frozen as
    neutralised: fenced bodies, one-line escaped fields, code-span ids, unsafe urls left out."""
    output = build_graph(make_store(tmp_path, hostile_dataset())).invoke(hostile_request())  # type: ignore[arg-type]
    markdown = BrainSearchResult.model_validate(output).prompt_pack.context_markdown
    assert markdown == snapshot(extension_class=MarkdownSnapshotExtension)


def test_the_cases_cover_what_they_claim(example_graph: BrainSearchGraph) -> None:
    """Guards the snapshot cases themselves: each shows the feature it is named after."""
    results = {name: run_case(example_graph, name) for name in CASES}
    secured = results["secured-postmortem-as-security-group"]
    secured_ids = {n["id"] for n in json.loads(_example_text())["nodes"] if n["secured"]}
    assert secured_ids & {hit.node_id for hit in secured.hits}
    assert results["project-filter-depth2-episodes"].episodes
    assert results["depth0-docs-only-no-episodes"].graph_edges == [] or all(
        {e.from_node_id, e.to_node_id} <= {h.node_id for h in results["depth0-docs-only-no-episodes"].hits}
        for e in results["depth0-docs-only-no-episodes"].graph_edges
    )
    assert {h.profile_kind for h in results["depth0-docs-only-no-episodes"].hits} == {"doc"}
    assert results["empty-result-unknown-project"].hits == []
    for name, result in results.items():
        if name != "secured-postmortem-as-security-group":
            assert not secured_ids & {hit.node_id for hit in result.hits}


def _example_text() -> str:
    from brain_graph.indexing.dataset import example_dataset_path

    return example_dataset_path().read_text(encoding="utf-8")
