"""A real ``langgraph dev`` server follows BRAIN_GRAPH_PROFILES: a graph of its own node types is
searched and indexed over the runs API, ``/graphql`` describes its kinds and node types, and a bad
profiles file stops the server with one line naming the key."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import httpx
import pytest
from langgraph_sdk import get_sync_client

from brain_graph.embedding.profiles import profiles_from_file
from brain_graph.embedding.profiles_file import read_profiles_file
from brain_graph.indexing.dataset import load_dataset, read_graph
from brain_graph.stores.embedded import STORE_FILE_NAME, EmbeddedStore
from tests.platform.devserver import (
    REPO_ROOT,
    STARTUP_TIMEOUT_S,
    DevServer,
    dev_command,
    free_port,
    run_dev_server,
    server_env,
    stop,
)

pytestmark = pytest.mark.server
EXAMPLES = REPO_ROOT / "examples" / "node_types"
PROFILES = EXAMPLES / "profiles.toml"


@pytest.fixture(scope="module")
def own_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevServer]:
    home = tmp_path_factory.mktemp("own-home")
    store = EmbeddedStore(home / STORE_FILE_NAME)
    load_dataset(read_graph(EXAMPLES / "graph.json"), store, profiles_from_file(read_profiles_file(PROFILES)))
    store.close()
    env = {"BRAIN_GRAPH_HOME": str(home), "BRAIN_GRAPH_AUTH": "insecure", "BRAIN_GRAPH_PROFILES": str(PROFILES)}
    with run_dev_server(REPO_ROOT / "langgraph.json", tmp_path_factory.mktemp("own-dev"), env) as server:
        yield server


def test_the_server_searches_and_indexes_by_the_profiles_file(own_server: DevServer) -> None:
    client = get_sync_client(url=own_server.url, api_key=None, timeout=60.0)
    try:
        request = {"queryText": "retried payment charged twice", "filter": {"tenantId": "lab", "secured": False}}
        result = cast(dict[str, Any], client.runs.wait(None, "brain_search", input=request))
        assert result["hits"][0]["nodeId"] == "ticket:OPS-9"
        assert result["filtersApplied"]["profileKinds"] == ["concept", "ops"]
        report = cast(dict[str, Any], client.runs.wait(None, "brain_index", input={"tenants": ["lab"]}))
        assert sorted(report["report"]["profiles"]) == ["concepts", "operations", "papers"]
        assert report["report"]["embedded"] == 0
    finally:
        client.close()


def test_graphql_describes_the_configured_kinds(own_server: DevServer) -> None:
    query = '{ __type(name: "BrainSearchFilterInput") { inputFields { name description } } }'
    response = httpx.post(f"{own_server.url}/graphql", json={"query": query}, timeout=30)
    fields = {f["name"]: f["description"] for f in response.json()["data"]["__type"]["inputFields"]}
    assert (
        fields["profileKindIn"] == "Embedding profile kinds to search: concept, ops or paper; default: concept and ops."
    )


def test_a_bad_profiles_file_stops_the_server_in_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "profiles.toml"
    bad.write_text(PROFILES.read_text(encoding="utf-8").replace('kind = "ops"', 'kind = "Ops"'), encoding="utf-8")
    env = {"BRAIN_GRAPH_HOME": str(tmp_path), "BRAIN_GRAPH_AUTH": "insecure", "BRAIN_GRAPH_PROFILES": str(bad)}
    process = subprocess.Popen(
        dev_command(REPO_ROOT / "langgraph.json", free_port()),
        cwd=tmp_path,
        env=server_env(env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        stdout, stderr = process.communicate(timeout=STARTUP_TIMEOUT_S)
    finally:
        stop(process)
    assert process.returncode != 0
    lines = [line for line in stderr.decode().splitlines() if "BRAIN_GRAPH_PROFILES" in line]
    assert lines == [
        f"brain-graph: the server cannot start: BRAIN_GRAPH_PROFILES: {bad}: profiles.operations.kind: String should "
        "match pattern '^[a-z][a-z0-9_-]{0,39}$' (got 'Ops')"
    ]
    assert "Traceback" not in stdout.decode(errors="replace") + stderr.decode(errors="replace")
