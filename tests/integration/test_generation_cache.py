"""A search sees the data of every load, apply and drop that returned before it started, although the
Neo4j + Weaviate backend queries Weaviate at the generation it last saw for the tenant (the
generation check in its first Neo4j statement redoes the search when that is stale, again when a
second flip overtook the redo)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, cast

import pytest

from benchmarks.synthetic import synthetic_dataset
from brain_graph.embedding.profiles import ProfileRegistry
from brain_graph.graphs.search import build_graph
from brain_graph.indexing.dataset import Dataset, load_dataset
from brain_graph.pipeline.services import SearchServices
from brain_graph.pipeline.state import BrainSearchInput
from brain_graph.stores.neo4j_weaviate.backend import Neo4jWeaviateBackend
from brain_graph.stores.neo4j_weaviate.generation_cache import GenerationCache
from brain_graph.stores.neo4j_weaviate.neo4j.search_reads import Neo4jSearchReads
from tests.integration.conftest import with_tenant_prefix
from tests.integration.servers import connect, unique_prefix

pytestmark = pytest.mark.integration


@pytest.fixture
def two_backends() -> Iterator[tuple[Neo4jWeaviateBackend, Neo4jWeaviateBackend]]:
    """Two backends on the same servers, as two processes would have (each with its own cache)."""
    searcher, writer = connect(), connect()
    try:
        yield searcher, writer
    finally:
        searcher.close()
        writer.close()


def titled(dataset: Dataset, suffix: str) -> Dataset:
    """The dataset with a suffix on every title (a search shows which load it sees)."""
    raw = dataset.model_dump(by_alias=True)
    for node in raw["nodes"]:
        if node.get("title"):
            node["title"] = f"{node['title']} {suffix}"
    return Dataset.model_validate(raw)


def search(backend: Neo4jWeaviateBackend, tenant: str, query: str) -> dict[str, Any]:
    request = {"queryText": query, "filter": {"tenantId": tenant, "secured": False}, "options": {"expandDepth": 1}}
    return build_graph(SearchServices(backend=backend)).invoke(cast(BrainSearchInput, request))


@dataclass(frozen=True)
class Tenant:
    """A synthetic tenant to load again and again, with the profiles to embed it and a query that hits it."""

    base: Dataset
    tenant: str
    profiles: ProfileRegistry
    query: str


@pytest.fixture
def synthetic(two_backends: tuple[Neo4jWeaviateBackend, Neo4jWeaviateBackend]) -> Iterator[Tenant]:
    """An 80-node tenant, not loaded yet; dropped afterwards."""
    writer = two_backends[1]
    base = with_tenant_prefix(synthetic_dataset(80, tenants=1, seed=5), unique_prefix("gen"))
    query = next(n.title for n in base.nodes if n.node_type == "cdm.work_item" and not n.secured and n.title)
    tenant = base.nodes[0].tenant_id
    try:
        yield Tenant(base, tenant, SearchServices(backend=writer).profiles, query)
    finally:
        writer.drop_tenants([tenant])


def test_a_search_after_a_reload_or_drop_sees_only_its_result(
    two_backends: tuple[Neo4jWeaviateBackend, Neo4jWeaviateBackend], synthetic: Tenant
) -> None:
    searcher, writer = two_backends
    base, tenant, profiles, query = synthetic.base, synthetic.tenant, synthetic.profiles, synthetic.query
    load_dataset(titled(base, "first"), writer, profiles)
    first = search(searcher, tenant, query)
    assert first["hits"]
    assert all(h["title"].endswith(" first") for h in first["hits"])

    load_dataset(titled(base, "second"), writer, profiles)  # a replace-load: a new generation
    before = searcher.round_trips()
    second = search(searcher, tenant, query)
    after = searcher.round_trips()
    assert second["hits"]
    assert all(h["title"].endswith(" second") for h in second["hits"])
    assert all(n["label"].endswith(" second") for n in second["graphNodes"] if n["label"])
    assert after["neo4j"] - before["neo4j"] == 3  # the stale generation costs one more statement

    writer.drop_tenants([tenant])
    assert search(searcher, tenant, query)["hits"] == []


def test_a_flip_that_overtakes_the_redo_of_a_stale_search_is_followed(
    two_backends: tuple[Neo4jWeaviateBackend, Neo4jWeaviateBackend], synthetic: Tenant, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The search's cached generation is stale (a reload happened), and a second reload flips and
    cleans up between its generation check and its redo: the redo's Weaviate tenant is gone, and the
    search follows the pointer once more instead of returning no hits."""
    searcher, writer = two_backends
    base, tenant, profiles, query = synthetic.base, synthetic.tenant, synthetic.profiles, synthetic.query
    load_dataset(titled(base, "first"), writer, profiles)
    assert search(searcher, tenant, query)["hits"]  # the searcher caches the first generation
    load_dataset(titled(base, "second"), writer, profiles)
    original = Neo4jSearchReads.seeds
    checks = 0

    def seeds_then_reload(self: Neo4jSearchReads, *args: Any, **kwargs: Any) -> Any:
        nonlocal checks
        found = original(self, *args, **kwargs)
        checks += 1
        if checks == 1:  # the check found the second generation: the third replaces it before the redo
            load_dataset(titled(base, "third"), writer, profiles)
        return found

    monkeypatch.setattr(Neo4jSearchReads, "seeds", seeds_then_reload)
    result = search(searcher, tenant, query)
    monkeypatch.undo()
    assert result["hits"]
    assert all(h["title"].endswith(" third") for h in result["hits"])
    assert checks == 3


def test_a_read_sent_earlier_never_replaces_one_sent_later() -> None:
    cache = GenerationCache(capacity=2)
    early, late = cache.stamp(), cache.stamp()
    cache.put("t", 2, late)
    cache.put("t", 1, early)  # a slow search that read the pointer before the flip
    seen = cache.get("t")
    assert seen is not None
    assert seen.generation == 2
    cache.put("u", None, cache.stamp())
    cache.put("v", 1, cache.stamp())
    assert cache.get("t") is None  # the least recently used is forgotten
