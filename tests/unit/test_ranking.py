"""The graph-aware score (brain_graph.pipeline.ranking) on small hand-built graphs with chosen similarities.

Every document's embedding text starts with ``@<cosine>``: :class:`AngleEmbeddings` turns it into a
unit vector at that cosine to the query's, so each node's ``vectorScore`` is ``(1 + cosine) / 2``.
"""

from __future__ import annotations

import importlib
import math
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from langchain_core.embeddings import Embeddings

from brain_graph.core.errors import ConfigurationError
from brain_graph.embedding.profiles import default_profiles
from brain_graph.graphs.search import build_graph
from brain_graph.indexing.dataset import Dataset, load_dataset
from brain_graph.pipeline.config import Settings, build_services, edge_weight_map, load_settings
from brain_graph.pipeline.ranking import SETTING_BOUNDS, WEIGHT, GraphScoring, SupportTable, pack_size
from brain_graph.pipeline.services import SearchServices
from brain_graph.stores.base import Link
from brain_graph.stores.embedded import EmbeddedStore
from tests.helpers import edge, node, request

expand_module = importlib.import_module(
    "brain_graph.nodes.expand"
)  # the package exports the step function by that name
_COSINE = re.compile(r"@(-?[0-9.]+)")


class AngleEmbeddings(Embeddings):
    """The query is (1, 0); a text ``@c ...`` is (c, sqrt(1 - c^2)), a text without a marker (0, 1)."""

    name = "angle-embeddings"

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self._vector(text) for text in texts]

    def embed_query(self, text: str) -> list[float]:
        return [1.0, 0.0]

    @staticmethod
    def _vector(text: str) -> list[float]:
        match = _COSINE.search(text)
        cosine = float(match.group(1)) if match else 0.0
        return [cosine, math.sqrt(max(0.0, 1.0 - cosine * cosine))]


def doc(node_id: str, cosine: float | None, **extra: Any) -> dict[str, Any]:
    title = f"@{cosine} {node_id}" if cosine is not None else node_id
    return node("t1", node_id, "cdm.doc", title, text={"body": f"Body of {node_id}."}, **extra)


def similarity(cosine: float) -> float:
    return round((1.0 + cosine) / 2.0, 6)


# Hits (topK 4): h1 0.95, h2 0.90, h3 0.80 (linked to nothing), h4 0.75 (the floor).
# linked: 0.725, one REFERENCES hop from h1; noise: 0.25, one DEPENDS_ON hop from h1.
# hub: 0.55, linked from h2, with six more neighbours (behind0..5); far: two hops from h1 via linked.
# person p1 is ASSIGNED_TO from h1 (never followed); x1 is signal of h3 via an edge type not allowed.
GRAPH: dict[str, Any] = {
    "nodes": [
        doc("h1", 0.9),
        doc("h2", 0.8),
        doc("h3", 0.6),
        doc("h4", 0.5),
        doc("linked", 0.45),
        doc("noise", -0.5),
        doc("hub", 0.1),
        doc("far", 0.3),
        *(doc(f"behind{i}", 0.2) for i in range(6)),
        node("t1", "p1", "person", "Pat"),
    ],
    "edges": [
        edge("t1", "REFERENCES", "h1", "linked"),
        edge("t1", "DEPENDS_ON", "noise", "h1"),
        edge("t1", "REFERENCES", "h2", "hub"),
        *(edge("t1", "REFERENCES", "hub", f"behind{i}") for i in range(6)),
        edge("t1", "REFERENCES", "linked", "far"),
        edge("t1", "ASSIGNED_TO", "h1", "p1"),
        edge("t1", "MENTIONS", "h3", "h4"),
    ],
}


# The margin-only score (the default before issue 35): no fanout split, no seed ceiling, linkWeight 0.5.
# The tests on GRAPH pin its arithmetic; the tests further down pin the defaults.
MARGIN_ONLY: dict[str, Any] = {"link_weight": 0.5, "fanout_split": False, "clique_damping": 0.0, "seed_ceiling": False}


def services_for(tmp_path: Path, scoring: GraphScoring | None = None, graph: dict[str, Any] = GRAPH) -> SearchServices:
    store = EmbeddedStore(tmp_path / "ranking.sqlite3")
    profiles = default_profiles({"default": AngleEmbeddings()})
    if not (tmp_path / "ranking.sqlite3").exists():
        load_dataset(Dataset.model_validate(graph), store, profiles)
    return SearchServices(
        backend=store, profiles=profiles, scoring=scoring or GraphScoring(hub_degree=5, **MARGIN_ONLY)
    )


def search(services: SearchServices, **options: Any) -> dict[str, Any]:
    raw = request("query", **{"topK": 4, **options})
    raw["filter"]["profileKindIn"] = ["doc"]
    return dict(build_graph(services).invoke(raw))  # type: ignore[arg-type]


def ranked(output: dict[str, Any]) -> list[str]:
    return [c["nodeId"] for c in output["candidates"]]


def by_id(output: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["nodeId"]: c for c in output["candidates"]}


def test_hits_are_the_seeds_and_keep_their_vector_scores(tmp_path: Path) -> None:
    output = search(services_for(tmp_path))
    assert [h["nodeId"] for h in output["hits"]] == ["h1", "h2", "h3", "h4"]
    assert [h["score"] for h in output["hits"]] == [similarity(c) for c in (0.9, 0.8, 0.6, 0.5)]
    candidates = by_id(output)
    assert {k: candidates[k]["reachedBy"] for k in ("h1", "linked")} == {"h1": "vector", "linked": "graph"}
    assert candidates["linked"]["vectorScore"] == similarity(0.45)  # scored by the batched similarity call


def test_a_linked_document_outranks_an_unrelated_hit(tmp_path: Path) -> None:
    output = search(services_for(tmp_path))
    order = ranked(output)
    assert order.index("linked") < order.index("h3")  # 0.725 + 0.5 * (0.95 - 0.75) = 0.825 > 0.80
    linked = by_id(output)["linked"]
    assert linked["adjustedScore"] == round(similarity(0.45) + 0.5 * (similarity(0.9) - similarity(0.5)), 6)
    assert linked["via"] == {
        "seedNodeId": "h1",
        "viaNodeId": "h1",
        "edgeType": "REFERENCES",
        "direction": "out",
        "hops": 1,
    }
    citations = output["promptPack"]["citations"]
    assert [c["sourceNodeId"] for c in citations] == order[:4]  # the pack cites the best topK candidates
    assert "linked" in [c["sourceNodeId"] for c in citations]
    assert "h4" not in [c["sourceNodeId"] for c in citations]


def test_an_unrelated_neighbour_of_a_strong_seed_does_not_outrank_a_relevant_hit(tmp_path: Path) -> None:
    output = search(services_for(tmp_path))
    order = ranked(output)
    noise = by_id(output)["noise"]
    assert noise["via"] is not None
    assert noise["via"]["direction"] == "in"
    assert noise["scoringBreakdown"]["graph"] > 0
    assert all(order.index(hit) < order.index("noise") for hit in ("h1", "h2", "h3", "h4"))


def test_the_breakdown_adds_up_to_the_adjusted_score(tmp_path: Path) -> None:
    output = search(services_for(tmp_path), expandDepth=2)
    for candidate in output["candidates"]:
        breakdown = candidate["scoringBreakdown"]
        assert breakdown["marginFloor"] == similarity(0.5)
        total = math.fsum(row["contribution"] for row in breakdown["support"])
        assert breakdown["graph"] == round(total, 6)
        assert candidate["adjustedScore"] == round(breakdown["vector"] + breakdown["graph"], 6)
        for row in breakdown["support"]:
            expected = 0.5 * (row["seedScore"] - breakdown["marginFloor"]) * row["pathWeight"]
            assert row["contribution"] == pytest.approx(expected, abs=1e-6)
    far = by_id(output)["far"]  # h1 -> linked -> far: two hops, decayed once
    assert far["hops"] == 2
    assert far["scoringBreakdown"]["support"][0]["pathWeight"] == 0.5
    assert far["via"] == {
        "seedNodeId": "h1",
        "viaNodeId": "linked",
        "edgeType": "REFERENCES",
        "direction": "out",
        "hops": 2,
    }


def test_hubs_are_not_expanded_through(tmp_path: Path) -> None:
    hub_cut = search(services_for(tmp_path), expandDepth=2)
    assert "hub" in ranked(hub_cut)  # a hub is a candidate itself ...
    assert not any(node_id.startswith("behind") for node_id in ranked(hub_cut))  # ... but leads nowhere
    no_cut = search(services_for(tmp_path, GraphScoring(hub_degree=50, **MARGIN_ONLY)), expandDepth=2)
    assert {f"behind{i}" for i in range(6)} <= set(ranked(no_cut))


def test_graph_boosts_off_is_pure_vector_ranking(tmp_path: Path) -> None:
    output = search(services_for(tmp_path, GraphScoring(graph_boosts=False, hub_degree=5, **MARGIN_ONLY)))
    candidates = output["candidates"]
    assert all(c["adjustedScore"] == (c["vectorScore"] or 0.0) for c in candidates)
    assert all(row["contribution"] == 0.0 for c in candidates for row in c["scoringBreakdown"]["support"])
    scores = [(-(c["vectorScore"] or 0.0), c["nodeId"]) for c in candidates]
    assert scores == sorted(scores)
    assert [c["sourceNodeId"] for c in output["promptPack"]["citations"]] == ["h1", "h2", "h3", "h4"]


def test_depth_zero_cites_the_hits(tmp_path: Path) -> None:
    output = search(services_for(tmp_path), expandDepth=0)
    assert ranked(output) == ["h1", "h2", "h3", "h4"]
    assert all(c["scoringBreakdown"]["support"] == [] for c in output["candidates"])


def test_the_facts_are_exactly_the_allowlisted_relationships_among_cited_items(tmp_path: Path) -> None:
    output = search(services_for(tmp_path), topK=6)
    cited = [c["sourceNodeId"] for c in output["promptPack"]["citations"]]
    numbers = {node_id: n for n, node_id in enumerate(cited, 1)}
    allowed = {"REFERENCES", "DEPENDS_ON", "DOCUMENTS", "IMPLEMENTED_BY", "HAS_SIGNAL", "IN_CLUSTER"}
    expected = sorted(
        (numbers[e["fromNodeId"]], e["edgeType"], numbers[e["toNodeId"]])
        for e in GRAPH["edges"]
        if e["edgeType"] in allowed and e["fromNodeId"] in numbers and e["toNodeId"] in numbers
    )
    assert expected  # h1 -> linked at least
    markdown = output["promptPack"]["contextMarkdown"]
    section = markdown.split("## Graph facts\n", 1)[1].split("\n## Passages", 1)[0]
    facts = re.findall(r"^- \[(\d+)\] .* -([A-Z_]+)-> \[(\d+)\] ", section, flags=re.MULTILINE)
    assert [(int(a), t, int(b)) for a, t, b in facts] == expected
    assert "MENTIONS" not in section
    assert "ASSIGNED_TO" not in section


def test_several_seeds_add_up_and_a_seed_never_supports_itself() -> None:
    table = SupportTable({"a": 0.9, "b": 0.8, "c": 0.7}, GraphScoring(**MARGIN_ONLY))
    table.add_hop(
        [
            Link("a", "REFERENCES", "x", True),
            Link("b", "REFERENCES", "x", False),
            Link("a", "REFERENCES", "b", True),
            Link("b", "REFERENCES", "a", False),
        ]
    )
    support = table.support("x")
    assert [row["seedNodeId"] for row in support] == ["a", "b"]
    assert table.breakdown("x", 0.5)["graph"] == round(0.5 * 0.2 + 0.5 * 0.1, 6)
    assert [row["seedNodeId"] for row in table.support("a")] == ["b"]  # not a itself
    assert [row["seedNodeId"] for row in table.support("b")] == ["a"]


def test_edge_weights_and_the_best_path_per_seed() -> None:
    scoring = GraphScoring(edge_weights={"IN_CLUSTER": 0.25}, **MARGIN_ONLY)
    table = SupportTable({"a": 0.9, "z": 0.5}, scoring)
    table.add_hop([Link("a", "IN_CLUSTER", "x", True), Link("a", "REFERENCES", "y", True)])
    table.add_hop([Link("y", "REFERENCES", "x", True)])
    (row,) = table.support("x")
    assert (row["hops"], row["edgeType"], row["pathWeight"]) == (2, "REFERENCES", 0.5)  # 1 * 0.5 beats 0.25


@pytest.mark.parametrize(
    "settings",
    [{"link_weight": -0.1}, {"hop_decay": 1.5}, {"hub_degree": -1}, {"edge_weights": {"bad type": 0.5}}],
)
def test_settings_are_validated(settings: dict[str, Any]) -> None:
    with pytest.raises(ConfigurationError, match=r"GraphScoring|edge type"):
        GraphScoring(**settings)


def _admitted(make: Callable[[], object]) -> bool:
    try:
        make()
    except ConfigurationError:
        return False
    return True


@pytest.mark.parametrize("name", sorted(SETTING_BOUNDS))
def test_the_environment_and_the_scoring_admit_the_same_values(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """One bound per setting: its environment variable and GraphScoring accept and refuse alike."""
    bound = SETTING_BOUNDS[name]
    step = 1 if bound.integer else 0.001
    variable = str(Settings.model_fields[name].validation_alias)
    for value in (bound.low - step, bound.low, bound.high, bound.high + step):
        monkeypatch.setenv(variable, str(value))
        from_environment = _admitted(load_settings)
        in_scoring = _admitted(lambda value=value: GraphScoring(**{name: value}))
        assert from_environment == in_scoring == (value in (bound.low, bound.high)), (name, value)


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"link_weight": 10.5}, "GraphScoring.link_weight must be a number in 0..10 (got 10.5)"),
        ({"hop_decay": float("nan")}, "GraphScoring.hop_decay must be a number in 0..1 (got nan)"),
        ({"max_seeds": 1001}, "GraphScoring.max_seeds must be an integer in 0..1000 (got 1001)"),
        ({"hub_degree": True}, "GraphScoring.hub_degree must be an integer in 0..1000 (got True)"),
        ({"edge_weights": {"REFERENCES": -1}}, "GraphScoring.edge_weights[REFERENCES] must be in 0..1 (got -1)"),
    ],
)
def test_a_setting_out_of_bounds_names_its_range(settings: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigurationError) as error:
        GraphScoring(**settings)
    assert str(error.value) == message


def test_edge_weights_from_the_environment_have_the_scorings_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    for weight, admitted in ((WEIGHT.low, True), (WEIGHT.high, True), (WEIGHT.high + 0.001, False)):
        monkeypatch.setenv("BRAIN_GRAPH_EDGE_WEIGHTS", f"IN_CLUSTER={weight}")
        if admitted:
            assert edge_weight_map(load_settings().edge_weights) == {"IN_CLUSTER": weight}
            assert GraphScoring(edge_weights={"IN_CLUSTER": weight}).edge_weight("IN_CLUSTER") == weight
        else:
            with pytest.raises(ConfigurationError, match=r"weights in 0\.\.1;"):
                load_settings()
            assert not _admitted(lambda weight=weight: GraphScoring(edge_weights={"IN_CLUSTER": weight}))


def test_pack_size_is_top_k_within_the_citation_limit() -> None:
    assert (pack_size(20, 60), pack_size(100, 60), pack_size(5, 60)) == (20, 60, 5)


def test_the_scoring_settings_come_from_the_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("BRAIN_GRAPH_BACKEND", "embedded")
    monkeypatch.setenv("BRAIN_GRAPH_STORE_PATH", str(tmp_path / "unused.sqlite3"))
    monkeypatch.setenv("BRAIN_GRAPH_GRAPH_BOOSTS", "false")
    monkeypatch.setenv("BRAIN_GRAPH_LINK_WEIGHT", "0.25")
    monkeypatch.setenv("BRAIN_GRAPH_HUB_DEGREE", "7")
    monkeypatch.setenv("BRAIN_GRAPH_EDGE_WEIGHTS", "IN_CLUSTER=0.5, REFERENCES=1")
    monkeypatch.setenv("BRAIN_GRAPH_FANOUT_SPLIT", "false")
    monkeypatch.setenv("BRAIN_GRAPH_SEED_CEILING", "false")
    scoring = build_services(load_settings()).scoring
    assert scoring == GraphScoring(
        graph_boosts=False,
        link_weight=0.25,
        hub_degree=7,
        edge_weights={"IN_CLUSTER": 0.5, "REFERENCES": 1.0},
        fanout_split=False,
        seed_ceiling=False,
    )


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("BRAIN_GRAPH_EDGE_WEIGHTS", "IN_CLUSTER=2"),
        ("BRAIN_GRAPH_EDGE_WEIGHTS", "in cluster=0.5"),
        ("BRAIN_GRAPH_EDGE_WEIGHTS", "IN_CLUSTER"),
        ("BRAIN_GRAPH_LINK_WEIGHT", "10.5"),
        ("BRAIN_GRAPH_FANOUT_SPLIT", "sometimes"),
        ("BRAIN_GRAPH_HUB_DEGREE", "-1"),
    ],
)
def test_a_bad_scoring_variable_is_one_line_naming_it(
    monkeypatch: pytest.MonkeyPatch, variable: str, value: str
) -> None:
    monkeypatch.setenv(variable, value)
    with pytest.raises(ConfigurationError) as error:
        load_settings()
    message = str(error.value)
    assert message.startswith(f"{variable}: ")
    assert "\n" not in message


def test_a_hop_scores_a_bounded_number_of_new_nodes_best_frontier_first(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(expand_module, "MAX_SCORED_PER_HOP", 3)
    links = [
        Link("f2", "REFERENCES", "a", True),
        Link("f1", "REFERENCES", "z", True),
        Link("f1", "REFERENCES", "y", False),
        Link("f2", "REFERENCES", "y", True),
        Link("f2", "REFERENCES", "b", True),
        Link("f1", "REFERENCES", "f2", True),
    ]
    # f1's new neighbours (y, z) come first, then f2's by id (a before b); f2 is already admitted
    assert expand_module.reached_first(links, ["f1", "f2"], {"f1", "f2"}) == ["a", "y", "z"]


def test_a_node_admitted_after_the_hop_that_first_reached_it_still_passes_support_on() -> None:
    """y is reached at hop 1 but admitted only at hop 2 (say, cut by neighbors_per_node at hop 1):
    its links at hop 3 extend its best path, so z is supported through it."""
    table = SupportTable({"a": 0.9, "b": 0.5}, GraphScoring(**MARGIN_ONLY))
    table.add_hop([Link("a", "REFERENCES", "x", True), Link("a", "REFERENCES", "y", True)])
    table.add_hop([Link("x", "REFERENCES", "y", True)])
    table.add_hop([Link("y", "REFERENCES", "z", True)])
    (row,) = table.support("z")
    assert (row["seedNodeId"], row["hops"], row["viaNodeId"], row["pathWeight"]) == ("a", 2, "y", 0.5)


def test_only_the_strongest_max_seeds_paths_are_extended() -> None:
    table = SupportTable({"a": 0.9, "b": 0.8, "c": 0.7, "e": 0.6, "d": 0.5}, GraphScoring(max_seeds=2, **MARGIN_ONLY))
    table.add_hop([Link(seed, "REFERENCES", "x", True) for seed in ("a", "b", "c", "e")])
    table.add_hop([Link("x", "REFERENCES", "y", True), Link("x", "REFERENCES", "a", False)])
    assert [row["seedNodeId"] for row in table.support("y")] == ["a", "b", "c"]  # max_seeds + 1 extended
    assert [row["contribution"] > 0 for row in table.support("y")] == [True, True, False]  # two count
    assert [row["seedNodeId"] for row in table.support("a")] == ["b", "c"]  # a reached back through x


# Issue 35: the defaults (fanout split, clique damping, seed ceiling, linkWeight 2) on small graphs.
# CLIQUE: a1..a6 are six paragraphs of one article, each mentioning the others (a clique of hits);
# b is a stronger unrelated hit; f is the floor.
CLIQUE: dict[str, Any] = {
    "nodes": [
        doc("a1", 0.9),
        doc("b", 0.86),
        *(doc(f"a{i}", cosine) for i, cosine in zip(range(2, 7), (0.8, 0.78, 0.76, 0.74, 0.72), strict=True)),
        doc("f", 0.5),
    ],
    "edges": [edge("t1", "REFERENCES", f"a{i}", f"a{j}") for i in range(1, 7) for j in range(1, 7) if i != j],
}
# REACH: the top seed t links only to g, which is far less similar than every hit; the weak seed w
# (just above the floor f) links only to u, as dissimilar as g.
REACH: dict[str, Any] = {
    "nodes": [
        doc("t", 0.9),
        doc("h2", 0.8),
        doc("h3", 0.78),
        doc("h4", 0.76),
        doc("w", 0.56),
        doc("f", 0.5),
        doc("g", 0.2),
        doc("u", 0.2),
    ],
    "edges": [edge("t1", "REFERENCES", "t", "g"), edge("t1", "REFERENCES", "w", "u")],
}


def test_a_duplicate_title_clique_does_not_push_a_stronger_unrelated_hit_down(tmp_path: Path) -> None:
    services = services_for(tmp_path, GraphScoring(), graph=CLIQUE)
    order = ranked(search(services, topK=8))
    assert order[:2] == ["a1", "b"]  # vector order: a1 0.95, b 0.93, a2 0.90, ...
    assert order == ["a1", "b", "a2", "a3", "a4", "a5", "a6", "f"]
    # a seed and a member share the four other members: each lends (1 + 4) ** 2 = 25 times less
    a2 = by_id(search(services, topK=8))["a2"]["scoringBreakdown"]
    assert 0 < a2["graph"] < similarity(0.86) - similarity(0.8)
    # without the damping (or with the margin-only score) the clique lifts a2 over b
    for scoring in (GraphScoring(clique_damping=0.0), GraphScoring(**MARGIN_ONLY)):
        undamped = ranked(search(services_for(tmp_path, scoring, graph=CLIQUE), topK=8))
        assert undamped.index("a2") < undamped.index("b")


def test_a_weak_similarity_neighbour_of_the_top_seed_enters_the_first_n(tmp_path: Path) -> None:
    output = search(services_for(tmp_path, GraphScoring(), graph=REACH), topK=6)
    assert ranked(output)[:3] == ["t", "g", "h2"]  # lifted to t's score (the ceiling), after t
    g = by_id(output)["g"]
    assert g["vectorScore"] == similarity(0.2)
    breakdown = g["scoringBreakdown"]
    (row,) = breakdown["support"]
    assert (row["seedNodeId"], row["pathWeight"]) == ("t", 1.0)  # t's only link: the whole margin
    assert row["contribution"] == round(2.0 * (similarity(0.9) - similarity(0.5)), 6)  # 0.4
    assert breakdown["graph"] == round(similarity(0.9) - similarity(0.2), 6)  # capped at t's score
    assert g["adjustedScore"] == similarity(0.9)
    citations = [c["sourceNodeId"] for c in output["promptPack"]["citations"]]
    assert citations[:3] == ["t", "g", "h2"]
    # the margin-only score leaves g below every hit
    margin_only = ranked(search(services_for(tmp_path, GraphScoring(**MARGIN_ONLY), graph=REACH), topK=6))
    assert margin_only.index("g") > margin_only.index("f")


def test_an_unrelated_neighbour_of_a_weak_seed_does_not_enter_the_first_n(tmp_path: Path) -> None:
    output = search(services_for(tmp_path, GraphScoring(), graph=REACH), topK=6)
    order = ranked(output)
    assert order[-1] == "u"  # 0.6 + 2 * 0.03: below every hit, the floor included
    assert "u" not in [c["sourceNodeId"] for c in output["promptPack"]["citations"]]
    assert by_id(output)["u"]["adjustedScore"] == round(similarity(0.2) + 2.0 * (similarity(0.56) - 0.75), 6)


def test_the_default_breakdown_adds_up_and_respects_the_ceiling(tmp_path: Path) -> None:
    for name, graph in (("graph", GRAPH), ("clique", CLIQUE), ("reach", REACH)):
        (tmp_path / name).mkdir()
        output = search(services_for(tmp_path / name, GraphScoring(), graph=graph), topK=6, expandDepth=2)
        for candidate in output["candidates"]:
            breakdown = candidate["scoringBreakdown"]
            total = round(math.fsum(row["contribution"] for row in breakdown["support"]), 6)
            counted = [row["seedScore"] for row in breakdown["support"][:3]]
            ceiling = max(counted) if counted else None
            if ceiling is not None and candidate["vectorScore"] is None:
                ceiling = min(ceiling, breakdown["marginFloor"])
            vector = breakdown["vector"]
            expected = total if ceiling is None else round(min(total, max(0.0, ceiling - vector)), 6)
            assert breakdown["graph"] == expected
            assert candidate["adjustedScore"] == round(vector + breakdown["graph"], 6)
            if ceiling is not None:
                assert candidate["adjustedScore"] <= max(ceiling, vector)


def test_clique_damping_counts_the_hits_linked_to_both_ends() -> None:
    table = SupportTable({"a": 0.9, "b": 0.8, "c": 0.7, "d": 0.6}, GraphScoring())
    table.add_hop(
        [
            Link("a", "REFERENCES", "b", True),
            Link("b", "REFERENCES", "a", False),
            Link("a", "REFERENCES", "x", True),
            Link("c", "REFERENCES", "a", True),
            Link("c", "REFERENCES", "b", True),
            Link("d", "REFERENCES", "x", True),
        ]
    )
    assert table.shared("a", "b") == 1  # c links to both
    assert table.shared("a", "x") == 0  # d links to x, not to a
    assert table.shared("c", "d") == 0
