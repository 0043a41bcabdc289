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
"""

from __future__ import annotations

from collections import Counter
from typing import Any, cast

import pytest

from brain_graph.graphs.search import build_graph
from brain_graph.pipeline.state import BrainSearchInput
from tests.integration.conftest import Loaded

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
