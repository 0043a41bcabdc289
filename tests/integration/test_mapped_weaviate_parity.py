"""A graph and vectors brain-graph did not write, in Neo4j and Weaviate, searched through a mapping,
give the pack the embedded store gives for the same data; a search session writes nothing to either;
a Weaviate that cannot be reached fails a search within the timeout.

The example dataset is loaded into an embedded store. "The team's" copy of it is written here with
the official clients: its nodes and relationships with plain Cypher into a foreign schema (other
labels, property keys and relationship types, the tenant in a property, ACLs in a list property, no
vectors on the nodes), and the vectors the embedded store holds (the float32 values ``embed_nodes``
gives) into Weaviate collections, one per profile, each object naming its node in a
``field``-tokenized property. Two shapes of Weaviate, one mapping file each:

* ``tenant-property``: no multi-tenancy, the tenant in a property of each object, and two named
  vectors per collection (the mapping names ``summary``; the other holds other values);
* ``multi-tenancy``: Weaviate's native multi-tenancy, Weaviate tenants ``team_{tenant}``, the
  collection's default vector.

Names are unique to the run; the collections and the nodes are deleted at the end.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, cast

import neo4j
import numpy as np
import pytest
import weaviate
from starlette.applications import Starlette
from starlette.routing import Route
from starlette.testclient import TestClient
from weaviate.classes.config import Configure, DataType, Property, Tokenization
from weaviate.classes.data import DataObject
from weaviate.classes.tenants import Tenant
from weaviate.util import generate_uuid5

from brain_graph import BrainSearchContext, SearchServices, build_graph, example_dataset_path, read_dataset
from brain_graph.auth.principals import as_principal
from brain_graph.core.environment import read_settings
from brain_graph.core.errors import BackendUnavailableError
from brain_graph.indexing.dataset import embed_nodes
from brain_graph.pipeline.state import BrainSearchInput
from brain_graph.serving.server import readiness_endpoint
from brain_graph.stores.mapped.backend import MappedBackend, MappedSettings, from_settings, weaviate_parameters
from brain_graph.stores.mapped.mapping import Mapping, WeaviateVectors, read_mapping
from brain_graph.stores.mapped.weaviate_source import WeaviateSource
from brain_graph.stores.neo4j_weaviate.neo4j.client import Neo4jClient
from tests.helpers import closed_port, make_store
from tests.integration.servers import server_settings, team_driver, team_weaviate
from tests.platform.cases import SEARCHES

pytestmark = pytest.mark.integration

RUN = uuid.uuid4().hex[:8]
SHAPES = ("tenant-property", "multi-tenancy")
LABELS = {  # brain-graph node type -> the team's label (unique to this run)
    "cdm.work_item": f"Issue{RUN}",
    "cdm.doc": f"WikiPage{RUN}",
    "code.file": f"CodeFile{RUN}",
    "signal.instance": f"Incident{RUN}",
    "cdm.person": f"Member{RUN}",
    "kg.cluster": f"Topic{RUN}",
}
RELATIONSHIPS = {  # brain-graph edge type -> the team's relationship type
    "REFERENCES": "CITES",
    "DEPENDS_ON": "REQUIRES",
    "IMPLEMENTED_BY": "CODED_IN",
    "DOCUMENTS": "EXPLAINS",
    "HAS_SIGNAL": "TRIGGERED",
    "ASSIGNED_TO": "HANDLED_BY",
    "IN_CLUSTER": "IN_TOPIC",
}
TEXT = {"summary": "synopsis", "description": "notes", "body": "markdown"}
COLLECTIONS = {  # profile -> the Weaviate collection of each shape
    "cdm.work.summary": {"tenant-property": f"TeamIssues{RUN}", "multi-tenancy": f"TenantIssues{RUN}"},
    "cdm.doc.body": {"tenant-property": f"TeamPages{RUN}", "multi-tenancy": f"TenantPages{RUN}"},
    "code.file.summary": {"tenant-property": f"TeamCode{RUN}", "multi-tenancy": f"TenantCode{RUN}"},
}
OURS = sorted(name for names in COLLECTIONS.values() for name in names.values())
PROPERTIES = sorted(
    {"status", "priority", "assignee", "labels", "docKind", "owner", "language", "repo", "path"}
    | {"signalKind", "severity", "occurredAt", "clusterKind", "period", "email", "team"}
)
TIMEOUT = 2.0  # BRAIN_GRAPH_BACKEND_TIMEOUT of the backends pointed at an unreachable Weaviate
SLACK = 2.0  # allowed on top of it (thread hand-offs, a busy machine)


def toml(value: Any) -> str:
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{key} = {toml(item)}" for key, item in value.items()) + " }"
    return json.dumps(value)


def mapping_text(shape: str) -> str:
    """The mapping file of ``shape``, as a team would write it."""
    lines = [
        f'name = "team-{shape}"',
        'id_property = "ref"',
        'tenant = { property = "space" }',
        'project_property = "product"',
        'title_properties = ["caption"]',
        'url_property = "href"',
        'secured_property = "private"',
        'acl_property = "allowed"',
        f"properties = {toml(PROPERTIES)}",
    ]
    for node_type, label in LABELS.items():
        if node_type != "kg.cluster":
            lines += [
                "",
                "[[nodes]]",
                f"label = {toml(label)}",
                f"node_type = {toml(node_type)}",
                f"text = {toml(TEXT)}",
            ]
    for edge_type, rel in RELATIONSHIPS.items():
        if edge_type != "IN_CLUSTER":
            lines += ["", "[[edges]]", f"type = {toml(rel)}", f"as = {toml(edge_type)}"]
    lines += [
        "",
        "[clusters]",
        f"label = {toml(LABELS['kg.cluster'])}",
        f"membership = {toml(RELATIONSHIPS['IN_CLUSTER'])}",
        f"text = {toml(TEXT)}",
    ]
    for profile, names in COLLECTIONS.items():
        lines += [
            "",
            "[[vectors]]",
            f"profile = {toml(profile)}",
            'source = "weaviate"',
            f"collection = {toml(names[shape])}",
            'id_property = "nodeKey"',
        ]
        if shape == "tenant-property":
            lines += ['tenant_property = "workspace"', 'vector = "summary"']
        else:
            lines += ['tenant_name = "team_{tenant}"']
    return "\n".join(lines) + "\n"


# -- the team's data ------------------------------------------------------------------------------------


def write_graph(driver: neo4j.Driver, services: SearchServices) -> None:
    """The example dataset's nodes and relationships in the foreign schema, without vectors."""
    dataset = read_dataset(example_dataset_path())
    nodes, edges = dataset.node_records(), dataset.edge_records()
    label_of = {(n.tenant_id, n.node_id): LABELS[n.node_type] for n in nodes}
    for node_type, label in LABELS.items():
        rows = [
            {
                "ref": n.node_id,
                "space": n.tenant_id,
                "product": n.project_key,
                "caption": n.title,
                "href": n.url,
                "private": n.secured,
                "allowed": list(n.acl),
                **{TEXT[field]: value for field, value in n.text.items()},
                **dict(n.properties),
            }
            for n in nodes
            if n.node_type == node_type
        ]
        driver.execute_query(f"CREATE INDEX ref{label} IF NOT EXISTS FOR (n:`{label}`) ON (n.ref)")
        driver.execute_query(f"UNWIND $rows AS row CREATE (n:`{label}`) SET n = row", rows=rows)
    driver.execute_query("CALL db.awaitIndexes(300)")
    groups: dict[tuple[str, str, str], list[dict[str, str]]] = {}
    for e in edges:
        ends = (label_of[(e.tenant_id, e.from_node_id)], label_of[(e.tenant_id, e.to_node_id)])
        row = {"space": e.tenant_id, "a": e.from_node_id, "b": e.to_node_id}
        groups.setdefault((RELATIONSHIPS[e.edge_type], *ends), []).append(row)
    for (rel, start, end), rows in sorted(groups.items()):
        driver.execute_query(
            f"UNWIND $rows AS row MATCH (a:`{start}` {{ref: row.a, space: row.space}}), "
            f"(b:`{end}` {{ref: row.b, space: row.space}}) CREATE (a)-[:`{rel}`]->(b)",
            rows=rows,
        )


@dataclass(frozen=True)
class Stored:
    """A vector as the embedded store holds it."""

    tenant: str
    node_id: str
    vector: list[float]  # float32 values, as Python floats


def stored_vectors(services: SearchServices) -> dict[str, list[Stored]]:
    """Per profile, the vectors ``embed_nodes`` gives the example dataset (float32)."""
    found: dict[str, list[Stored]] = {profile: [] for profile in COLLECTIONS}
    for record in embed_nodes(read_dataset(example_dataset_path()).node_records(), services.profiles):
        row = np.asarray(record.vector, dtype=np.float32).astype(np.float64).tolist()
        found[record.profile_id].append(Stored(record.tenant_id, record.node_id, row))
    return found


def write_collections(client: weaviate.WeaviateClient, vectors: dict[str, list[Stored]]) -> None:
    """One collection per profile and shape, written as a team would with the official client."""
    for profile, names in COLLECTIONS.items():
        stored = vectors[profile]
        # (1) no multi-tenancy: the tenant in a property, two named vectors (only "summary" is searched)
        client.collections.create(
            names["tenant-property"],
            properties=[
                Property(name="nodeKey", data_type=DataType.TEXT, tokenization=Tokenization.FIELD),
                Property(name="workspace", data_type=DataType.TEXT, tokenization=Tokenization.FIELD),
            ],
            vector_config=[
                Configure.Vectors.self_provided(name="summary"),
                Configure.Vectors.self_provided(name="headline"),
            ],
        )
        objects = [
            DataObject(
                properties={"nodeKey": s.node_id, "workspace": s.tenant},
                vector={"summary": s.vector, "headline": [-x for x in s.vector]},
                uuid=generate_uuid5(f"{s.tenant}/{s.node_id}"),
            )
            for s in stored
        ]
        assert not client.collections.use(names["tenant-property"]).data.insert_many(objects).has_errors
        # (2) native multi-tenancy, Weaviate tenants team_{tenant}, the default vector
        client.collections.create(
            names["multi-tenancy"],
            properties=[Property(name="nodeKey", data_type=DataType.TEXT, tokenization=Tokenization.FIELD)],
            # a write through a tenant that does not exist would create it, and show
            multi_tenancy_config=Configure.multi_tenancy(enabled=True, auto_tenant_creation=True),
            vector_config=Configure.Vectors.self_provided(),
        )
        collection = client.collections.use(names["multi-tenancy"])
        tenants = sorted({s.tenant for s in stored})
        collection.tenants.create([Tenant(name=f"team_{tenant}") for tenant in tenants])
        for tenant in tenants:
            objects = [
                DataObject(properties={"nodeKey": s.node_id}, vector=s.vector, uuid=generate_uuid5(s.node_id))
                for s in stored
                if s.tenant == tenant
            ]
            assert not collection.with_tenant(f"team_{tenant}").data.insert_many(objects).has_errors


# -- what a search session must leave as it was ------------------------------------------------------------


def weaviate_state(client: weaviate.WeaviateClient) -> dict[str, Any]:
    """Our collections: present, config, tenants, object counts (per tenant)."""
    names = sorted(name for name in client.collections.list_all(simple=True) if name in OURS)
    found: dict[str, Any] = {"collections": names}
    for name in names:
        collection = client.collections.use(name)
        config = collection.config.get()
        found[name] = {"config": config.to_dict()}
        if config.multi_tenancy_config.enabled:
            tenants = collection.tenants.get()
            found[name]["tenants"] = {t: str(tenants[t].activity_status) for t in sorted(tenants)}
            found[name]["counts"] = {
                t: collection.with_tenant(t).aggregate.over_all(total_count=True).total_count for t in sorted(tenants)
            }
        else:
            found[name]["counts"] = collection.aggregate.over_all(total_count=True).total_count
    return found


def neo4j_state(driver: neo4j.Driver) -> dict[str, Any]:
    """This test's graph (other tests share the server): every node with its labels and properties,
    every relationship, and the indexes and constraints on its labels."""
    ours = "any(l IN labels(n) WHERE l ENDS WITH $run)"
    nodes = driver.execute_query(
        f"MATCH (n) WHERE {ours} RETURN labels(n) AS labels, properties(n) AS props ORDER BY n.space, n.ref", run=RUN
    ).records
    rels = driver.execute_query(
        f"MATCH (n)-[r]->(m) WHERE {ours} RETURN n.ref AS a, type(r) AS t, m.ref AS b, properties(r) AS props "
        "ORDER BY n.space, a, t, b",
        run=RUN,
    ).records
    indexes = driver.execute_query(
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
        "nodes": [json.dumps([sorted(r["labels"]), r["props"]], sort_keys=True) for r in nodes],
        "relationships": [json.dumps(list(r), sort_keys=True) for r in rels],
        "indexes": [tuple(map(str, r)) for r in indexes],
        "constraints": [tuple(r) for r in constraints],
    }


# -- fixtures --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Team:
    """The embedded services over the example data, the team's clients, and the mapping files."""

    embedded: SearchServices
    driver: neo4j.Driver
    weaviate: weaviate.WeaviateClient
    files: dict[str, Path]


@pytest.fixture(scope="module")
def team(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Team]:
    folder = tmp_path_factory.mktemp("mapped-weaviate")
    embedded = replace(
        make_store(folder, read_dataset(example_dataset_path())), retrieval_mode="vector"
    )  # vector mode: a mapped graph has no lexical documents
    driver = team_driver()
    client = team_weaviate()
    files = {}
    for shape in SHAPES:
        files[shape] = folder / f"team-{shape}.toml"
        files[shape].write_text(mapping_text(shape), encoding="utf-8")
    try:
        write_graph(driver, embedded)
        write_collections(client, stored_vectors(embedded))
        yield Team(embedded, driver, client, files)
    finally:
        try:
            for name in OURS:
                client.collections.delete(name)
            for label in LABELS.values():
                driver.execute_query(f"MATCH (n:`{label}`) DETACH DELETE n")
                driver.execute_query(f"DROP INDEX ref{label} IF EXISTS")
        finally:
            client.close()
            driver.close()
            embedded.backend.close()


def connection(**overrides: Any) -> dict[str, Any]:
    """The connection keywords of a WeaviateSource on the real Weaviate (``overrides`` win)."""
    return {**weaviate_parameters(server_settings()), "timeout_s": 5.0, **overrides}


def built(team: Team, shape: str, **weaviate: Any) -> MappedBackend:
    """The mapped backend of ``shape``: the tenant-property shape built in code
    (``with_neo4j_sources`` plus a ``WeaviateSource`` per profile), the multi-tenant one from the
    settings and the mapping file, as ``BRAIN_GRAPH_MAPPING`` builds it (``weaviate``: connection
    keywords overriding the real server's)."""
    if shape == "tenant-property":
        mapping = read_mapping(team.files[shape])
        settings = server_settings()
        client = Neo4jClient(uri=settings.neo4j_uri, user=settings.neo4j_user, password=settings.neo4j_password)
        sources = [
            WeaviateSource.from_mapping(mapping, config, **connection(**weaviate))
            for config in mapping.vectors
            if isinstance(config, WeaviateVectors)
        ]
        return MappedBackend.with_neo4j_sources(mapping, client, weaviate_sources=sources)
    overrides = {f"weaviate_{key}": value for key, value in weaviate.items() if key != "timeout_s"}
    if "timeout_s" in weaviate:
        overrides["timeout_s"] = weaviate["timeout_s"]
    return from_settings(read_settings(MappedSettings, mapping=team.files[shape], **overrides))


@pytest.fixture(scope="module", params=SHAPES)
def mapped(request: pytest.FixtureRequest, team: Team) -> Iterator[SearchServices]:
    backend = built(team, request.param)
    try:
        yield SearchServices(backend=backend, profiles=team.embedded.profiles)
    finally:
        backend.close()


def run(services: SearchServices, request: dict[str, Any], principal: dict[str, Any] | None) -> dict[str, Any]:
    graph = build_graph(services)
    context = BrainSearchContext(principal=as_principal(principal))
    return cast(dict[str, Any], graph.invoke(cast(BrainSearchInput, request), context=context))


def same_bytes(got: dict[str, Any], expected: dict[str, Any]) -> None:
    assert json.dumps(got, sort_keys=True) == json.dumps(expected, sort_keys=True)


# -- parity ----------------------------------------------------------------------------------------------


def test_the_mappings_read_as_written(team: Team) -> None:
    for shape in SHAPES:
        mapping: Mapping = read_mapping(team.files[shape])
        assert mapping.name == f"team-{shape}"
        assert [config.profile for config in mapping.vectors] == list(COLLECTIONS)
        assert all(isinstance(config, WeaviateVectors) for config in mapping.vectors)


@pytest.mark.parametrize("name", sorted(SEARCHES))
def test_the_mapped_pack_is_the_embedded_pack(team: Team, mapped: SearchServices, name: str) -> None:
    request, principal = SEARCHES[name]
    expected = run(team.embedded, request, principal)
    got = run(mapped, request, principal)
    same_bytes(got, expected)
    if name != "empty":
        assert got["promptPack"]["citations"]


DEEPER = [
    ("card charged twice", "acme", {"principalId": "alice", "groups": ["security", "payments-leads"]}),
    ("login rate limit lockout", "acme", {"principalId": "alice", "groups": ["security"]}),
    ("deploy rollback", "acme", {"principalId": "mallory", "groups": []}),
    ("token refresh postmortem", "acme", {"principalId": "bob", "groups": ["payments-leads"]}),
    ("token refresh", "globex", {"principalId": "alice", "groups": ["security"]}),
]


@pytest.mark.parametrize(("query", "tenant", "principal"), DEEPER, ids=[q for q, _, _ in DEEPER])
def test_deeper_secured_searches_agree_too(
    team: Team, mapped: SearchServices, query: str, tenant: str, principal: dict[str, Any]
) -> None:
    request = {
        "queryText": query,
        "filter": {"tenantId": tenant, "secured": True},
        "options": {"expandDepth": 3, "topK": 30},
    }
    expected = run(team.embedded, request, principal)
    got = run(mapped, request, principal)
    same_bytes(got, expected)
    assert got["promptPack"]["citations"]


def test_a_search_session_writes_nothing(team: Team, mapped: SearchServices) -> None:
    before = (weaviate_state(team.weaviate), neo4j_state(team.driver))
    assert before[0]["collections"] == OURS
    assert len(before[1]["nodes"]) == len(read_dataset(example_dataset_path()).nodes)
    for request, principal in SEARCHES.values():
        run(mapped, request, principal)
    for query, tenant, principal in DEEPER:
        filters = {"tenantId": tenant, "secured": True}
        run(mapped, {"queryText": query, "filter": filters, "options": {"expandDepth": 3, "topK": 30}}, principal)
    run(mapped, {"queryText": "token refresh", "filter": {"tenantId": "initech", "secured": False}}, None)
    assert (weaviate_state(team.weaviate), neo4j_state(team.driver)) == before


# -- the command line ------------------------------------------------------------------------------------


def cli_search(team: Team, shape: str, query: str, tenant: str) -> subprocess.CompletedProcess[str]:
    """``brain-graph search QUERY --tenant TENANT --public --json`` with ``BRAIN_GRAPH_MAPPING`` naming
    the mapping file of ``shape`` (the connections from the environment)."""
    env = {**os.environ, "BRAIN_GRAPH_MAPPING": str(team.files[shape])}
    env.pop("BRAIN_GRAPH_BACKEND", None)
    command = [str(Path(sys.executable).parent / "brain-graph"), "search", query, "--tenant", tenant]
    return subprocess.run([*command, "--public", "--json"], env=env, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("shape", SHAPES)
def test_the_cli_searches_through_the_mapping_file(team: Team, shape: str) -> None:
    done = cli_search(team, shape, "token refresh outage", "acme")
    assert done.returncode == 0, done.stderr
    expected = run(
        team.embedded, {"queryText": "token refresh outage", "filter": {"tenantId": "acme", "secured": False}}, None
    )
    assert json.loads(done.stdout)["promptPack"] == expected["promptPack"]


@pytest.mark.parametrize("shape", SHAPES)
def test_a_cli_search_without_hits_prints_the_empty_pack(team: Team, shape: str) -> None:
    """A search that finds nothing (a tenant the graph does not hold) is an empty pack, not an error:
    the CLI's note on an empty tenant counts what the tenant holds, a read the mapped backend answers."""
    done = cli_search(team, shape, "token refresh", "initech")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["promptPack"]["citations"] == []
    assert "tenant 'initech' holds no data in the mapped backend" in done.stderr


def test_a_mapped_tenant_counts_its_nodes_and_relationships(team: Team, mapped: SearchServices) -> None:
    for tenant in ("acme", "globex"):
        counts = mapped.backend.admin.count(tenant)
        expected = team.embedded.backend.admin.count(tenant)
        assert (counts.nodes, counts.edges) == (expected.nodes, expected.edges)
    assert (mapped.backend.admin.count("initech").nodes, mapped.backend.admin.count("initech").edges) == (0, 0)


# -- a Weaviate that cannot be reached -------------------------------------------------------------------


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A local port that accepts connections and never answers."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(64)
        yield int(sock.getsockname()[1])


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("down", ["closed", "silent"])
def test_an_unreachable_weaviate_fails_the_search_within_the_timeout(
    team: Team, shape: str, down: str, silent_port: int
) -> None:
    port = closed_port() if down == "closed" else silent_port
    other = next(p for p in iter(closed_port, None) if p != port)  # the client refuses one port for both
    backend = built(team, shape, http_port=port, grpc_port=other, timeout_s=TIMEOUT)
    services = SearchServices(backend=backend, profiles=team.embedded.profiles)
    request, principal = SEARCHES["secured-with-principal"]
    try:
        started = time.monotonic()
        with pytest.raises(BackendUnavailableError) as raised:
            run(services, request, principal)
        elapsed = time.monotonic() - started
    finally:
        backend.close()
    assert raised.value.backend == "weaviate"
    assert str(raised.value).startswith("weaviate unavailable: ")
    assert "\n" not in str(raised.value)
    assert elapsed < TIMEOUT + SLACK, elapsed


@pytest.mark.parametrize(("depth", "statements"), [(0, 4), (1, 5), (2, 7)])
def test_neo4j_statements_with_weaviate_vectors_do_not_depend_on_top_k(
    mapped: SearchServices, depth: int, statements: int
) -> None:
    """Neo4j statements per search when every profile's vectors are in Weaviate, as the backend's
    docstring counts them: the seeds 2, each hop's new nodes 1 (their visibility, before Weaviate is
    asked for their vectors), each hop after the first 1 for its links, the context 2: 4, 5 and 7 at
    depth 0, 1 and 2, whatever topK."""
    backend = cast(MappedBackend, mapped.backend)

    def counted(top_k: int) -> tuple[int, dict[str, Any]]:
        request = {
            "queryText": "token refresh outage",
            "filter": {"tenantId": "acme", "secured": False},
            "options": {"topK": top_k, "expandDepth": depth, "maxNodes": 1000},
        }
        before = backend.round_trips()["neo4j"]
        output = run(mapped, request, None)
        return backend.round_trips()["neo4j"] - before, output

    counted(5)
    small, small_out = counted(5)
    large, large_out = counted(50)
    assert len(small_out["hits"]) == 5
    assert len(large_out["hits"]) > len(small_out["hits"])
    assert small == large == statements


# -- readiness and a Neo4j that is down ------------------------------------------------------------------


def ready_answer(backend: MappedBackend) -> tuple[int, Any]:
    """The status and JSON of ``GET /brain/ready`` over ``backend`` (closed afterwards)."""
    services = SearchServices(backend=backend)
    app = Starlette(routes=[Route("/brain/ready", readiness_endpoint(lambda: services, timeout_s=TIMEOUT + SLACK))])
    try:
        response = TestClient(app).get("/brain/ready")
    finally:
        backend.close()
    return response.status_code, response.json()


@pytest.mark.parametrize("shape", SHAPES)
def test_readiness_checks_the_weaviate_sources_too(team: Team, shape: str) -> None:
    assert ready_answer(built(team, shape)) == (
        200,
        {"status": "ready", "backends": {"neo4j": "ready", "weaviate": "ready"}},
    )
    port = closed_port()
    other = next(p for p in iter(closed_port, None) if p != port)  # the client refuses one port for both
    closed = built(team, shape, http_port=port, grpc_port=other, timeout_s=TIMEOUT)
    assert ready_answer(closed) == (
        503,
        {
            "status": "unavailable",
            "backends": {"neo4j": "ready", "weaviate": "unavailable"},
            "unavailable": ["weaviate"],
        },
    )


def test_a_mapped_search_whose_neo4j_is_down_fails_naming_it(team: Team) -> None:
    """No vector-only mode on a mapped graph (docs/degradation.md): with its Weaviate sources up, a
    search whose Neo4j is down is a 503 naming ``neo4j``, never hits the graph could not check."""
    mapping = read_mapping(team.files["tenant-property"])
    client = Neo4jClient(uri=f"bolt://127.0.0.1:{closed_port()}", user="neo4j", password="unused", timeout_s=TIMEOUT)
    sources = [
        WeaviateSource.from_mapping(mapping, config, **connection())
        for config in mapping.vectors
        if isinstance(config, WeaviateVectors)
    ]
    backend = MappedBackend.with_neo4j_sources(mapping, client, weaviate_sources=sources)
    services = SearchServices(backend=backend, profiles=team.embedded.profiles)
    request, principal = SEARCHES["secured-with-principal"]
    try:
        with pytest.raises(BackendUnavailableError) as raised:
            run(services, request, principal)
    finally:
        backend.close()
    assert raised.value.backend == "neo4j"
