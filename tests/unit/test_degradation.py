"""Degradation's decisions (pure logic, fakes allowed): which failures a search may degrade on, and
which Weaviate generation a search reads without Neo4j. The searches themselves run against the real
servers in tests/integration/test_degradation.py."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from brain_graph.core.contracts import BrainSearchResult
from brain_graph.core.errors import BackendUnavailableError
from brain_graph.pipeline.degradation import vector_only_reads
from brain_graph.pipeline.services import SearchServices
from brain_graph.serving.retriever import to_documents
from brain_graph.stores.embedded import EmbeddedStore
from brain_graph.stores.neo4j_weaviate.vector_only import sole_generation
from brain_graph.stores.vector_only import GraphlessSearch


@pytest.mark.parametrize(("stored", "generation"), [([], None), ([7], 7)])
def test_the_generation_is_the_only_one_weaviate_holds(stored: list[int], generation: int | None) -> None:
    assert sole_generation(stored) == generation


@pytest.mark.parametrize("stored", [[3, 4], [0]], ids=["a-load-staging-or-a-clean-up-left", "pre-generation"])
def test_a_generation_only_neo4j_can_name_fails_naming_neo4j(stored: list[int]) -> None:
    with pytest.raises(BackendUnavailableError) as caught:
        sole_generation(stored)
    assert caught.value.backend == "neo4j"
    assert "only Neo4j names the current one" in str(caught.value)


class GraphlessReads:
    """Search reads that offer a vector-only mode (records the tenants asked for)."""

    graph_service = "neo4j"

    def __init__(self) -> None:
        self.asked: list[str] = []

    def without_graph(self, tenant_id: str) -> Any:
        self.asked.append(tenant_id)
        return ("vector-only", tenant_id)


class Backend:
    """The part of a backend :func:`vector_only_reads` reads."""

    def __init__(self, reads: object) -> None:
        self.search_reads = reads


def services(reads: object, **settings: Any) -> SearchServices:
    return SearchServices(backend=Backend(reads), **settings)  # type: ignore[arg-type]


def test_a_graph_store_failure_degrades() -> None:
    reads = GraphlessReads()
    assert isinstance(reads, GraphlessSearch)
    got = vector_only_reads(services(reads), BackendUnavailableError("neo4j", "refused"), "acme")
    assert (got, reads.asked) == (("vector-only", "acme"), ["acme"])


@pytest.mark.parametrize(
    ("failed", "settings"),
    [("weaviate", {}), ("embedder openai:x", {}), ("neo4j", {"degrade_without_graph": False})],
    ids=["vector-store", "embedder", "switched-off"],
)
def test_other_failures_or_degradation_off_fail_the_search(failed: str, settings: dict[str, Any]) -> None:
    reads = GraphlessReads()
    assert vector_only_reads(services(reads, **settings), BackendUnavailableError(failed, "down"), "acme") is None
    assert reads.asked == []


def test_a_backend_whose_stores_fail_together_never_degrades(tmp_path: Path) -> None:
    store = EmbeddedStore(tmp_path / "store.sqlite3")
    assert not isinstance(store.search_reads, GraphlessSearch)
    error = BackendUnavailableError("embedded", "unreadable")
    assert vector_only_reads(SearchServices(backend=store), error, "acme") is None


@pytest.mark.parametrize("included", [True, False])
def test_a_retriever_never_turns_a_vector_only_result_into_no_documents(included: bool) -> None:
    result = BrainSearchResult.model_validate(
        {
            **{key: [] for key in ("hits", "episodes", "graphNodes", "graphEdges", "passages")},
            "promptPack": {"contextMarkdown": "", "citations": []},
            "graphContextIncluded": included,
        }
    )
    if included:
        assert to_documents(result) == []  # nothing found
        return
    with pytest.raises(BackendUnavailableError) as caught:
        to_documents(result)
    assert caught.value.backend == "graph store"
