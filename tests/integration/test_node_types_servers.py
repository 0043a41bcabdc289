"""A graph of its own node types on Neo4j + Weaviate through BRAIN_GRAPH_PROFILES alone: the CLI loads
it, searches give what the embedded store gives, and a passage field of a custom type longer than a
stored head is read from the heads (every text field has one)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from brain_graph.core.contracts import BrainSearchResult
from brain_graph.core.passage_heads import HEAD_CHARS, HEADS_PREFIX
from brain_graph.core.security import AccessScope
from brain_graph.graphs.search import build_graph
from brain_graph.indexing.dataset import load_dataset, read_graph
from brain_graph.pipeline.config import build_services, load_settings
from brain_graph.pipeline.state import search_input
from brain_graph.stores.access import cypher_params
from brain_graph.stores.embedded import EmbeddedStore
from brain_graph.stores.neo4j_weaviate.neo4j import cypher
from brain_graph.stores.neo4j_weaviate.neo4j.graph import heads_params
from tests.integration.servers import connect, run_cli_load, unique_prefix

pytestmark = pytest.mark.integration
EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "node_types"


def test_own_node_types_on_the_servers_search_as_on_the_embedded_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BRAIN_GRAPH_PROFILES", str(EXAMPLES / "profiles.toml"))
    tenant = unique_prefix("types") + "lab"
    data = json.loads((EXAMPLES / "graph.json").read_text(encoding="utf-8"))
    for item in [*data["nodes"], *data["edges"]]:
        item["tenantId"] = tenant
    long_steps = " ".join(f"step {i}: drain the ingest queue partition {i}." for i in range(600))
    assert len(long_steps) > 2 * HEAD_CHARS
    data["nodes"].append(
        {
            "tenantId": tenant,
            "id": "runbook:drain",
            "nodeType": "runbook",
            "title": "Runbook: drain the ingest queue",
            "text": {"procedure": long_steps},
        }
    )
    path = tmp_path / "graph.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    done = run_cli_load(path)
    assert done.returncode == 0, done.stderr
    assert "warning" not in done.stderr
    backend = connect()
    try:
        servers = build_services(load_settings(), backend=backend)
        embedded = build_services(load_settings(), backend=EmbeddedStore(tmp_path / "store.sqlite3"))
        load_dataset(read_graph(path), embedded.backend, embedded.profiles)
        for query, kinds in (("drain the ingest queue", None), ("stream processing", ["paper"])):
            request = search_input(query, tenant, secured=False, profile_kinds=kinds)
            on_servers = BrainSearchResult.model_validate(build_graph(servers).invoke(request)).to_wire()
            on_file = BrainSearchResult.model_validate(build_graph(embedded).invoke(request)).to_wire()
            assert on_servers == on_file
            assert on_servers["hits"]
        params = {**cypher_params(AccessScope(tenant)), "nodeIds": ["runbook:drain"], **heads_params(False)}
        (row,) = backend.neo4j.read(cypher.GET_PASSAGE_HEADS, params)
        _, _, heads, text = row["source"]
        assert text is None  # Neo4j sends the stored heads, the custom field's among them
        assert isinstance(heads, str)
        assert heads.startswith(HEADS_PREFIX)
        assert '"procedure"' in heads
        drained = build_graph(servers).invoke(search_input("Runbook: drain the ingest queue", tenant, secured=False))
        passage = next(p for p in drained["passages"] if p["sourceNodeId"] == "runbook:drain")
        assert passage["text"].startswith("Runbook: drain the ingest queue\n\nstep 0: drain")
        assert len(passage["text"]) <= 800 + 40  # the title and the field's own bound (maxChars 800)
    finally:
        try:
            backend.admin.drop_tenants([tenant])
        finally:
            backend.close()
