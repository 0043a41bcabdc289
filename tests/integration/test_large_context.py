"""The largest searches the contract allows (``maxNodes`` 1000) run on Neo4j as on the embedded store.

The context statement once hash-joined the admitted nodes with their edges, and every row of that
join held the statement's lists (ids and metadata maps): its memory grew with the square of the
admitted nodes and, from about 700 of them, went over the server's transaction memory limit
(``MemoryPoolOutOfMemoryError``, reported as "neo4j unavailable").
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from benchmarks.synthetic import synthetic_dataset
from brain_graph.core.contracts import MAX_MAX_NODES, MAX_TOP_K
from brain_graph.indexing.dataset import load_dataset
from brain_graph.pipeline.services import SearchServices
from brain_graph.stores.embedded import EmbeddedStore
from tests.integration.conftest import with_tenant_prefix
from tests.integration.servers import connect, unique_prefix
from tests.integration.test_parity import search

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def large(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[SearchServices, SearchServices, str]]:
    """A 3,000-node tenant in both backends (embedded, server), and its id."""
    dataset = with_tenant_prefix(synthetic_dataset(3_000, tenants=1, seed=23), unique_prefix("large"))
    tenant = dataset.nodes[0].tenant_id
    embedded = SearchServices(backend=EmbeddedStore(Path(tmp_path_factory.mktemp("large")) / "store.sqlite3"))
    load_dataset(dataset, embedded.backend, embedded.profiles)
    backend = connect()
    server = SearchServices(backend=backend)
    try:
        load_dataset(dataset, backend, server.profiles)
        yield embedded, server, tenant
    finally:
        try:
            backend.admin.drop_tenants([tenant])
        finally:
            backend.close()


def test_a_search_admitting_a_thousand_nodes_matches_the_embedded_store(
    large: tuple[SearchServices, SearchServices, str],
) -> None:
    embedded, server, tenant = large
    request: dict[str, Any] = {
        "queryText": "billing ledger refund invoice",
        "filter": {"tenantId": tenant, "secured": False},
        "options": {"topK": MAX_TOP_K, "expandDepth": 3, "maxNodes": MAX_MAX_NODES},
    }
    expected = search(embedded, request, None)
    assert len(expected["graphNodes"]) >= 700  # where the old statement ran out of memory
    assert len(expected["graphEdges"]) > 0
    assert search(server, request, None) == expected
