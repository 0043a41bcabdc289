"""Round trips per search do not depend on topK or the number of hits.

With the default profiles (work + doc) and a warm process (profile and generation caches), a search
at depth D sends:
    Weaviate: 2 (one Search per profile, concurrent); the nodes each hop reaches are scored from the
              vector copies on the Neo4j nodes, read with the hop's links
    Neo4j:    1 (the generation check, the hits' metadata, the first hop's links and the copies of
              the nodes they reach) + 1 per hop after the first (the frontier's links and the copies)
              + 1 (metadata of the nodes the expansion added, edges among the admitted nodes, cluster
              memberships, passage texts) = D + 1, 2 at depth 0
so 3 Neo4j statements and 2 Weaviate requests at depth 2, 2 and 2 at depth 1 and at depth 0. A
generation whose copies do not count takes 2 Weaviate requests more per hop (the new nodes'
similarity; ``tests/integration/test_vector_copies.py``). The embedded store runs the same single reads
as SQLite statements, its similarity as two (profiles, data version; the vectors are cached in memory),
plus one for the profile metadata (never cached there): 13 at depth 2, 10 at depth 1 and 7 at depth 0
(after a search's expansion, the visibility of the nodes it already read is checked with the metadata
of the new ones: at depth 0 there are none, and the check is a statement of its own).

Hybrid retrieval adds, to the same round of Weaviate requests, one BM25 Search per profile and one
GraphQL Aggregate of the corpus statistics (3), and one more round, the similarity of the lexical hits
that are not vector hits (2, one per profile; none when every lexical hit is a vector hit): 7 Weaviate
requests; on the embedded store one statement for the lexical postings' data version and two for
that similarity (16 at depth 2, 10 at depth 0). Lexical mode sends no vector search and no
similarity: 3 Weaviate requests, and the embedded store 7 statements at depth 1.

Seed filters (node types, namespaces, tags, recency) go into the requests above; a recency filter adds
one gRPC Search per profile to the seeds' Weaviate round (whether it skipped nodes without an update
time, limit 1 each): 4 at depth 1, 9 in hybrid mode. Node types choose the profiles searched, so
``nodeTypes: ["cdm.work_item"]`` sends 1 vector search.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Any, cast

import pytest

from brain_graph.graphs.search import build_graph
from brain_graph.indexing.dataset import Dataset, load_dataset
from brain_graph.pipeline.services import SearchServices
from brain_graph.pipeline.state import BrainSearchInput
from tests.integration.conftest import Loaded, parity_source, with_tenant_prefix
from tests.integration.servers import connect, unique_prefix

pytestmark = pytest.mark.integration


def counted(loaded: Loaded, request: dict[str, Any]) -> tuple[dict[str, int], dict[str, Any]]:
    """Round trips of the search on both backends (the result of the server's)."""
    counts: dict[str, int] = {}
    for services in (loaded.server, loaded.embedded):
        admin = services.backend.admin
        before = admin.round_trips()
        output = build_graph(services).invoke(cast(BrainSearchInput, request))
        after = admin.round_trips()
        counts.update({key: after[key] - before[key] for key in after})
    return counts, output


def busiest_query(loaded: Loaded) -> tuple[str, str]:
    tenant = Counter(node.tenant_id for node in loaded.dataset.nodes).most_common(1)[0][0]
    title = next(
        n.title
        for n in sorted(loaded.dataset.nodes, key=lambda n: n.id)
        if n.tenant_id == tenant and n.node_type == "cdm.work_item" and not n.secured and n.title
    )
    return tenant, title


@pytest.mark.parametrize(
    ("mode", "depth", "neo4j", "weaviate", "sqlite"),
    [
        ("vector", 2, 3, 2, 13),
        ("vector", 1, 2, 2, 10),
        ("vector", 0, 2, 2, 7),
        ("hybrid", 2, 3, 7, 16),
        ("hybrid", 0, 2, 7, 10),
        ("lexical", 1, 2, 3, 7),
    ],
)
def test_round_trips_do_not_depend_on_top_k(
    loaded: Loaded, mode: str, depth: int, neo4j: int, weaviate: int, sqlite: int
) -> None:
    tenant, title = busiest_query(loaded)

    def request(top_k: int) -> dict[str, Any]:
        return {
            "queryText": title,
            "filter": {"tenantId": tenant, "secured": False},
            "options": {"topK": top_k, "expandDepth": depth, "maxNodes": 1000, "retrievalMode": mode},
        }

    counted(loaded, request(5))  # warm the profile cache and the connections
    small, small_out = counted(loaded, request(5))
    large, large_out = counted(loaded, request(50))
    assert len(small_out["hits"]) == 5
    assert len(large_out["hits"]) > 30
    assert len(large_out["graphNodes"]) > len(small_out["graphNodes"])
    assert small == {"neo4j": neo4j, "weaviate": weaviate, "sqlite": sqlite}
    assert large == small


@pytest.fixture(scope="module")
def timed() -> Iterator[tuple[SearchServices, Dataset]]:
    """The parity dataset, every other node with an update time (2026-01 to 2026-03) and the tags
    ``even`` or ``odd``, in the servers only."""
    raw = with_tenant_prefix(parity_source(), unique_prefix("rt")).model_dump(by_alias=True)
    for index, item in enumerate(raw["nodes"]):
        item["tags"] = ["even" if index % 2 == 0 else "odd"]
        if index % 2:
            item["updatedAt"] = f"2026-0{1 + index % 3}-01"
    dataset = Dataset.model_validate(raw)
    backend = connect()
    services = SearchServices(backend=backend)
    try:
        load_dataset(dataset, backend, services.profiles)
        yield services, dataset
    finally:
        try:
            backend.admin.drop_tenants(sorted({node.tenant_id for node in dataset.nodes}))
        finally:
            backend.close()


@pytest.mark.parametrize(
    ("mode", "narrowing", "weaviate", "untimed"),
    [
        ("vector", {}, 2, False),
        ("vector", {"updatedAfter": "2026-02-01"}, 4, True),  # an untimed check per profile
        ("vector", {"tags": ["ODD"]}, 2, False),  # case-folded
        ("vector", {"tags": ["odd"], "nodeTypes": ["cdm.work_item"]}, 1, False),  # the types choose one profile
        ("hybrid", {}, 7, False),
        ("hybrid", {"updatedAfter": "2026-02-01"}, 9, True),
        ("hybrid", {"updatedAfter": "2026-02-01", "tags": ["odd"]}, 9, False),  # every odd node has a time
    ],
)
def test_filters_add_at_most_the_untimed_check_to_the_round(
    timed: tuple[SearchServices, Dataset], mode: str, narrowing: dict[str, Any], weaviate: int, untimed: bool
) -> None:
    """Filters go into the requests a search sends anyway; a recency filter adds one request per
    searched profile to the same Weaviate round, whatever the number of hits (until every lexical hit
    is also a vector hit, which saves the round of their similarity: topK 20 stays below that here)."""
    services, dataset = timed
    tenant = Counter(node.tenant_id for node in dataset.nodes).most_common(1)[0][0]
    title = next(n.title for n in sorted(dataset.nodes, key=lambda n: n.id) if n.tenant_id == tenant and n.title)

    def trips(top_k: int) -> tuple[dict[str, int], dict[str, Any]]:
        request = {
            "queryText": title,
            "filter": {"tenantId": tenant, "secured": False, **narrowing},
            "options": {"topK": top_k, "expandDepth": 1, "maxNodes": 1000, "retrievalMode": mode},
        }
        admin = services.backend.admin
        before = admin.round_trips()
        output = build_graph(services).invoke(cast(BrainSearchInput, request))
        after = admin.round_trips()
        return {key: after[key] - before[key] for key in after}, output

    trips(5)  # warm the profile cache and the connections
    small, small_out = trips(5)
    large, large_out = trips(20)
    assert (len(small_out["hits"]), len(large_out["hits"])) == (5, 20)
    assert small == large == {"neo4j": 2, "weaviate": weaviate}
    assert [warning["code"] for warning in large_out["warnings"]] == (["recency_untimed"] if untimed else [])
