"""A graph of node types of its own (concepts, tickets, runbooks, papers) loaded, indexed and searched
through a profiles file alone: the CLI, Python and the GraphQL app, each from BRAIN_GRAPH_PROFILES."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from starlette.testclient import TestClient
from typer.testing import CliRunner

from brain_graph import BrainSearchResult, build_graph, build_services, search_input
from brain_graph.auth import Gate, JwtVerifier
from brain_graph.cli.main import app
from brain_graph.core.errors import InvalidRequestError
from brain_graph.graphs.search import BrainSearchGraph
from brain_graph.indexing.dataset import load_dataset, read_graph
from brain_graph.pipeline.config import load_settings
from brain_graph.serving import server
from brain_graph.serving.graphql import create_graphql_app
from brain_graph.serving.graphql.schema import build_schema, configured_docs
from brain_graph.stores.embedded import EmbeddedStore

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "node_types"
PROFILES = EXAMPLES / "profiles.toml"
GRAPH = EXAMPLES / "graph.json"
runner = CliRunner()


@pytest.fixture
def own_profiles(monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("BRAIN_GRAPH_PROFILES", str(PROFILES))
    return PROFILES


@pytest.fixture
def loaded(tmp_path: Path, own_profiles: Path) -> Path:
    store = tmp_path / "store.sqlite3"
    result = runner.invoke(app, ["load", str(GRAPH), "--store", str(store)])
    assert result.exit_code == 0, result.output
    assert result.stderr.startswith("loaded 6 nodes, 4 edges, 6 vectors")  # no warning
    return store


def _search(store: Path, query: str, *flags: str) -> dict[str, object]:
    result = runner.invoke(
        app, ["search", query, "--tenant", "lab", "--public", "--json", "--store", str(store), *flags]
    )
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)  # type: ignore[no-any-return]


def test_the_cli_checks_loads_indexes_and_searches_by_the_profiles_file(loaded: Path) -> None:
    checked = runner.invoke(app, ["profiles", "--check", str(GRAPH)])
    assert checked.exit_code == 0, checked.output
    assert "node type ticket: 2 node(s); operations embeds 2\n" in checked.stdout
    assert checked.stdout.endswith("ok: no warnings\n")
    indexed = runner.invoke(app, ["index", "--json", "--store", str(loaded)])
    assert json.loads(indexed.stdout)["embedded"] == 0  # the load embedded every covered node
    assert sorted(json.loads(indexed.stdout)["profiles"]) == ["concepts", "operations", "papers"]
    found = _search(loaded, "ingest queue overflow at night", "--kind", "ops")
    assert [hit["nodeId"] for hit in found["hits"]][:2] == ["ticket:OPS-7", "runbook:queue-full"]  # type: ignore[index]
    passages = {p["sourceNodeId"]: p["text"] for p in found["passages"]}  # type: ignore[attr-defined]
    assert passages["ticket:OPS-7"] == (
        "Ingest queue overflows during the nightly import\n\nThe ingest queue fills up at 02:00 and the importer "
        "drops messages.\n\nTurned on backpressure: the importer now waits when the queue is 80% full."
    )
    assert found["filtersApplied"]["profileKinds"] == ["ops"]  # type: ignore[index]


def test_a_kind_that_is_not_default_is_searched_by_name_or_node_type(loaded: Path) -> None:
    default = _search(loaded, "asynchronous stream processing")
    assert "paper:reactive-streams" not in [hit["nodeId"] for hit in default["hits"]]  # type: ignore[union-attr]
    by_type = _search(loaded, "asynchronous stream processing", "--node-type", "paper")
    assert [hit["nodeId"] for hit in by_type["hits"]] == ["paper:reactive-streams"]  # type: ignore[index]
    refused = runner.invoke(
        app, ["search", "x", "--tenant", "lab", "--public", "--node-type", "cdm.doc", "--store", str(loaded)]
    )
    assert refused.exit_code == 2
    assert "the searchable node types are ['concept', 'paper', 'runbook', 'ticket']" in refused.stderr


def test_loading_types_no_profile_declares_warns_in_one_line_per_kind(tmp_path: Path) -> None:
    result = runner.invoke(app, ["load", str(GRAPH), "--store", str(tmp_path / "s.sqlite3")])
    assert result.exit_code == 0, result.output
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning: ")]
    assert [line.split(":")[1].strip() for line in warnings] == [
        "node type(s) no profile embeds, not declared in the profiles file",
        "text field(s) no node has",
        "text field(s) no profile embeds and no passage shows",
    ]
    checked = runner.invoke(app, ["profiles", "--check", str(GRAPH)])
    assert checked.exit_code == 1
    assert checked.stderr.splitlines() == warnings
    assert checked.stdout.endswith("3 warning(s)\n")


def test_a_bad_profiles_file_is_one_line_and_exit_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bad = tmp_path / "profiles.toml"
    bad.write_text(PROFILES.read_text(encoding="utf-8").replace('"concept"]', '"concpt"]', 1), encoding="utf-8")
    monkeypatch.setenv("BRAIN_GRAPH_PROFILES", str(bad))
    for command in (["profiles", "--check"], ["load", str(GRAPH), "--store", str(tmp_path / "s.sqlite3")]):
        result = runner.invoke(app, command)
        assert result.exit_code == 2
        assert result.stderr.count("\n") == 1
        assert result.stderr.startswith(f"error: BRAIN_GRAPH_PROFILES: {bad}: profiles.concepts.nodeTypes[0]: 'concpt'")


def test_the_shipped_file_is_printed_and_checked_by_name(tmp_path: Path) -> None:
    shipped = runner.invoke(app, ["profiles", "--default"])
    assert shipped.exit_code == 0
    copy = tmp_path / "mine.toml"
    copy.write_text(shipped.stdout, encoding="utf-8")
    listed = runner.invoke(app, ["profiles", "--file", str(copy)])
    assert listed.exit_code == 0, listed.output
    assert listed.stdout.splitlines()[1:] == [
        "profile cdm.doc.body: kind doc (default); embeds cdm.doc from title, body (at most 1000 characters) with "
        "lexical-hash-v1 (dimension 512)",
        "profile cdm.work.summary: kind work (default); embeds cdm.work_item from title, summary (at most 1000 "
        "characters) with lexical-hash-v1 (dimension 512)",
        "profile code.file.summary: kind code; embeds code.file from title, summary (at most 1000 characters) with "
        "lexical-hash-v1 (dimension 512)",
    ]


@pytest.fixture
def own_graph(tmp_path: Path, own_profiles: Path, monkeypatch: pytest.MonkeyPatch) -> BrainSearchGraph:
    monkeypatch.setenv("BRAIN_GRAPH_BACKEND", "embedded")
    monkeypatch.setenv("BRAIN_GRAPH_STORE_PATH", str(tmp_path / "py.sqlite3"))
    services = build_services(load_settings())
    load_dataset(read_graph(GRAPH), services.backend, services.profiles)
    assert isinstance(services.backend, EmbeddedStore)
    return build_graph(services)


def test_python_searches_by_the_profiles_file(own_graph: BrainSearchGraph) -> None:
    result = BrainSearchResult.model_validate(
        own_graph.invoke(search_input("retried payment charged twice", "lab", secured=False))
    )
    assert result.hits[0].node_id == "ticket:OPS-9"
    assert result.filters_applied.profile_kinds == ["concept", "ops"]
    with pytest.raises(InvalidRequestError, match="unknown profile kind"):
        own_graph.invoke(search_input("x", "lab", secured=False, profile_kinds=["work"]))


def test_the_graphql_app_describes_and_searches_the_configured_profiles(own_graph: BrainSearchGraph) -> None:
    docs = configured_docs()
    assert docs == (
        "Embedding profile kinds to search: concept, ops or paper; default: concept and ops.",
        "Only retrieve hits of these node types (each one a searched profile embeds: concept, ticket, runbook or "
        "paper); null: every type the searched profiles embed.",
    )
    gate = Gate(JwtVerifier("unit-test-secret-of-at-least-32-chars"), None, insecure=True)
    client = TestClient(create_graphql_app(lambda: own_graph, lambda: gate))
    introspection = '{ __type(name: "BrainSearchFilterInput") { inputFields { name description } } }'
    fields = client.post("/", json={"query": introspection}).json()["data"]["__type"]["inputFields"]
    assert {f["name"]: f["description"] for f in fields}["profileKindIn"] == docs[0]
    query = '{ brainSearch(queryText: "backpressure", filter: {tenantId: "lab", secured: false}) { hits { nodeId } } }'
    hits = client.post("/", json={"query": query}).json()["data"]["brainSearch"]["hits"]
    assert hits[0] == {"nodeId": "concept:backpressure"}


def test_the_committed_descriptions_without_a_profiles_file(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("BRAIN_GRAPH_PROFILES", raising=False)
    schema = build_schema(configured_docs())
    committed = build_schema()
    assert schema.type_map["BrainSearchFilterInput"].fields["profileKindIn"].description == (  # type: ignore[union-attr]
        committed.type_map["BrainSearchFilterInput"].fields["profileKindIn"].description  # type: ignore[union-attr]
    )


def test_the_server_refuses_to_start_on_a_bad_profiles_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    refused: list[str] = []
    monkeypatch.setattr(server, "refuse_to_start", refused.append)
    monkeypatch.setenv("BRAIN_GRAPH_PROFILES", str(tmp_path / "nope.toml"))
    server.check_profiles()
    assert refused == [f"BRAIN_GRAPH_PROFILES: {tmp_path / 'nope.toml'}: no such file"]
    monkeypatch.setenv("BRAIN_GRAPH_PROFILES", str(PROFILES))
    server.check_profiles()
    assert len(refused) == 1
