"""A graph brain-graph did not write, searched through a mapping, gives the pack the embedded store
gives for the same data; and a search session writes nothing to it.

The example dataset is loaded into an embedded store, and the same nodes, relationships and vectors
are written with plain Cypher (the official driver) into a foreign schema on the real Neo4j server:
other labels, property keys and relationship types, the tenant in a property, ACLs in a list
property, vectors in Neo4j vector indexes (one per label, as neo4j-graphrag and LangChain keep them).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any, cast

import neo4j
import numpy as np
import pytest

from brain_graph import BrainSearchContext, SearchServices, build_graph, example_dataset_path, read_dataset
from brain_graph.auth.principals import as_principal
from brain_graph.browse.service import (
    NodeNotFoundError,
    SearchUnsupportedError,
    browse_scope,
    neighbour_page,
    node_search,
    node_view,
)
from brain_graph.core.errors import BackendUnavailableError, ConfigurationError
from brain_graph.core.security import AccessScope, Principal
from brain_graph.indexing.dataset import embed_nodes
from brain_graph.pipeline.state import BrainSearchInput
from brain_graph.stores.base import ChangeSet
from brain_graph.stores.mapped.backend import MappedBackend, ReadOnlyBackendError
from brain_graph.stores.mapped.mapping import Mapping, parse_mapping
from brain_graph.stores.neo4j_weaviate.neo4j.client import Neo4jClient
from tests.helpers import closed_port, make_store
from tests.integration.servers import server_settings, team_driver
from tests.platform.cases import SEARCHES

pytestmark = pytest.mark.integration

RUN = uuid.uuid4().hex[:6]
LABELS = {  # brain-graph node type -> the foreign label (unique to this run)
    "cdm.work_item": f"Ticket{RUN}",
    "cdm.doc": f"Page{RUN}",
    "code.file": f"SourceFile{RUN}",
    "signal.instance": f"Alert{RUN}",
    "cdm.person": f"Person{RUN}",
    "kg.cluster": f"Theme{RUN}",
}
RELATIONSHIPS = {  # brain-graph edge type -> the foreign relationship type
    "REFERENCES": "MENTIONS",
    "DEPENDS_ON": "NEEDS",
    "IMPLEMENTED_BY": "BUILT_IN",
    "DOCUMENTS": "DESCRIBES",
    "HAS_SIGNAL": "RAISED",
    "ASSIGNED_TO": "OWNED_BY",
    "IN_CLUSTER": "PART_OF",
}
TEXT = {"summary": "abstract", "description": "details", "body": "content"}
VECTORS = {  # profile -> (node type, vector property)
    "cdm.work.summary": ("cdm.work_item", "summaryVec"),
    "cdm.doc.body": ("cdm.doc", "bodyVec"),
    "code.file.summary": ("code.file", "codeVec"),
}
PROPERTIES = sorted(
    {"status", "priority", "assignee", "labels", "docKind", "owner", "language", "repo", "path"}
    | {"signalKind", "severity", "occurredAt", "clusterKind", "period", "email", "team"}
)


def mapping() -> Mapping:
    nodes = [
        {"label": label, "node_type": node_type, "text": TEXT}
        for node_type, label in LABELS.items()
        if node_type != "kg.cluster"
    ]
    return parse_mapping(
        {
            "name": "foreign-parity",
            "id_property": "uid",
            "tenant": {"property": "org"},
            "project_property": "proj",
            "title_properties": ["headline"],
            "url_property": "link",
            "secured_property": "restricted",
            "acl_property": "readers",
            "properties": PROPERTIES,
            "nodes": nodes,
            "edges": [{"type": rel, "as": edge} for edge, rel in RELATIONSHIPS.items() if edge != "IN_CLUSTER"],
            "clusters": {"label": LABELS["kg.cluster"], "membership": RELATIONSHIPS["IN_CLUSTER"], "text": TEXT},
            "vectors": [
                {"profile": profile, "source": "neo4j", "index": f"{prop}{RUN}", "property": prop}
                for profile, (_, prop) in VECTORS.items()
            ],
        }
    )


def write_foreign_graph(driver: neo4j.Driver, services: SearchServices) -> None:
    """The example dataset in the foreign schema, with the vectors the embedded store holds."""
    dataset = read_dataset(example_dataset_path())
    nodes, edges = dataset.node_records(), dataset.edge_records()
    vectors = embed_nodes(nodes, services.profiles)
    by_node: dict[tuple[str, str], dict[str, list[float]]] = {}
    for record in vectors:
        prop = VECTORS[record.profile_id][1]
        row = np.asarray(record.vector, dtype=np.float32).astype(np.float64).tolist()
        by_node.setdefault((record.tenant_id, record.node_id), {})[prop] = row
    for node_type, label in LABELS.items():
        rows = [
            {
                "uid": n.node_id,
                "org": n.tenant_id,
                "proj": n.project_key,
                "headline": n.title,
                "link": n.url,
                "restricted": n.secured,
                "readers": list(n.acl),
                **{TEXT[field]: value for field, value in n.text.items()},
                **dict(n.properties),
                **by_node.get((n.tenant_id, n.node_id), {}),
            }
            for n in nodes
            if n.node_type == node_type
        ]
        driver.execute_query(f"UNWIND $rows AS row CREATE (n:`{label}`) SET n = row", rows=rows)
        driver.execute_query(f"CREATE INDEX uid{label} IF NOT EXISTS FOR (n:`{label}`) ON (n.uid)")
    for edge_type, rel in RELATIONSHIPS.items():
        rows = [{"org": e.tenant_id, "a": e.from_node_id, "b": e.to_node_id} for e in edges if e.edge_type == edge_type]
        driver.execute_query(
            "UNWIND $rows AS row MATCH (a {uid: row.a, org: row.org}), (b {uid: row.b, org: row.org}) "
            f"WHERE any(l IN labels(a) WHERE l ENDS WITH $run) AND any(l IN labels(b) WHERE l ENDS WITH $run) "
            f"CREATE (a)-[:`{rel}`]->(b)",
            rows=rows,
            run=RUN,
        )
    dimension = services.profiles.profiles[0].dimension
    for node_type, prop in VECTORS.values():
        driver.execute_query(
            f"CREATE VECTOR INDEX `{prop}{RUN}` IF NOT EXISTS FOR (n:`{LABELS[node_type]}`) ON n.`{prop}` "
            "OPTIONS {indexConfig: {`vector.dimensions`: $dimension, `vector.similarity_function`: 'cosine'}}",
            dimension=dimension,
        )
    driver.execute_query("CALL db.awaitIndexes(300)")


def database_state(driver: neo4j.Driver) -> dict[str, Any]:
    """What a search session must leave as it was, of this test's graph (other tests share the server):
    its nodes with their labels and property keys, its relationships, and the indexes and
    constraints on its labels."""
    ours = "any(l IN labels(n) WHERE l ENDS WITH $run)"
    nodes = driver.execute_query(
        f"MATCH (n) WHERE {ours} RETURN n.org AS org, n.uid AS uid, labels(n) AS labels, keys(n) AS keys "
        "ORDER BY org, uid",
        run=RUN,
    ).records
    rels = driver.execute_query(
        f"MATCH (n)-[r]->(m) WHERE {ours} RETURN type(r) AS t, count(r) AS c ORDER BY t", run=RUN
    ).records
    schema = driver.execute_query(
        "SHOW INDEXES YIELD name, labelsOrTypes, properties, state "
        "WHERE any(l IN coalesce(labelsOrTypes, []) WHERE l ENDS WITH $run) "
        "RETURN name, labelsOrTypes, properties, state ORDER BY name",
        run=RUN,
    ).records
    constraints = driver.execute_query(
        "SHOW CONSTRAINTS YIELD name, labelsOrTypes WHERE any(l IN labelsOrTypes WHERE l ENDS WITH $run) "
        "RETURN name ORDER BY name",
        run=RUN,
    ).records
    return {
        "nodes": [(r["org"], r["uid"], sorted(r["labels"]), sorted(r["keys"])) for r in nodes],
        "relationships": [tuple(r) for r in rels],
        "indexes": [tuple(map(str, r)) for r in schema],
        "constraints": [tuple(r) for r in constraints],
    }


@pytest.fixture(scope="module")
def foreign(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[SearchServices, SearchServices, neo4j.Driver]]:
    """Embedded services over the example data, mapped services over the same data in a foreign schema."""
    settings = server_settings()
    embedded = replace(
        make_store(tmp_path_factory.mktemp("parity"), read_dataset(example_dataset_path())), retrieval_mode="vector"
    )  # vector mode: a mapped graph has no lexical documents
    driver = team_driver()
    client = Neo4jClient(uri=settings.neo4j_uri, user=settings.neo4j_user, password=settings.neo4j_password)
    try:
        write_foreign_graph(driver, embedded)
        backend = MappedBackend.with_neo4j_sources(mapping(), client)
        yield embedded, SearchServices(backend=backend, profiles=embedded.profiles), driver
    finally:
        for prop, _ in ((prop, node_type) for node_type, prop in VECTORS.values()):
            driver.execute_query(f"DROP INDEX `{prop}{RUN}` IF EXISTS")
        for label in LABELS.values():
            driver.execute_query(f"DROP INDEX uid{label} IF EXISTS")
            driver.execute_query(f"MATCH (n:`{label}`) DETACH DELETE n")
        client.close()
        driver.close()
        embedded.backend.close()


def run(services: SearchServices, request: dict[str, Any], principal: dict[str, Any] | None) -> dict[str, Any]:
    graph = build_graph(services)
    context = BrainSearchContext(principal=as_principal(principal))
    return cast(dict[str, Any], graph.invoke(cast(BrainSearchInput, request), context=context))


@pytest.mark.parametrize("name", sorted(SEARCHES))
def test_the_mapped_pack_is_the_embedded_pack(
    foreign: tuple[SearchServices, SearchServices, neo4j.Driver], name: str
) -> None:
    embedded, mapped, _ = foreign
    request, principal = SEARCHES[name]
    expected = run(embedded, request, principal)
    got = run(mapped, request, principal)
    assert json.dumps(got, sort_keys=True) == json.dumps(expected, sort_keys=True)
    if name != "empty":
        assert got["promptPack"]["citations"]


def test_deeper_searches_agree_too(foreign: tuple[SearchServices, SearchServices, neo4j.Driver]) -> None:
    embedded, mapped, _ = foreign
    for query in ("card charged twice", "login rate limit lockout", "deploy rollback"):
        request = {
            "queryText": query,
            "filter": {"tenantId": "acme", "secured": True},
            "options": {"expandDepth": 3, "topK": 30},
        }
        principal = {"principalId": "alice", "groups": ["security", "payments-leads"]}
        assert run(mapped, request, principal) == run(embedded, request, principal)


def test_a_search_session_writes_nothing(foreign: tuple[SearchServices, SearchServices, neo4j.Driver]) -> None:
    _, mapped, driver = foreign
    before = database_state(driver)
    for request, principal in SEARCHES.values():
        run(mapped, request, principal)
    backend = mapped.backend
    with pytest.raises(ReadOnlyBackendError, match=r"^mapping 'foreign-parity' is read-only"):
        backend.apply(ChangeSet())
    with pytest.raises(ReadOnlyBackendError, match="loading a dataset"):
        backend.load([], [], [], [], replace=True)
    with pytest.raises(ReadOnlyBackendError, match="indexing"):
        backend.index_store.tenants()
    assert database_state(driver) == before


def test_a_missing_vector_index_is_one_line_naming_the_key(
    foreign: tuple[SearchServices, SearchServices, neo4j.Driver], tmp_path: Path
) -> None:
    _, mapped, _ = foreign
    wrong = mapping().model_copy(update={"vectors": [mapping().vectors[0].model_copy(update={"index": f"nope{RUN}"})]})
    backend = MappedBackend.with_neo4j_sources(wrong, cast(MappedBackend, mapped.backend).neo4j)
    services = SearchServices(backend=backend, profiles=mapped.profiles)
    request = {"queryText": "token refresh", "filter": {"tenantId": "acme", "secured": False}}
    with pytest.raises(
        ConfigurationError, match=rf"^vectors\.cdm\.work\.summary\.index: Neo4j has no vector index 'nope{RUN}'"
    ):
        run(services, request, None)


def toml_value(value: Any) -> str:
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{key} = {toml_value(item)}" for key, item in value.items()) + " }"
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(item) for item in value) + "]"
    return json.dumps(value)


def mapping_file(path: Path) -> Path:
    """This test's mapping as a TOML file, as a team would write it."""
    data = mapping().model_dump(by_alias=True, exclude_none=True)
    lines = [f"{key} = {toml_value(value)}" for key, value in data.items() if not isinstance(value, list | dict)]
    lines += [f"{key} = {toml_value(data[key])}" for key in ("tenant", "title_properties", "properties")]
    lines += [f"clusters = {toml_value(data['clusters'])}"]
    for table in ("nodes", "edges", "vectors"):
        for entry in data[table]:
            lines += [f"[[{table}]]", *(f"{key} = {toml_value(value)}" for key, value in entry.items())]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_brain_graph_mapping_makes_the_cli_search_through_the_mapping(
    foreign: tuple[SearchServices, SearchServices, neo4j.Driver], tmp_path: Path
) -> None:
    embedded, _, _ = foreign
    env = {**os.environ, "BRAIN_GRAPH_MAPPING": str(mapping_file(tmp_path / "team.toml"))}
    env.pop("BRAIN_GRAPH_BACKEND", None)
    command = [str(Path(sys.executable).parent / "brain-graph"), "search", "token refresh outage"]
    mapped = subprocess.run(
        [*command, "--tenant", "acme", "--public", "--json"], env=env, capture_output=True, text=True
    )
    assert mapped.returncode == 0, mapped.stderr
    expected = run(
        embedded, {"queryText": "token refresh outage", "filter": {"tenantId": "acme", "secured": False}}, None
    )
    assert json.loads(mapped.stdout)["promptPack"] == expected["promptPack"]
    nobody = subprocess.run([*command, "--tenant", "initech", "--public"], env=env, capture_output=True, text=True)
    assert nobody.returncode == 0, nobody.stderr
    assert "holds no data in the mapped backend; check the mapping's tenant settings" in nobody.stderr
    loading = subprocess.run(
        [str(Path(sys.executable).parent / "brain-graph"), "load", "--example"], env=env, capture_output=True, text=True
    )
    assert loading.returncode != 0
    assert loading.stderr.strip().count("\n") == 0
    assert "mapping 'foreign-parity' is read-only" in loading.stderr


@pytest.mark.parametrize(("depth", "statements"), [(0, 4), (1, 4), (2, 5)])
def test_round_trips_do_not_depend_on_top_k(
    foreign: tuple[SearchServices, SearchServices, neo4j.Driver], depth: int, statements: int
) -> None:
    """Neo4j statements per search over P = 2 Neo4j-index profiles, as the backend's docstring counts
    them: the seeds 2 (the candidates of every profile; the hits' metadata and links with the reached
    nodes' vectors), each hop after the first 1 (its links with the reached nodes' vectors), the
    context 2: 4, 4 and 5 at depth 0, 1 and 2, whatever topK and P."""
    _, mapped, _ = foreign
    backend = cast(MappedBackend, mapped.backend)

    def counted(top_k: int) -> tuple[int, dict[str, Any]]:
        request = {
            "queryText": "token refresh outage",
            "filter": {"tenantId": "acme", "secured": False, "profileKindIn": ["work", "doc"]},
            "options": {"topK": top_k, "expandDepth": depth, "maxNodes": 1000},
        }
        before = backend.round_trips()["neo4j"]
        output = run(mapped, request, None)
        return backend.round_trips()["neo4j"] - before, output

    counted(5)  # the vector indexes' dimensions are read once per backend
    small, small_out = counted(5)
    large, large_out = counted(50)
    assert len(small_out["hits"]) == 5
    assert len(large_out["hits"]) > 30
    assert small == large == statements


def test_a_neo4j_that_is_down_fails_the_search_within_its_timeout() -> None:
    client = Neo4jClient(uri=f"bolt://127.0.0.1:{closed_port()}", user="neo4j", password="x", timeout_s=2.0)
    services = SearchServices(backend=MappedBackend.with_neo4j_sources(mapping(), client))
    request = {"queryText": "token refresh", "filter": {"tenantId": "acme", "secured": False}}
    started = time.monotonic()
    with pytest.raises(BackendUnavailableError, match="neo4j"):
        run(services, request, None)
    assert time.monotonic() - started < 30  # the 2 s timeout, with room for a busy machine


@pytest.mark.parametrize("max_degree", [50, 2])
def test_the_graph_stores_links_are_the_embedded_stores(
    foreign: tuple[SearchServices, SearchServices, neo4j.Driver], max_degree: int
) -> None:
    """``GraphStore.links`` itself (the searches read links through ``SearchReads``): the same
    neighbourhood, degrees and hubs included, for visible, secured, other-tenant and unknown ids."""
    embedded, mapped, _ = foreign
    dataset = read_dataset(example_dataset_path())
    ids = [*sorted({node.id for node in dataset.nodes}), "nope"]
    types = sorted({edge.edge_type for edge in dataset.edges})
    for scope in (AccessScope("acme"), AccessScope("acme", all_secured=True), AccessScope("globex")):
        expected = embedded.backend.graph_store.links(ids, scope=scope, edge_types=types, max_degree=max_degree)
        got = mapped.backend.graph_store.links(ids, scope=scope, edge_types=types, max_degree=max_degree)
        assert got == expected
        assert got.links or scope.tenant_id == "globex"


def without_facets(value: Any) -> Any:
    """``value`` without the nodes' tags and update times, which this foreign graph does not keep."""
    if isinstance(value, dict):
        return {key: without_facets(item) for key, item in value.items() if key not in ("tags", "updatedAt")}
    if isinstance(value, list | tuple):
        return [without_facets(item) for item in value]
    return value


def test_the_graph_api_answers_as_on_the_embedded_store_and_writes_nothing(
    foreign: tuple[SearchServices, SearchServices, neo4j.Driver],
) -> None:
    """Every node's view and every page of its neighbours, through the mapping, for a public and a
    secured caller; node search is refused (no lexical documents); the database is unchanged."""
    embedded, mapped, driver = foreign
    before = database_state(driver)
    dataset = read_dataset(example_dataset_path())
    for principal in (None, Principal("alice", ("security", "payments-leads"))):
        for tenant in sorted({node.tenant_id for node in dataset.nodes}):
            scopes = [
                browse_scope(s, tenant, secured=principal is not None, principal=principal) for s in (embedded, mapped)
            ]
            for node_id in sorted(node.id for node in dataset.nodes if node.tenant_id == tenant):
                answers = []
                for services, scope in zip((embedded, mapped), scopes, strict=True):
                    try:
                        pages, cursor = [], None
                        while True:
                            page = neighbour_page(services, scope, node_id, limit=5, cursor=cursor)
                            pages.append(page)
                            if (cursor := page.get("cursor")) is None:
                                break
                        answers.append(
                            without_facets((node_view(services, scope, node_id, relationships="all"), pages))
                        )
                    except NodeNotFoundError as error:
                        answers.append(("not found", str(error)))
                assert answers[0] == answers[1], node_id
    with pytest.raises(SearchUnsupportedError, match="no lexical index"):
        node_search(mapped, browse_scope(mapped, "acme", secured=False, principal=None), "duplicate charges")
    assert database_state(driver) == before
