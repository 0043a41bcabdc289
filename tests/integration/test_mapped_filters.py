"""Seed filters on a mapped graph, on the real servers: a team's graph with tags, update times of
every kind (Neo4j DATETIME with an offset or a named zone, LOCAL DATETIME, DATE, ISO-8601 strings,
epoch milliseconds as integers and floats, values that are no time) and paths, its vectors in a Neo4j
vector index and, the same values, in a Weaviate collection. Each filter returns exactly what
:meth:`~brain_graph.core.filters.SeedFilter.matches` admits over the facets the mapping reads, in
the order of the scores, with project, tenant and ACL; the records carry those facets; ``untimed``
says when the recency part skipped a node without a time; the top k is the top k of the admitted
candidates.

The graph and the collection are written here with plain Cypher and the official clients (labels,
collection unique to the run; deleted at the end); nothing is mocked.
"""

from __future__ import annotations

import math
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from itertools import groupby
from typing import Any, cast

import neo4j
import pytest
import weaviate
from langchain_core.embeddings import Embeddings
from weaviate.classes.config import Configure, DataType, Property, Tokenization, VectorDistances
from weaviate.classes.data import DataObject
from weaviate.util import generate_uuid5

from brain_graph import BrainSearchContext, SearchServices, build_graph
from brain_graph.auth.principals import as_principal
from brain_graph.core.filters import NodeFacets, SeedFilter, parse_timestamp
from brain_graph.core.security import AccessScope, Principal
from brain_graph.embedding.profiles import EmbeddingProfile, ProfileRegistry
from brain_graph.pipeline.state import BrainSearchInput
from brain_graph.stores.base import VectorQuery, node_facets
from brain_graph.stores.mapped.attach import check_mapping, suggest_mapping
from brain_graph.stores.mapped.backend import MappedBackend, weaviate_parameters
from brain_graph.stores.mapped.facets import micros, read_iso
from brain_graph.stores.mapped.mapping import Mapping, WeaviateVectors, parse_mapping
from brain_graph.stores.mapped.vectors import candidate_limit
from brain_graph.stores.mapped.weaviate_source import WeaviateSource
from brain_graph.stores.neo4j_weaviate.neo4j.client import Neo4jClient
from tests.integration.servers import server_settings, team_driver, team_weaviate

pytestmark = pytest.mark.integration

RUN = uuid.uuid4().hex[:8]
LABELS = {
    "ticket": f"Ticket{RUN}",
    "page": f"Page{RUN}",
    "file": f"File{RUN}",
    "note": f"Note{RUN}",
    "chunk": f"Chunk{RUN}",  # the crowd of the under-filled case
}
MARKER = f"Vec{RUN}"  # every searched node but the crowd carries it; the vector index of PROFILE is on it
CROWD_MARKER = f"Crowd{RUN}"  # the crowd's own index, of CROWD_PROFILE
INDEX = f"vec{RUN}"
CROWD_INDEX = f"crowd{RUN}"
COLLECTION = f"FilterVectors{RUN}"
PROFILE = "cdm.doc.body"
CROWD_PROFILE = "cdm.work.summary"
EMBEDDER = "test-embedder"
WORK, DOC, CODE = "cdm.work_item", "cdm.doc", "code.file"
Q = [1.0, 0.0, 0.0, 0.0]

JAN = parse_timestamp("2026-01-01")
FEB = parse_timestamp("2026-02-01")
MAR = parse_timestamp("2026-03-01T12:30:00.000001Z")
MAR0 = parse_timestamp("2026-03-01")
ALICE = Principal("alice").identities


@dataclass(frozen=True)
class Foreign:
    """A node as the team wrote it (``props``: its facet properties; a temporal value as
    ``(Cypher function, text)``), and the facets the mapping reads of them (written by hand)."""

    node_id: str
    kind: str  # a key of LABELS
    props: dict[str, Any]
    facets: NodeFacets
    project: str | None = None
    secured: bool = False
    tenant: str = "t1"
    vector: list[float] = field(default_factory=list)
    marker: str = MARKER


def facets(node_type: str, namespace: str | None = None, tags: Sequence[str] = (), at: int | None = None) -> NodeFacets:
    return NodeFacets(node_type, namespace, tuple(tags), at)


NODES = [
    Foreign(
        "t-jan",
        "ticket",
        {"labels": ["Payments", "SEV1"], "updatedAt": ("datetime", "2026-01-01T01:00:00+01:00"), "team": "Billing"},
        facets(WORK, "billing", ("payments", "sev1"), JAN),
        project="P",
    ),
    Foreign(
        "t-feb-paris",
        "ticket",
        {"labels": ["payments"], "updatedAt": ("datetime", "2026-02-01T01:00:00[Europe/Paris]")},
        facets(WORK, None, ("payments",), FEB),
        project="P",
    ),
    Foreign(
        "t-mar-local",
        "ticket",
        {"labels": [], "updatedAt": ("localdatetime", "2026-03-01T12:30:00.000001"), "team": "auth"},
        facets(WORK, "auth", (), MAR),
    ),
    Foreign(
        "t-untimed",
        "ticket",
        {"labels": ["payments"], "team": " Docs "},
        facets(WORK, "docs", ("payments",)),
        project="P",
    ),
    Foreign(
        "p-iso-z",
        "page",
        {"keywords": "Payments", "modified": "2026-02-01T00:00:00Z", "filePath": "src/billing/x.py"},
        facets(DOC, "billing", ("payments",), FEB),
    ),
    Foreign(
        "p-iso-offset",
        "page",
        {"keywords": ["auth", "Été"], "modified": "2026-03-01 13:30:00.000001+01:00", "filePath": "services/auth/y.py"},
        facets(DOC, "services", ("auth", "été"), MAR),
        project="P",
    ),
    Foreign(
        "p-date-text",
        "page",
        {"keywords": ["ops", "Straße"], "modified": "2026-01-01", "filePath": "docs/z.md"},
        facets(DOC, "docs", ("ops", "strasse"), JAN),
    ),
    Foreign(
        "p-bad-time",
        "page",
        {"keywords": ["payments"], "modified": "last tuesday", "filePath": "README.md"},
        facets(DOC, None, ("payments",)),
    ),
    Foreign(
        "f-date",
        "file",
        {"lastModified": ("date", "2026-02-01"), "path": "src/api/main.py"},
        facets(CODE, "api", (), FEB),
    ),
    Foreign(
        "n-epoch-ticket",
        "note",
        {"kind": "ticket", "updated": MAR0 // 1000, "namespace": "Billing", "tags": ["payments"]},
        facets(WORK, "billing", ("payments",), MAR0),
    ),
    Foreign(
        "n-float-doc",
        "note",
        {"kind": "other", "updated": float(JAN // 1000), "namespace": " ", "path": "docs/a.md", "tags": 5},
        facets(DOC, "docs", (), JAN),
    ),
    Foreign(
        "n-string-time",
        "note",
        {"kind": "ticket", "updated": "2026-02-01T00:00:00.5Z", "tags": "Ꭰ"},  # a tag Neo4j cannot fold
        facets(WORK, None, (), FEB + 500_000),
    ),
    Foreign(
        "t-number",
        "ticket",
        {"labels": ["ops"], "updatedAt": 1_767_225_600},  # a number, and Ticket names no unit: no time
        facets(WORK, None, ("ops",)),
    ),
    Foreign(
        "s-jan",
        "ticket",
        {"labels": ["payments"], "updatedAt": ("datetime", "2026-01-01T00:00:00Z")},
        facets(WORK, None, ("payments",), JAN),
        project="P",
        secured=True,
    ),
    Foreign(
        "s-untimed",
        "ticket",
        {"labels": ["payments", "secret"]},
        facets(WORK, None, ("payments", "secret")),
        project="P",
        secured=True,
    ),
    Foreign(
        "x-other-tenant",
        "ticket",
        {"labels": ["payments"], "updatedAt": ("datetime", "2026-03-01T12:30:00.000001Z"), "team": "billing"},
        facets(WORK, "billing", ("payments",), MAR),
        tenant="t2",
    ),
]
NODES = [
    Foreign(n.node_id, n.kind, n.props, n.facets, n.project, n.secured, n.tenant, [1.0, 0.05 * i, 0.0, 0.0])
    for i, n in enumerate(NODES)
]


def arc(degrees: float) -> list[float]:
    """The unit vector at ``degrees`` from Q, in the plane of its first two axes."""
    return [math.cos(math.radians(degrees)), math.sin(math.radians(degrees)), 0.0, 0.0]


def wanted_or_not(node_id: str, tag: str, tenant: str, degrees: float, **extra: Any) -> Foreign:
    kind = "chunk" if tenant == "t4" else "page"
    return Foreign(
        node_id, kind, {"keywords": [tag]}, facets(DOC, None, (tag,)), tenant=tenant, vector=arc(degrees), **extra
    )


# The top-k cases. Tenant t3: 30 nodes nearer Q than the 3 wanted ones, in PROFILE's index. Tenant
# t4, in an index of its own: a crowd of twice as many nodes as the index is asked for, spread evenly
# on the arc from Q to 60 degrees, and the 3 wanted ones just beyond it (one continuous arc: an HNSW
# index finds neighbours along it, where two clusters far apart could leave a search stuck in one).
CROWD = 2 * candidate_limit(3, narrowed=True)
TOP_K_NODES = [
    *(wanted_or_not(f"near{i:02d}", "other", "t3", 0.05 * i) for i in range(30)),
    *(wanted_or_not(f"far{i}", "wanted", "t3", 70 + i) for i in range(3)),
]
CROWD_NODES = [
    *(wanted_or_not(f"crowd{i:04d}", "other", "t4", 60 * i / CROWD, marker=CROWD_MARKER) for i in range(CROWD)),
    *(wanted_or_not(f"beyond{i}", "wanted", "t4", 61 + i, marker=CROWD_MARKER) for i in range(3)),
]


def mapping_data(source: dict[str, Any]) -> dict[str, Any]:
    """The mapping of PROFILE's ``source``; with a Neo4j source, CROWD_PROFILE's index too."""
    crowd = (
        [{"profile": CROWD_PROFILE, "source": "neo4j", "index": CROWD_INDEX, "property": "embedding"}]
        if source["source"] == "neo4j"
        else []
    )
    return {
        "name": "filters",
        "id_property": "uid",
        "tenant": {"property": "org"},
        "project_property": "proj",
        "title_properties": ["title"],
        "secured_property": "restricted",
        "acl_property": "readers",
        "nodes": [
            {
                "label": LABELS["ticket"],
                "node_type": WORK,
                "tags_property": "labels",
                "updated_at_property": "updatedAt",
                "namespace_property": "team",
            },
            {
                "label": LABELS["page"],
                "node_type": DOC,
                "tags_property": "keywords",
                "updated_at_property": "modified",
                "path_property": "filePath",
            },
            {
                "label": LABELS["file"],
                "node_type": CODE,
                "updated_at_property": "lastModified",
                "path_property": "path",
            },
            {"label": LABELS["chunk"], "node_type": DOC, "tags_property": "keywords"},
            {
                "label": LABELS["note"],
                "node_type": DOC,
                "type_property": "kind",
                "types": {"ticket": WORK},
                "tags_property": "tags",
                "updated_at_property": "updated",
                "updated_at_unit": "milliseconds",
                "namespace_property": "namespace",
                "path_property": "path",
            },
        ],
        "vectors": [{"profile": PROFILE, **source}, *crowd],
    }


NEO4J_SOURCE = {"source": "neo4j", "index": INDEX, "property": "embedding"}
WEAVIATE_SOURCE = {"source": "weaviate", "collection": COLLECTION, "id_property": "nodeKey", "tenant_property": "org"}
SOURCES = ("neo4j", "weaviate")


def mapping(source: str) -> Mapping:
    return parse_mapping(mapping_data(NEO4J_SOURCE if source == "neo4j" else WEAVIATE_SOURCE))


def write_graph(driver: neo4j.Driver, nodes: Sequence[Foreign]) -> None:
    """The nodes with plain Cypher: temporal values made by their Cypher function from their text."""
    for (kind, marker), group in groupby(sorted(nodes, key=lambda n: (n.kind, n.marker)), lambda n: (n.kind, n.marker)):
        rows = []
        for n in group:
            plain = {key: value for key, value in n.props.items() if not isinstance(value, tuple)}
            temporal = [[key, *value] for key, value in n.props.items() if isinstance(value, tuple)]
            base = {"uid": n.node_id, "org": n.tenant, "proj": n.project, "title": n.node_id, "embedding": n.vector}
            secured = {"restricted": True, "readers": ["user:alice"]} if n.secured else {}
            rows.append({"props": {**base, **secured, **plain}, "temporal": temporal})
        driver.execute_query(
            f"UNWIND $rows AS row CREATE (n:`{LABELS[kind]}`:`{marker}`) SET n = row.props "
            "WITH n, row UNWIND row.temporal AS t "
            "SET n[t[0]] = CASE t[1] WHEN 'datetime' THEN datetime(t[2]) WHEN 'localdatetime' THEN localdatetime(t[2]) "
            "ELSE date(t[2]) END",
            rows=rows,
        )


def write_collection(client: weaviate.WeaviateClient, nodes: Sequence[Foreign]) -> None:
    """The same vectors in a Weaviate collection of the team's (exact index: a known order)."""
    client.collections.create(
        COLLECTION,
        properties=[
            Property(name="nodeKey", data_type=DataType.TEXT, tokenization=Tokenization.FIELD),
            Property(name="org", data_type=DataType.TEXT, tokenization=Tokenization.FIELD),
        ],
        vector_config=Configure.Vectors.self_provided(
            vector_index_config=Configure.VectorIndex.flat(distance_metric=VectorDistances.COSINE)
        ),
    )
    objects = [
        DataObject(
            properties={"nodeKey": n.node_id, "org": n.tenant},
            vector=n.vector,
            uuid=generate_uuid5(f"{n.tenant}/{n.node_id}"),
        )
        for n in nodes
    ]
    assert not client.collections.use(COLLECTION).data.insert_many(objects).has_errors


@dataclass(frozen=True)
class Team:
    driver: neo4j.Driver
    backends: dict[str, MappedBackend]


@pytest.fixture(scope="module")
def team() -> Iterator[Team]:
    settings = server_settings()
    driver = team_driver()
    client = team_weaviate()
    neo4j_client = Neo4jClient(uri=settings.neo4j_uri, user=settings.neo4j_user, password=settings.neo4j_password)
    backends: dict[str, MappedBackend] = {}
    try:
        write_graph(driver, [*NODES, *TOP_K_NODES, *CROWD_NODES])
        for index, marker in ((INDEX, MARKER), (CROWD_INDEX, CROWD_MARKER)):
            driver.execute_query(
                f"CREATE VECTOR INDEX `{index}` IF NOT EXISTS FOR (n:`{marker}`) ON n.embedding "
                "OPTIONS {indexConfig: {`vector.dimensions`: 4, `vector.similarity_function`: 'cosine'}}"
            )
        for label in LABELS.values():
            driver.execute_query(f"CREATE INDEX uid{label} IF NOT EXISTS FOR (n:`{label}`) ON (n.uid)")
        driver.execute_query("CALL db.awaitIndexes(300)")
        write_collection(client, [*NODES, *TOP_K_NODES])
        backends["neo4j"] = MappedBackend.with_neo4j_sources(mapping("neo4j"), neo4j_client)
        weaviate_mapping = mapping("weaviate")
        config = cast(WeaviateVectors, weaviate_mapping.vectors[0])
        source = WeaviateSource.from_mapping(weaviate_mapping, config, **weaviate_parameters(settings))
        backends["weaviate"] = MappedBackend.with_neo4j_sources(weaviate_mapping, neo4j_client, [source])
        yield Team(driver, backends)
    finally:
        for backend in backends.values():
            for vector_source in backend.sources.values():
                vector_source.close()
        neo4j_client.close()
        driver.execute_query(f"DROP INDEX `{INDEX}` IF EXISTS")
        driver.execute_query(f"DROP INDEX `{CROWD_INDEX}` IF EXISTS")
        for label in LABELS.values():
            driver.execute_query(f"DROP INDEX uid{label} IF EXISTS")
            driver.execute_query(f"MATCH (n:`{label}`) DETACH DELETE n")
        driver.close()
        client.collections.delete(COLLECTION)
        client.close()


def scope(tenant: str = "t1", identities: frozenset[str] | None = None) -> AccessScope:
    return AccessScope(tenant, identities)


def found(
    backend: MappedBackend,
    seed_filter: SeedFilter,
    *,
    tenant: str = "t1",
    identities: frozenset[str] | None = None,
    top_k: int = 30,
    query: Sequence[float] = Q,
    profile: str = PROFILE,
) -> list[str]:
    hits = backend.vector_index.query(
        [VectorQuery(profile, query, EMBEDDER)], scope=scope(tenant, identities), seed_filter=seed_filter, top_k=top_k
    )
    return [hit.node_id for hit in hits]


def reference(seed_filter: SeedFilter, *, tenant: str = "t1", secured_visible: bool = False) -> list[str]:
    """The nodes the rule admits over the facets written by hand, in the order of their vectors."""
    return [
        n.node_id
        for n in NODES
        if n.tenant == tenant and (secured_visible or not n.secured) and seed_filter.matches(n.project, n.facets)
    ]


FILTERS = {
    "none": SeedFilter(),
    "node type": SeedFilter(node_types=(DOC,)),
    "node type of a type property": SeedFilter(node_types=(WORK,)),
    "two node types": SeedFilter(node_types=(DOC, CODE)),
    "namespace property": SeedFilter(namespaces=("billing",)),
    "namespace of a path": SeedFilter(namespaces=("api", "services")),
    "namespace property else path": SeedFilter(namespaces=("docs",)),
    "tags": SeedFilter(tags=("payments",)),
    "tags any": SeedFilter(tags=("auth", "sev1")),
    "folded tags": SeedFilter(tags=("été", "strasse")),
    "a tag that is not its own fold": SeedFilter(tags=("Ꭰ",)),
    "updated after": SeedFilter(updated_after=FEB),
    "updated at the cutoff": SeedFilter(updated_after=MAR),
    "updated after the last": SeedFilter(updated_after=MAR + 1),
    "and": SeedFilter(tags=("payments",), updated_after=FEB, node_types=(WORK,)),
    "with project": SeedFilter(project_key="P", node_types=(WORK,), tags=("payments",)),
    "project and recency": SeedFilter(project_key="P", updated_after=JAN),
    "other project": SeedFilter(project_key="Q", tags=("payments",)),
    "unknown tag": SeedFilter(tags=("nothing",)),
}


@pytest.mark.parametrize("source", SOURCES)
def test_each_filter_admits_exactly_what_the_rule_admits_in_score_order(team: Team, source: str) -> None:
    backend = team.backends[source]
    for name, seed_filter in FILTERS.items():
        assert found(backend, seed_filter) == reference(seed_filter), name
        assert found(backend, seed_filter, identities=ALICE) == reference(seed_filter, secured_visible=True), name
        assert found(backend, seed_filter, tenant="t2") == reference(seed_filter, tenant="t2"), name
    assert reference(FILTERS["tags"])
    assert reference(FILTERS["updated after"])


@pytest.mark.parametrize("source", SOURCES)
def test_the_records_carry_the_facets_the_mapping_reads(team: Team, source: str) -> None:
    backend = team.backends[source]
    everyone = AccessScope("t1", all_secured=True)
    records = {r.node_id: r for r in backend.graph_store.get_nodes([n.node_id for n in NODES], scope=everyone)}
    expected = {n.node_id: n.facets for n in NODES if n.tenant == "t1"}
    assert {node_id: node_facets(record) for node_id, record in records.items()} == expected
    assert records["t-jan"].updated_at == JAN
    assert records["p-bad-time"].updated_at is None
    assert records["t-number"].namespace == ""  # none: node_facets derives none from a path or title


@pytest.mark.parametrize("source", SOURCES)
def test_the_filter_applies_before_the_top_k(team: Team, source: str) -> None:
    backend = team.backends[source]
    wanted = SeedFilter(tags=("wanted",))
    assert found(backend, wanted, tenant="t3", top_k=3) == ["far0", "far1", "far2"]
    assert found(backend, wanted, tenant="t3", top_k=2) == ["far0", "far1"]
    assert found(backend, SeedFilter(), tenant="t3", top_k=3) == ["near00", "near01", "near02"]


def test_a_node_beyond_the_candidates_a_neo4j_index_gives_is_never_a_hit(team: Team) -> None:
    """The documented limit: the index is asked for candidate_limit(top_k) nodes (any tenant's); when
    more unmatched nodes are nearer, the wanted ones are not among them and the query under-fills."""
    backend = team.backends["neo4j"]
    wanted, other = SeedFilter(tags=("wanted",)), SeedFilter(tags=("other",))
    assert found(backend, wanted, tenant="t4", top_k=3, profile=CROWD_PROFILE) == []
    assert found(backend, other, tenant="t4", top_k=3, profile=CROWD_PROFILE) == ["crowd0000", "crowd0001", "crowd0002"]
    near_them = found(backend, wanted, tenant="t4", top_k=3, query=arc(64), profile=CROWD_PROFILE)
    assert near_them == ["beyond2", "beyond1", "beyond0"]  # the same nodes, found when they are near the query


UNTIMED = [  # (case, filter, the identities searching, whether the recency part skipped a visible untimed node)
    ("recency", SeedFilter(updated_after=FEB), None, True),
    ("no recency part", SeedFilter(tags=("payments",)), None, False),
    ("the untimed ones fail the tags", SeedFilter(updated_after=FEB, tags=("auth",)), None, False),
    ("the untimed ones fail the node type", SeedFilter(updated_after=FEB, node_types=(CODE,)), None, False),
    ("a path's namespace", SeedFilter(updated_after=FEB, namespaces=("docs",)), None, True),
    ("a value that is no time", SeedFilter(updated_after=FEB, node_types=(DOC,), tags=("payments",)), None, True),
    ("a number without a unit", SeedFilter(updated_after=FEB, tags=("ops",)), None, True),
    ("with project", SeedFilter(updated_after=FEB, project_key="P", node_types=(WORK,)), None, True),
    ("other project", SeedFilter(updated_after=FEB, project_key="Q"), None, False),
    ("a secured one, not visible", SeedFilter(updated_after=FEB, tags=("secret",)), None, False),
    ("a secured one, visible", SeedFilter(updated_after=FEB, tags=("secret",)), ALICE, True),
]


@pytest.mark.parametrize("source", SOURCES)
def test_untimed_reports_skipped_nodes_without_an_update_time(team: Team, source: str) -> None:
    index = team.backends[source].vector_index

    def untimed(
        seed_filter: SeedFilter, identities: frozenset[str] | None = None, tenant: str = "t1", profiles=(PROFILE,)
    ) -> bool:
        return index.untimed(list(profiles), scope=scope(tenant, identities), seed_filter=seed_filter)

    def expected(seed_filter: SeedFilter, identities: frozenset[str] | None) -> bool:
        return any(
            n.tenant == "t1" and (not n.secured or bool(identities)) and seed_filter.untimed(n.project, n.facets)
            for n in NODES
        )

    for name, seed_filter, identities, answer in UNTIMED:
        assert untimed(seed_filter, identities) is expected(seed_filter, identities) is answer, name
    assert not untimed(SeedFilter(updated_after=FEB), tenant="t2")
    assert not untimed(SeedFilter(updated_after=FEB), profiles=("code.file.summary",))  # no source


@pytest.mark.parametrize("source", SOURCES)
def test_the_seeds_apply_the_filter_and_report_untimed_in_the_same_statements(team: Team, source: str) -> None:
    backend = team.backends[source]

    def seeds(seed_filter: SeedFilter) -> tuple[list[str], bool, int]:
        before = backend.round_trips()["neo4j"]
        read = backend.search_reads.seeds(
            [VectorQuery(PROFILE, Q, EMBEDDER)],
            scope=scope(),
            seed_filter=seed_filter,
            top_k=30,
            link_types=[],
            max_degree=50,
        )
        return [hit.node_id for hit in read.hits], read.untimed, backend.round_trips()["neo4j"] - before

    seeds(SeedFilter())  # the index's labels and dimension are read once per backend
    plain, plain_untimed, plain_trips = seeds(SeedFilter())
    recent, recent_untimed, recent_trips = seeds(SeedFilter(updated_after=FEB))
    assert plain == reference(SeedFilter())
    assert not plain_untimed
    assert recent == reference(SeedFilter(updated_after=FEB))
    assert recent_untimed
    narrowed, narrowed_untimed, narrowed_trips = seeds(SeedFilter(updated_after=FEB, tags=("auth",)))
    assert narrowed == ["p-iso-offset"]
    assert not narrowed_untimed
    assert plain_trips == recent_trips == narrowed_trips == 2  # candidates (with untimed), then the hits' records


def run(backend: MappedBackend, request: dict[str, Any]) -> dict[str, Any]:
    profiles = ProfileRegistry(
        profiles=(EmbeddingProfile(PROFILE, "doc", "fixed", 4, (DOC, WORK, CODE), ("title",)),),
        embedders={"fixed": FixedEmbeddings()},
    )
    graph = build_graph(SearchServices(backend=backend, profiles=profiles, retrieval_mode="vector"))
    context = BrainSearchContext(principal=as_principal(None))
    return cast(dict[str, Any], graph.invoke(cast(BrainSearchInput, request), context=context))


class FixedEmbeddings(Embeddings):
    """Every text embeds as the test's query vector."""

    name = EMBEDDER
    dimension = 4

    def embed_query(self, text: str) -> list[float]:
        return list(Q)

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [list(Q) for _ in texts]


@pytest.mark.parametrize("source", SOURCES)
def test_a_search_through_the_pipeline_filters_and_warns(team: Team, source: str) -> None:
    backend = team.backends[source]
    request = {
        "queryText": "payments",
        "filter": {"tenantId": "t1", "secured": False, "tags": ["Payments"], "updatedAfter": "2026-02-01"},
        "options": {"topK": 10, "expandDepth": 0},
    }
    out = run(backend, request)
    expected = reference(SeedFilter(tags=("payments",), updated_after=FEB))
    assert [hit["nodeId"] for hit in out["hits"]] == expected
    assert out["filtersApplied"]["tags"] == ["payments"]
    assert [warning["code"] for warning in out["warnings"]] == ["recency_untimed"]
    typed = run(backend, {**request, "filter": {"tenantId": "t1", "secured": False, "nodeTypes": [CODE]}})
    assert [(hit["nodeId"], hit["nodeType"]) for hit in typed["hits"]] == [("f-date", CODE)]
    assert typed["warnings"] == []


def test_the_neo4j_conversion_of_times_is_parse_timestamps(team: Team) -> None:
    """Strings of every form: the Cypher of the searches gives read_iso's value, which is
    parse_timestamp's for the strings of the accepted form and None for the others."""
    strings = [
        "2024-01-01",
        "2024-02-29",
        "2023-02-29",
        "2024-13-01",
        "0000-01-01",
        "0001-01-01T00:00+01:00",
        "9999-12-31T23:59:59.999999Z",
        "2024-09-01T12:00:00.1234567Z",
        "2024-09-01t12:00",
        "2024-09-01 12:00:00-05:30",
        " 2024-09-01T12:00Z\n",
        "2024-09-01T24:00",
        "2024-09-01T12:00:60",
        "2024-09-01T12:00+24:00",
        "2024-09-01T12:00+23:59",  # parse_timestamp reads it; Neo4j's offsets end at 18 hours
        "2024-09-01T12:00+18:00",
        "2024-09-01T12:00-18:01",
        "2024-04-31",
        "2024-09-01T12:00:00.5+01:00",
        "2024-09-01T12",  # parse_timestamp reads it, the searches do not (documented)
        "20240901",
        "1969-12-31T23:59:59.9995Z",
        "2100-02-29",
        "x" * 70,
    ]
    rows = team.driver.execute_query(
        f"UNWIND $values AS w WITH [w, 0][0] AS v RETURN v, {micros('v', 'null')} AS m", values=strings
    ).records
    got = {row["v"]: row["m"] for row in rows}
    for text in strings:
        assert got[text] == read_iso(text), text
        try:
            python = parse_timestamp(text)
        except ValueError:
            python = None
        assert read_iso(text) in (None, python), text
    assert sum(value is not None for value in got.values()) == 11


def test_attach_suggests_the_facet_properties_and_checks_them(team: Team) -> None:
    client = team.backends["neo4j"].neo4j
    suggested = suggest_mapping(client, labels=[LABELS[kind] for kind in ("ticket", "page", "file", "note")])
    nodes = {node.label: node for node in suggested.mapping.nodes}
    ticket, page, file, note = (nodes[LABELS[kind]] for kind in ("ticket", "page", "file", "note"))
    assert (ticket.tags_property, ticket.updated_at_property, ticket.updated_at_unit) == (
        "labels",
        "updatedAt",
        "seconds",
    )
    assert suggested.guessed(f"nodes.{ticket.label}.updated_at_unit") == ["integers of the size of seconds since 1970"]
    assert (page.tags_property, page.updated_at_property, page.path_property) == ("keywords", "modified", "filePath")
    assert suggested.guessed(f"nodes.{page.label}.updated_at_property") == [
        "1 of 4 sampled strings are no ISO-8601 time brain-graph reads: those nodes have no update time"
    ]
    assert (file.updated_at_property, file.path_property) == ("lastModified", "path")
    # a float among its times, an integer among its tags: not obvious
    assert (note.tags_property, note.updated_at_property) == (None, None)
    assert (note.namespace_property, note.path_property) == ("namespace", "path")

    report = check_mapping(mapping("neo4j"), client)
    warnings = {p.key: p.message for p in report.warnings}
    assert warnings[f"nodes.{ticket.label}.updated_at_property"] == (
        f"1 of 6 sampled values of 'updatedAt' on nodes of {ticket.label} are no time brain-graph reads: numbers "
        "are times only with updated_at_unit (seconds, milliseconds or microseconds); a recency filter leaves those "
        "nodes out"
    )
    assert warnings[f"nodes.{page.label}.updated_at_property"].startswith("1 of 4 sampled values of 'modified'")
    assert f"nodes.{note.label}.updated_at_property" not in warnings  # milliseconds, floats and a string: all read
    assert report.usable
    missing = mapping_data(NEO4J_SOURCE)
    missing["nodes"][2] = {**missing["nodes"][2], "tags_property": "topics"}
    report = check_mapping(parse_mapping(missing), client)
    (problem,) = [p for p in report.warnings if p.key == f"nodes.{file.label}.tags_property"]
    assert problem.message == f"none of the 1 sampled nodes of {file.label} has 'topics': filter.tags leaves them out"
