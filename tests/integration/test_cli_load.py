"""``brain-graph load`` into Neo4j + Weaviate is idempotent: same counts and results on every run."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, cast

import pytest

from brain_graph.core.contracts import BrainSearchResult
from brain_graph.embedding.profiles import default_profiles
from brain_graph.graphs.search import build_graph
from brain_graph.pipeline.services import SearchServices
from brain_graph.pipeline.state import BrainSearchInput
from tests.integration.conftest import parity_source, with_tenant_prefix
from tests.integration.servers import connect, run_cli_load, unique_prefix

pytestmark = pytest.mark.integration
LOADED = re.compile(r"loaded (\d+) nodes, (\d+) edges, (\d+) vectors")


def cli_load(path: Path, *extra: str) -> tuple[int, int, int]:
    done = run_cli_load(path, *extra)
    assert done.returncode == 0, done.stderr
    match = LOADED.search(done.stderr)
    assert match is not None, done.stderr
    assert "neo4j-weaviate backend" in done.stderr
    return int(match[1]), int(match[2]), int(match[3])


def test_cli_load_twice_gives_the_same_counts_and_results(tmp_path: Path) -> None:
    dataset = with_tenant_prefix(parity_source(), unique_prefix("cli"))
    tenants = sorted({node.tenant_id for node in dataset.nodes})
    path = tmp_path / "dataset.json"
    path.write_text(json.dumps(dataset.model_dump(by_alias=True)), encoding="utf-8")
    profiles = [p.profile_id for p in default_profiles().profiles]
    backend = connect()
    request: dict[str, Any] = {
        "queryText": next(n.title for n in dataset.nodes if n.node_type == "cdm.work_item" and n.title),
        "filter": {"tenantId": tenants[0], "secured": False},
        "options": {"expandDepth": 2},
    }

    def state() -> tuple[tuple[int, int], int, dict[str, Any]]:
        counts = [backend.admin.count(t) for t in tenants]
        stored = (sum(c.nodes for c in counts), sum(c.edges for c in counts))
        vectors = sum(c.vectors.get(p, 0) for p in profiles for c in counts)
        output = build_graph(SearchServices(backend=backend)).invoke(cast(BrainSearchInput, request))
        return stored, vectors, BrainSearchResult.model_validate(output).to_wire()

    try:
        first = cli_load(path)
        assert first[0] == len(dataset.nodes)
        assert first[1] == len(dataset.edges)
        after_first = state()
        assert after_first[0] == (first[0], first[1])
        assert after_first[1] == first[2]
        assert after_first[2]["hits"]

        assert cli_load(path) == first
        assert state() == after_first
        assert cli_load(path, "--merge") == first
        assert state() == after_first
    finally:
        try:
            backend.admin.drop_tenants(tenants)
        finally:
            backend.close()
