"""Retrieval modes in the pipeline: the fusion's arithmetic, what each mode reads and embeds, exact
matches first, the lexical weight's defaults, and the refusals."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path
from typing import Any, cast

import pytest
from langchain_core.embeddings import Embeddings

from brain_graph.core.errors import ConfigurationError, InvalidRequestError
from brain_graph.embedding.lexical import LexicalHashEmbeddings
from brain_graph.embedding.profiles import DEFAULT_LEXICAL_WEIGHT, hybrid_weight
from brain_graph.graphs.search import build_graph
from brain_graph.pipeline.config import load_settings
from brain_graph.pipeline.ranking import GraphScoring
from brain_graph.pipeline.services import SearchServices
from brain_graph.pipeline.state import BrainSearchInput
from tests.helpers import SMALL_GRAPH, make_store, request


def search(services: SearchServices, query: str = "token refresh", **options: Any) -> dict[str, Any]:
    return cast(dict[str, Any], build_graph(services).invoke(cast(BrainSearchInput, request(query, **options))))


@pytest.fixture
def services(tmp_path: Path) -> SearchServices:
    return make_store(tmp_path, SMALL_GRAPH)


def test_every_breakdown_adds_up_in_hybrid_mode(services: SearchServices) -> None:
    output = search(services, retrievalMode="hybrid", expandDepth=2)
    assert any(c["scoringBreakdown"]["lexical"] > 0 for c in output["candidates"])
    for candidate in output["candidates"]:
        breakdown = candidate["scoringBreakdown"]
        own = round(breakdown["vector"] + breakdown["lexical"], 6)
        assert candidate["adjustedScore"] == round(own + breakdown["graph"], 6)
    by_id = {c["nodeId"]: c for c in output["candidates"]}
    for hit in output["hits"]:
        breakdown = by_id[hit["nodeId"]]["scoringBreakdown"]
        assert hit["score"] == round((hit["vectorScore"] or 0.0) + breakdown["lexical"], 6)
        assert (breakdown["lexical"] > 0) == (hit["lexicalScore"] is not None)


def test_the_lexical_term_is_the_weight_times_the_spread_times_the_relative_bm25(services: SearchServices) -> None:
    output = search(services, retrievalMode="hybrid", expandDepth=0, topK=10)
    vector_only = search(services, retrievalMode="vector", expandDepth=0, topK=10)["hits"]
    spread = max(h["vectorScore"] for h in vector_only) - min(h["vectorScore"] for h in vector_only)
    lexical = [h for h in output["hits"] if h["lexicalScore"] is not None]
    best = max(h["lexicalScore"] for h in lexical)
    weight = LexicalHashEmbeddings.lexical_weight  # the default embedder's
    by_id = {c["nodeId"]: c["scoringBreakdown"]["lexical"] for c in output["candidates"]}
    for hit in lexical:
        assert by_id[hit["nodeId"]] == pytest.approx(weight * spread * hit["lexicalScore"] / best, abs=2e-6)


def test_lexical_mode_embeds_nothing_and_scores_by_bm25(services: SearchServices) -> None:
    class Refusing(Embeddings):
        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            raise AssertionError("lexical mode embeds nothing")

        def embed_query(self, text: str) -> list[float]:
            raise AssertionError("lexical mode embeds nothing")

    registry = services.profiles
    refusing = replace(services, profiles=registry.__class__(registry.profiles, {"default": Refusing()}))
    output = search(refusing, retrievalMode="lexical")
    assert output["hits"]
    assert all(hit["vectorScore"] is None and hit["lexicalScore"] for hit in output["hits"])
    assert output["hits"][0]["score"] == 1.0  # the best BM25 match: the whole lexical term
    assert all(c["vectorScore"] is None for c in output["candidates"])


def test_vector_mode_reads_no_lexical_document(services: SearchServices) -> None:
    output = search(services, retrievalMode="vector")
    assert all(hit["lexicalScore"] is None for hit in output["hits"])
    assert all(c["scoringBreakdown"]["lexical"] == 0.0 for c in output["candidates"])
    assert {c["reachedBy"] for c in output["candidates"]} <= {"vector", "graph"}


@pytest.mark.parametrize("query", ["Billing export", "w3", "  BILLING EXPORT "])
def test_a_node_named_exactly_comes_first(services: SearchServices, query: str) -> None:
    output = search(services, query, retrievalMode="hybrid", topK=5)
    first = output["candidates"][0]
    assert (first["nodeId"], first["reachedBy"]) == ("w3", "exact")
    assert output["promptPack"]["citations"][0]["sourceNodeId"] == "w3"
    assert "exact match" in output["promptPack"]["contextMarkdown"]


def test_the_configured_weight_replaces_the_embedders(services: SearchServices) -> None:
    light = replace(services, scoring=GraphScoring(lexical_weight=0.0))
    output = search(light, retrievalMode="hybrid")
    assert all(c["scoringBreakdown"]["lexical"] == 0.0 for c in output["candidates"])
    assert all(hit["score"] == hit["vectorScore"] for hit in output["hits"] if hit["vectorScore"] is not None)


def test_an_embedders_own_weight() -> None:
    class Named(Embeddings):
        lexical_weight: object = 0.8

        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            return [[1.0] for _ in texts]

        def embed_query(self, text: str) -> list[float]:
            return [1.0]

    class Silent(Named):
        lexical_weight = "heavy"  # not a number: ignored

    class Wild(Named):
        lexical_weight = math.inf  # out of range: ignored

    assert hybrid_weight([Named()]) == 0.8
    assert hybrid_weight([Silent()]) == hybrid_weight([Wild()]) == hybrid_weight([]) == DEFAULT_LEXICAL_WEIGHT
    assert hybrid_weight([Named(), LexicalHashEmbeddings()]) == LexicalHashEmbeddings.lexical_weight


def test_the_deployment_default_mode(services: SearchServices) -> None:
    vector = replace(services, retrieval_mode="vector")
    assert search(vector)["hits"] == search(services, retrievalMode="vector")["hits"]
    assert services.default_mode() == "hybrid"

    class NoLexical:
        name = "plain"

    assert replace(services, backend=cast(Any, NoLexical())).default_mode() == "vector"


def test_lexical_retrieval_is_refused_where_there_are_no_lexical_documents(services: SearchServices) -> None:
    class Plain:
        name = "plain"
        supports_lexical = False

        def __getattr__(self, item: str) -> Any:
            return getattr(services.backend, item)

    plain = replace(services, backend=cast(Any, Plain()))
    for mode in ("lexical", "hybrid"):
        with pytest.raises(InvalidRequestError) as raised:
            search(plain, retrievalMode=mode)
        assert raised.value.field == "options.retrievalMode"
        assert "plain" in raised.value.problem


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("BRAIN_GRAPH_RETRIEVAL_MODE", "semantic"),
        ("BRAIN_GRAPH_LEXICAL_WEIGHT", "11"),
        ("BRAIN_GRAPH_LEXICAL_WEIGHT", "-1"),
    ],
)
def test_bad_settings_name_the_variable(monkeypatch: pytest.MonkeyPatch, variable: str, value: str) -> None:
    monkeypatch.setenv(variable, value)
    with pytest.raises(ConfigurationError) as raised:
        load_settings()
    assert variable in str(raised.value)
    assert "\n" not in str(raised.value)


@pytest.mark.parametrize(
    ("options", "field"), [({"retrievalMode": "bm25"}, "retrievalMode"), ({"minScore": 11}, "minScore")]
)
def test_bad_options_name_the_field(services: SearchServices, options: dict[str, Any], field: str) -> None:
    with pytest.raises(InvalidRequestError) as raised:
        search(services, **options)
    assert raised.value.field == f"options.{field}"
