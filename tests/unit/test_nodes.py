"""Each pipeline step on its own, over the small hand-made graph in a real embedded store."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest
from langchain_core.embeddings import Embeddings
from langchain_core.runnables import RunnableConfig

from brain_graph.core.errors import (
    INTERNAL_MESSAGE,
    BackendUnavailableError,
    ConfigurationError,
    InternalError,
    InvalidRequestError,
)
from brain_graph.core.wire import SearchHit
from brain_graph.embedding.lexical import LexicalHashEmbeddings
from brain_graph.embedding.profiles import EmbeddingProfile, ProfileRegistry
from brain_graph.graphs.search import build_graph
from brain_graph.nodes import assemble_passages, build_pack, embed, expand, retrieve, score_episodes
from brain_graph.pipeline.binding import SERVER_UNAVAILABLE_DETAIL, StepDeps
from brain_graph.pipeline.records import link_row, node_meta
from brain_graph.pipeline.search_plan import expansion_types
from brain_graph.pipeline.services import SearchLimits, SearchServices
from brain_graph.pipeline.state import BrainSearchState
from brain_graph.stores.base import VectorHit
from brain_graph.stores.base import best_hits as merge_hits
from brain_graph.stores.embedded import EmbeddedStore
from tests.helpers import request


def deps(services: SearchServices) -> StepDeps:
    return StepDeps(services=services, principal=None)


def run_until(step_name: str, services: SearchServices, raw: dict[str, Any]) -> BrainSearchState:
    """Run the steps before ``step_name`` and return the accumulated state."""
    state: dict[str, Any] = dict(raw)
    for name, step in (
        ("embed", embed),
        ("retrieve", retrieve),
        ("expand", expand),
        ("score_episodes", score_episodes),
        ("assemble_passages", assemble_passages),
    ):
        if name == step_name:
            break
        state.update(step(state, deps(services)))  # type: ignore[arg-type]
    return state  # type: ignore[return-value]


class CountingEmbeddings(Embeddings):
    def __init__(self) -> None:
        self.inner = LexicalHashEmbeddings()
        self.queries = 0
        self.name = self.inner.name

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self.inner.embed_documents(texts)

    def embed_query(self, text: str) -> list[float]:
        self.queries += 1
        return self.inner.embed_query(text)


def test_embed_once_per_distinct_embedder(small_services: SearchServices) -> None:
    shared, other = CountingEmbeddings(), CountingEmbeddings()
    registry = ProfileRegistry(
        profiles=(
            EmbeddingProfile("a", "work", "shared", 256, ("cdm.work_item",), ("title",)),
            EmbeddingProfile("b", "doc", "shared", 256, ("cdm.doc",), ("title",)),
            EmbeddingProfile("c", "code", "other", 256, ("code.file",), ("title",)),
        ),
        embedders={"shared": shared, "other": other},
    )
    services = SearchServices(backend=small_services.backend, profiles=registry)
    update = embed(request("token"), deps(services))  # type: ignore[arg-type]
    assert sorted(update["queryVectors"]) == ["other", "shared"]
    assert (shared.queries, other.queries) == (1, 1)
    only_work = request("token") | {"filter": {"tenantId": "t1", "secured": False, "profileKindIn": ["work"]}}
    assert list(embed(only_work, deps(services))["queryVectors"]) == ["shared"]  # type: ignore[arg-type]


def test_retrieve_orders_by_score_then_node_id_and_filters(small_services: SearchServices) -> None:
    state = run_until("retrieve", small_services, request("token refresh", topK=10))
    hits = retrieve(state, deps(small_services))["hits"]
    assert [(-h["score"], h["nodeId"]) for h in hits] == sorted((-h["score"], h["nodeId"]) for h in hits)
    assert {h["nodeId"] for h in hits} == {"w1", "w2", "w3", "d1"}  # public work + doc in t1
    assert all(h["vectorScore"] is not None and 0.0 <= h["vectorScore"] <= 1.0 for h in hits)
    assert all(h["score"] >= h["vectorScore"] for h in hits)  # plus the lexical term (hybrid by default)
    assert hits[0]["title"]
    assert hits[0]["url"]
    scoped = request("token refresh") | {"filter": {"tenantId": "t1", "secured": False, "projectKey": "Q"}}
    state = run_until("retrieve", small_services, scoped)
    assert [h["nodeId"] for h in retrieve(state, deps(small_services))["hits"]] == ["w3"]


def test_merge_hits_keeps_best_profile_and_breaks_ties_by_node_id() -> None:
    raw = [VectorHit("b", "p2", 0.5), VectorHit("a", "p1", 0.5), VectorHit("b", "p1", 0.5), VectorHit("c", "p1", 0.9)]
    assert merge_hits(raw, 10) == [VectorHit("c", "p1", 0.9), VectorHit("a", "p1", 0.5), VectorHit("b", "p1", 0.5)]
    assert merge_hits(raw, 2) == [VectorHit("c", "p1", 0.9), VectorHit("a", "p1", 0.5)]


def with_hits(services: SearchServices, raw: dict[str, Any], *ids: str) -> dict[str, Any]:
    """A state as ``retrieve`` leaves it, with these ids as hits (scores 0.90, 0.89, ...)."""
    embedded = embed(raw, deps(services))  # type: ignore[arg-type]
    request = embedded["request"]
    scope = deps(services).scope(request)
    records = {n.node_id: node_meta(n) for n in services.backend.graph_store.get_nodes(list(ids), scope=scope)}
    hits = [
        SearchHit(
            nodeId=i,
            nodeType=records[i]["nodeType"],
            profileId="cdm.work.summary",
            profileKind="work",
            score=round(0.9 - n / 100, 6),
            title=records[i]["title"],
            url=records[i]["url"],
            vectorScore=round(0.9 - n / 100, 6),
            lexicalScore=None,
        )
        for n, i in enumerate(ids)
    ]
    types = expansion_types(request, deps(services)) if request["options"]["expandDepth"] > 0 else []
    links = services.backend.graph_store.links(
        list(ids), scope=scope, edge_types=types, max_degree=services.scoring.hub_degree
    ).links
    return {
        **raw,
        **embedded,
        "hits": hits,
        "hitSources": {i: {"reachedBy": "vector", "lexical": 0.0} for i in ids},
        "nodeRecords": {i: records[i] for i in ids},
        "seedLinks": [link_row(link) for link in links] if types else None,
        "seedScores": None,
        "graphContextIncluded": True,
    }


def with_candidates(services: SearchServices, raw: dict[str, Any], *ids: str) -> dict[str, Any]:
    """A state as ``expand`` leaves it at depth 0: the hits are the candidates, in their order."""
    state = with_hits(services, raw, *ids)
    return {**state, **expand(state, deps(services))}  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("options", "nodes", "edges"),
    [
        ({"expandDepth": 0}, ["w1", "w2"], []),
        # edges: every allowed edge between admitted nodes (d1>k1 too), ordered by type, from, to
        # hop 1: the hits, then the new nodes by adjusted score (d1, the only one with a vector), then
        # vector score (none), then node id
        (
            {"expandDepth": 1},
            ["w1", "w2", "d1", "c1", "k1", "k2", "s1"],
            [
                "HAS_SIGNAL w1>s1",
                "IMPLEMENTED_BY w1>c1",
                "IN_CLUSTER d1>k1",
                "IN_CLUSTER w1>k1",
                "IN_CLUSTER w1>k2",
                "IN_CLUSTER w2>k2",
                "REFERENCES w1>d1",
            ],
        ),
        # hop 2 reaches nothing new that is visible (d2 is secured), so the cap is not reached
        ({"expandDepth": 2, "maxNodes": 8}, ["w1", "w2", "d1", "c1", "k1", "k2", "s1"], None),
        ({"expandDepth": 1, "maxNodes": 4}, ["w1", "w2", "d1", "c1"], None),
        ({"expandDepth": 1, "includeSignals": False, "includeClusters": False}, ["w1", "w2", "d1", "c1"], None),
    ],
)
def test_expand_admits_nodes_in_a_total_order(
    small_services: SearchServices, options: dict[str, Any], nodes: list[str], edges: list[str] | None
) -> None:
    state = with_hits(small_services, request("token", **options), "w1", "w2")
    update = expand(state, deps(small_services))  # type: ignore[arg-type]
    assert [n["nodeId"] for n in update["graphNodes"]] == nodes
    if edges is not None:
        assert [f"{e['edgeType']} {e['fromNodeId']}>{e['toNodeId']}" for e in update["graphEdges"]] == edges


def test_expand_depth_two_reaches_second_hop_but_not_secured_or_people(small_services: SearchServices) -> None:
    state = with_hits(small_services, request("token", expandDepth=2), "w2")
    ids = [n["nodeId"] for n in expand(state, deps(small_services))["graphNodes"]]  # type: ignore[arg-type]
    assert ids == ["w2", "k2", "w1"]  # hop 1: k2 (d2 is secured); hop 2: w1 via k2
    state = with_hits(small_services, request("token", expandDepth=3), "w2")
    ids = [n["nodeId"] for n in expand(state, deps(small_services))["graphNodes"]]  # type: ignore[arg-type]
    assert ids == ["w2", "k2", "w1", "d1", "c1", "k1", "s1"]  # hop 3 by score: d1 has a vector
    assert not {"d2", "s2", "p1"} & set(ids)


def test_score_episodes_sums_member_scores(small_services: SearchServices) -> None:
    state = with_candidates(small_services, request("token", maxEpisodes=5), "w1", "w2", "d1")
    update = score_episodes(state, deps(small_services))  # type: ignore[arg-type]
    episodes = {e["clusterNodeId"]: e for e in update["episodes"]}
    assert episodes["k1"]["memberNodeIds"] == ["w1", "d1"]
    assert episodes["k1"]["score"] == round(0.9 + 0.88, 6)
    assert episodes["k1"]["size"] == 2  # d2 is secured and not visible
    assert episodes["k2"]["memberNodeIds"] == ["w1", "w2"]
    assert episodes["k2"]["score"] == round(0.9 + 0.89, 6)
    assert [e["clusterNodeId"] for e in update["episodes"]] == ["k2", "k1"]
    assert update["episodeLabels"]["k1"] == "Token refresh outage"
    limited = score_episodes(
        with_candidates(small_services, request("token", maxEpisodes=1), "w1", "w2", "d1"), deps(small_services)
    )  # type: ignore[arg-type]
    assert len(limited["episodes"]) == 1
    off = score_episodes(
        with_candidates(small_services, request("token", includeEpisodes=False), "w1", "w2", "d1"), deps(small_services)
    )  # type: ignore[arg-type]
    assert off["episodes"] == []


def test_passages_stop_at_the_budget(small_services: SearchServices) -> None:
    limits = SearchLimits(passage_budget_chars=700, doc_excerpt_chars=500, description_excerpt_chars=300)
    services = SearchServices(backend=small_services.backend, limits=limits)
    state = with_candidates(services, request("token", expandDepth=0), "d1", "w1", "w2", "w3")
    passages = assemble_passages(state, deps(services))["passages"]  # type: ignore[arg-type]
    assert [p["sourceNodeId"] for p in passages] == ["d1"]  # w1 would be cut below the minimum passage size
    assert sum(len(p["text"]) for p in passages) <= 700


def test_passages_are_bounded(small_services: SearchServices) -> None:
    limits = SearchLimits(passage_budget_chars=1200, doc_excerpt_chars=500, description_excerpt_chars=300)
    services = SearchServices(backend=small_services.backend, limits=limits)
    state = with_candidates(services, request("token", expandDepth=0), "d1", "w1", "w2", "w3")
    passages = assemble_passages(state, deps(services))["passages"]  # type: ignore[arg-type]
    assert [p["sourceKind"] for p in passages] == ["doc", "work", "work", "work"]
    assert sum(len(p["text"]) for p in passages) <= 1200
    assert passages[0]["text"].startswith("Token refresh design\n\n")
    assert "[truncated:" in passages[0]["text"]
    assert len(passages[0]["text"]) <= len("Token refresh design\n\n") + 500


def test_build_pack_cites_the_best_top_k_candidates_in_rank_order(small_services: SearchServices) -> None:
    state = run_until("assemble_passages", small_services, request("token refresh", topK=3, retrievalMode="vector"))
    state.update(assemble_passages(state, deps(small_services)))  # type: ignore[typeddict-item]
    pack = build_pack(state, deps(small_services))["promptPack"]
    ranked = [c["nodeId"] for c in state["candidates"]]
    assert len(ranked) > 3  # expansion found more than the pack cites
    assert [c["sourceNodeId"] for c in pack["citations"]] == ranked[:3]
    assert [c["sourceNodeId"] for c in pack["citations"]] != [h["nodeId"] for h in state["hits"]]  # d1 rose
    assert pack["contextMarkdown"].startswith("# Brain search context\n\n**Query:** token refresh\n")
    for number, citation in enumerate(pack["citations"], 1):
        assert f"### [{number}] `{citation['sourceNodeId']}` (" in pack["contextMarkdown"]
        assert f"- [{number}] **{citation['title']}** `{citation['sourceNodeId']}`" in pack["contextMarkdown"]


class FailingEmbeddings(Embeddings):
    """An embedder whose queries raise ``error``."""

    def __init__(self, error: Exception) -> None:
        self.error = error
        self.name = "failing-v1"

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        raise self.error

    def embed_query(self, text: str) -> list[float]:
        raise self.error


def _failing_services(small_services: SearchServices, error: Exception) -> SearchServices:
    profile = EmbeddingProfile("a", "work", "failing", 256, ("cdm.work_item",), ("title",))
    registry = ProfileRegistry(profiles=(profile,), embedders={"failing": FailingEmbeddings(error)})
    return SearchServices(backend=small_services.backend, profiles=registry)


@pytest.mark.parametrize("error", [TimeoutError("read timed out"), ConnectionError("refused"), RuntimeError("503")])
def test_an_embedder_outage_is_unavailable_naming_it_and_logged(
    small_services: SearchServices, error: Exception, caplog: pytest.LogCaptureFixture
) -> None:
    services = _failing_services(small_services, error)
    with (
        caplog.at_level(logging.WARNING, logger="brain_graph.nodes.embed"),
        pytest.raises(BackendUnavailableError) as failed,
    ):
        embed(request("token"), deps(services))  # type: ignore[arg-type]
    assert str(failed.value) == f"embedder failing-v1 unavailable: {error}"
    assert failed.value.__cause__ is error
    assert [record.exc_info[1] for record in caplog.records if record.exc_info] == [error]


@pytest.mark.parametrize("error", [TypeError("bad argument"), KeyError("model"), AttributeError("no attribute")])
def test_a_bug_in_an_embedder_propagates_unchanged(small_services: SearchServices, error: Exception) -> None:
    with pytest.raises(type(error)) as failed:
        embed(request("token"), deps(_failing_services(small_services, error)))  # type: ignore[arg-type]
    assert failed.value is error


def test_a_server_run_names_the_unavailable_backend_without_its_detail(
    small_services: SearchServices, caplog: pytest.LogCaptureFixture
) -> None:
    detail = "https://embedder.internal:8443/v1: 503 Service Unavailable"
    graph = build_graph(_failing_services(small_services, RuntimeError(detail)))
    with pytest.raises(BackendUnavailableError) as in_process:
        graph.invoke(request("token"))  # type: ignore[arg-type]
    assert detail in str(in_process.value)  # the caller in the same process sees everything
    server_run: RunnableConfig = {"configurable": {"graph_id": "brain_search", "assistant_id": "a1"}}
    with caplog.at_level(logging.ERROR, logger="brain_graph.server"), pytest.raises(BackendUnavailableError) as served:
        graph.invoke(request("token"), server_run)  # type: ignore[arg-type]
    assert str(served.value) == f"embedder failing-v1 unavailable: {SERVER_UNAVAILABLE_DETAIL}"
    assert served.value.backend == "embedder failing-v1"
    assert any(detail in record.getMessage() for record in caplog.records if record.name == "brain_graph.server")


SERVER_RUN: RunnableConfig = {"configurable": {"graph_id": "brain_search", "assistant_id": "a1"}}


def test_a_server_run_tells_the_caller_only_the_faults_of_its_request(
    small_services: SearchServices, caplog: pytest.LogCaptureFixture
) -> None:
    graph = build_graph(small_services)
    with pytest.raises(InvalidRequestError, match=r"options\.topK"):  # the request's fault, as it is
        graph.invoke(request("token", topK=0), SERVER_RUN)  # type: ignore[arg-type]
    bug = KeyError("provider-response-field at https://embedder.internal/v1")
    with caplog.at_level(logging.ERROR, logger="brain_graph.server"), pytest.raises(InternalError) as served:
        build_graph(_failing_services(small_services, bug)).invoke(request("token"), SERVER_RUN)  # type: ignore[arg-type]
    assert str(served.value) == INTERNAL_MESSAGE
    logged = [record for record in caplog.records if record.name == "brain_graph.server"]
    assert [record.exc_info[1] for record in logged if record.exc_info] == [bug]


def test_a_server_run_hides_a_misconfigured_store(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    missing = tmp_path / "secret-volume" / "store.sqlite3"

    graph = build_graph(SearchServices(backend=EmbeddedStore(missing, explicit=True)))
    with pytest.raises(ConfigurationError, match="secret-volume"):  # in process: the whole message
        graph.invoke(request("token"))  # type: ignore[arg-type]
    with caplog.at_level(logging.ERROR, logger="brain_graph.server"), pytest.raises(InternalError) as served:
        graph.invoke(request("token"), SERVER_RUN)  # type: ignore[arg-type]
    assert "secret-volume" not in str(served.value)
    assert any("secret-volume" in record.getMessage() for record in caplog.records)


def test_a_search_too_large_for_a_server_is_told_to_the_caller_as_it_is() -> None:
    from brain_graph.core.errors import CapacityError
    from brain_graph.pipeline.binding import served_error
    from brain_graph.serving.graphql.errors import code_of

    error = CapacityError("neo4j: the transaction needs more memory than the server allows")
    assert served_error("expand", error) is None  # the request's own fault: lower maxNodes, expandDepth or topK
    assert code_of(error) == "CAPACITY_EXCEEDED"
