"""Graph-aware ranking: one deterministic, explainable score for every candidate of a search.

The candidates are the hits (the *seeds*, found by vector similarity, lexical match or both) plus
the nodes expansion reached from them. Each candidate ``c`` is scored

    adjustedScore(c) = own(c) + graph(c),   own(c) = vectorScore(c) + lexical(c)
    graph(c) = min(linkWeight * sum over seeds s reaching c of margin(s) * pathWeight(s, c),
                   ceiling(c) - own(c))   (never below 0)

- ``vectorScore(c)``: the similarity of ``c`` to the query in 0..1 (for expanded nodes computed the
  same way; 0 when ``c`` has no vector in the searched profiles, and in lexical mode);
- ``lexical(c)``: for the lexical hits, ``c``'s BM25 score over the best BM25 score of the search,
  times ``lexicalWeight`` and the spread of the vector hits' similarities (best minus weakest; 1 in
  lexical mode, where the weight is 1 too); 0 for every other node;
- ``margin(s) = own(s) - floor``, where ``floor`` is the weakest hit's own score: how much better than the
  weakest hit a seed matched. A seed lends a share of its own evidence, in the units of the scores, so
  the boost scales with the model's score spread and a seed at the bottom of the hit list lends nothing;
- ``pathWeight(s, c)``: the product, along the best path from ``s`` to ``c`` (at most ``expandDepth``
  hops, never through a hub), of each edge's step: the edge type's weight, divided by the *fanout* of
  the node the edge leaves (how many distinct nodes it links to in that hop) when ``fanoutSplit`` is
  on, and by ``(1 + shared) ** cliqueDamping``, where ``shared`` counts the other hits linked to both
  ends of the edge; times ``hopDecay`` for each hop after the first. A node lends its evidence split
  evenly over what it links to, so a seed with one neighbour lends it all; and two hits in a dense
  clique (near-duplicates that all mention each other, such as paragraphs of one article) are redundant
  evidence for each other, so a clique cannot lift its own members over a stronger unrelated hit;
- the sum runs over distinct seeds, the ``maxSeeds`` strongest contributions (the others are listed
  with contribution 0): several seeds agreeing on a node add up. A hit linked to another hit is
  supported by it too (a seed never supports itself);
- ``ceiling(c)`` (``seedCeiling`` on): the score of the strongest seed among the counted ones. Graph
  evidence can lift a node up to the seed that vouches for it, never above it, and a weaker seed cannot
  lift a stronger hit at all. A node without an own score (nothing says it matches the query itself)
  has the floor as its ceiling: it never passes a hit. Off: no ceiling.

Candidates are ordered by adjusted score, own score (none last), then node id; hits the query names
exactly (:func:`brain_graph.core.bm25.is_exact_match`) come before all others.

Hubs, the nodes with more than ``hubDegree`` visible neighbours over the allowlisted edges, are never
expanded through and lend no support. Everything is float64 arithmetic in a fixed order, rounded to
:data:`~brain_graph.core.scoring.SCORE_DECIMALS`, so every backend gives the same ranking.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal, NamedTuple

from pydantic import Field

from brain_graph.core.errors import ConfigurationError
from brain_graph.core.scoring import SCORE_DECIMALS
from brain_graph.core.vocabulary import check_edge_type
from brain_graph.core.wire import CandidateSupport, CandidateVia, ScoringBreakdown
from brain_graph.stores.base import Link

MAX_COUNT_SETTING = 1_000  # hub_degree, neighbors_per_node, max_seeds: bounds the work of one hop


@dataclass(frozen=True)
class Bound:
    """The inclusive range of a scoring setting, the one definition both :class:`GraphScoring` checks
    and the environment settings (:class:`brain_graph.pipeline.config.Settings`) apply.

    An ``integer`` bound admits whole numbers only (no booleans), any other a finite number."""

    low: int | float
    high: int | float
    integer: bool = False

    def admits(self, value: object) -> bool:
        """Whether ``value`` is a number of the bound's kind within it."""
        if self.integer:
            return isinstance(value, int) and not isinstance(value, bool) and self.low <= value <= self.high
        return isinstance(value, int | float) and math.isfinite(value) and self.low <= value <= self.high

    @property
    def constraint(self) -> Any:
        """The bound as pydantic ``Annotated`` metadata (``ge``/``le``), for a settings field."""
        return Field(ge=self.low, le=self.high)

    def __str__(self) -> str:
        return f"{_number(self.low)}..{_number(self.high)}"


def _number(value: int | float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


WEIGHT = Bound(0.0, 1.0)  # hop_decay and each edge weight
LINK_WEIGHT = Bound(0.0, 10.0)  # link_weight: a seed lends at most 10 times its margin; lexical_weight
DAMPING = Bound(0.0, 4.0)  # clique_damping: the exponent of (1 + shared)
COUNT = Bound(0, MAX_COUNT_SETTING, integer=True)
SETTING_BOUNDS: Mapping[str, Bound] = MappingProxyType(
    {
        "link_weight": LINK_WEIGHT,
        "lexical_weight": LINK_WEIGHT,
        "hop_decay": WEIGHT,
        "hub_degree": COUNT,
        "neighbors_per_node": COUNT,
        "max_seeds": COUNT,
        "clique_damping": DAMPING,
    }
)


OPTIONAL_SETTINGS = frozenset({"lexical_weight"})  # None: a default from elsewhere


@dataclass(frozen=True)
class GraphScoring:
    """The named settings of the graph-aware score (environment: ``BRAIN_GRAPH_GRAPH_BOOSTS``,
    ``BRAIN_GRAPH_LINK_WEIGHT``, ... see the README).

    ``graph_boosts`` off gives pure vector ranking (``adjustedScore == vectorScore``; expansion still
    finds and lists the same candidates). ``edge_weights`` maps an edge type to its weight (1.0 when
    not listed). ``neighbors_per_node`` bounds the new nodes each frontier node adds per hop, its best
    by score; ``max_seeds`` how many seeds' contributions count for one node. ``fanout_split`` divides
    each step of a path by the fanout of the node it leaves, ``clique_damping`` by ``(1 + shared) **
    clique_damping`` (``shared``: the other hits linked to both ends; 0 turns it off); ``seed_ceiling``
    keeps a node's score at or below its strongest counted seed's. ``lexical_weight`` scales the
    lexical term of hybrid retrieval (the best lexical hit adds that many times the spread of the
    vector hits' similarities); None: the searched embedders' own
    (:func:`~brain_graph.embedding.profiles.hybrid_weight`). Each numeric setting lies in its
    :data:`SETTING_BOUNDS` range, each edge weight in :data:`WEIGHT`'s. How the defaults were chosen:
    ``docs/ranking.md``."""

    graph_boosts: bool = True
    link_weight: float = 2.0
    lexical_weight: float | None = None
    hop_decay: float = 0.5
    hub_degree: int = 50
    neighbors_per_node: int = 10
    max_seeds: int = 3
    edge_weights: Mapping[str, float] = field(default_factory=dict)
    fanout_split: bool = True
    clique_damping: float = 2.0
    seed_ceiling: bool = True

    def __post_init__(self) -> None:
        for name, bound in SETTING_BOUNDS.items():
            value = getattr(self, name)
            if value is None and name in OPTIONAL_SETTINGS:
                continue
            if not bound.admits(value):
                kind = "an integer" if bound.integer else "a number"
                raise ConfigurationError(f"GraphScoring.{name} must be {kind} in {bound} (got {value!r})")
        weights = {}
        for edge_type, weight in sorted(dict(self.edge_weights).items()):
            check_edge_type(edge_type)
            if not WEIGHT.admits(weight):
                raise ConfigurationError(f"GraphScoring.edge_weights[{edge_type}] must be in {WEIGHT} (got {weight!r})")
            weights[edge_type] = float(weight)
        object.__setattr__(self, "edge_weights", weights)

    def edge_weight(self, edge_type: str) -> float:
        """The weight of an edge type (1.0 unless configured)."""
        return self.edge_weights.get(edge_type, 1.0)


class Path(NamedTuple):
    """The best way a seed reaches a node: the (tuple) order prefers the heavier path, then the
    shorter, then the smaller ids (so the choice is total)."""

    neg_weight: float
    hops: int
    via_id: str
    edge_type: str
    incoming: bool  # the edge points from the node to ``via_id`` (the node was reached against it)

    @property
    def weight(self) -> float:
        return -self.neg_weight


class SupportRow(NamedTuple):
    """A :class:`~brain_graph.core.wire.CandidateSupport` as the table keeps it (immutable)."""

    seed_id: str
    seed_score: float
    hops: int
    via_id: str
    edge_type: str
    direction: Literal["out", "in"]
    path_weight: float
    contribution: float

    def wire(self) -> CandidateSupport:
        """A new wire row."""
        return {
            "seedNodeId": self.seed_id,
            "seedScore": self.seed_score,
            "hops": self.hops,
            "viaNodeId": self.via_id,
            "edgeType": self.edge_type,
            "direction": self.direction,
            "pathWeight": self.path_weight,
            "contribution": self.contribution,
        }


class SupportTable:
    """Which seeds reach which nodes, and by their best path."""

    def __init__(self, seed_scores: Mapping[str, float], scoring: GraphScoring) -> None:
        self.seed_scores = dict(seed_scores)
        self.scoring = scoring
        self._floor = min(self.seed_scores.values(), default=0.0)  # the seeds are fixed: computed once
        self._linked_hits: dict[str, set[str]] = {}  # node -> the hits known to link to it (either direction)
        self.paths: dict[str, dict[str, Path]] = {}
        # by node: support rows, their rounded sum and the best counted seed score (kept until the next hop)
        self._support: dict[str, tuple[list[SupportRow], float, float | None]] = {}

    def add_hop(self, links: Iterable[Link]) -> None:
        """Record the paths one more hop opens: a link from frontier node ``f`` to ``n`` extends the
        paths that reached ``f`` before this hop (``f`` itself, with no hop, when it is a seed), its
        ``max_seeds + 1`` strongest ones: one step multiplies every path through ``f`` by the same
        factor, so the strongest stay the strongest, and ``n`` itself may be one of them (a seed
        never supports itself). The step is the edge type's weight, divided by ``f``'s fanout (the
        distinct nodes its links of this hop reach) with ``fanout_split``, and by ``(1 + shared) **
        clique_damping`` (:meth:`shared`). Every hop after a path's first is decayed."""
        links = list(links)
        self._support.clear()
        for link in links:  # the first hop's links are the hits' own: every hit-to-node link is known then
            if link.frontier_id in self.seed_scores:
                self._linked_hits.setdefault(link.neighbor_id, set()).add(link.frontier_id)
            if link.neighbor_id in self.seed_scores:
                self._linked_hits.setdefault(link.frontier_id, set()).add(link.neighbor_id)
        reaching = {frontier_id: self._strongest(frontier_id) for frontier_id in {link.frontier_id for link in links}}
        fanout = fanouts(links) if self.scoring.fanout_split else {}
        damping = self.scoring.clique_damping
        hop_decay = self.scoring.hop_decay
        for link in links:
            step = self.scoring.edge_weight(link.edge_type) / fanout.get(link.frontier_id, 1)
            if damping:
                step /= (1 + self.shared(link.frontier_id, link.neighbor_id)) ** damping
            for seed_id, weight, hops in reaching[link.frontier_id]:
                if seed_id == link.neighbor_id:
                    continue
                decay = hop_decay if hops >= 1 else 1.0
                path = Path(-(weight * step * decay), hops + 1, link.frontier_id, link.edge_type, not link.outgoing)
                known = self.paths.setdefault(link.neighbor_id, {})
                if seed_id not in known or path < known[seed_id]:
                    known[seed_id] = path

    def shared(self, a: str, b: str) -> int:
        """How many hits other than ``a`` and ``b`` are linked to both (as far as the hops so far read):
        0 for a lone link, 4 for two members of a clique of six hits that all link to one another."""
        linked_a, linked_b = self._linked_hits.get(a), self._linked_hits.get(b)
        if not linked_a or not linked_b:
            return 0
        return len((linked_a & linked_b) - {a, b})

    def _strongest(self, node_id: str) -> list[tuple[str, float, int]]:
        """(seed, path weight, hops) of the ``max_seeds + 1`` strongest seeds reaching ``node_id`` (by
        margin times path weight, then seed id), and the node itself, with no hop, if it is a seed."""
        floor = self.floor()
        own = [(node_id, 1.0, 0)] if node_id in self.seed_scores else []
        paths = self.paths.get(node_id)
        if not paths:
            return own
        reached = sorted(
            paths.items(),
            key=lambda item: (-(self.seed_scores[item[0]] - floor) * item[1].weight, item[1], item[0]),
        )
        kept = reached[: self.scoring.max_seeds + 1]  # one more: the neighbour may be one of them (never itself)
        return own + [(seed, path.weight, path.hops) for seed, path in kept]

    def floor(self) -> float:
        """The weakest seed's score (0 when there is none)."""
        return self._floor

    def support(self, node_id: str) -> list[CandidateSupport]:
        """The seeds reaching ``node_id``, each with its contribution, strongest first (then seed id);
        new rows on every call (computed once per node and hop)."""
        return [row.wire() for row in self._scored(node_id)[0]]

    def graph(self, node_id: str, own: float | None) -> float:
        """The graph term of the node's score: the sum of its support contributions, at most its
        :meth:`ceiling` minus its own score (:func:`own_score`; never below 0), rounded."""
        total = self._scored(node_id)[1]
        if not total:
            return total
        ceiling = self.ceiling(node_id, own)
        if ceiling is None:
            return total
        return round(min(total, max(0.0, ceiling - (own or 0.0))), SCORE_DECIMALS)

    def ceiling(self, node_id: str, own: float | None) -> float | None:
        """The score graph evidence may lift the node to (``seed_ceiling``): the best seed score among
        its counted support rows, and the floor for a node without an own score (nothing says it
        matches the query itself, so it never passes a hit); None when there is no ceiling (off, no
        boosts or no support)."""
        if not (self.scoring.seed_ceiling and self.scoring.graph_boosts):
            return None
        best = self._scored(node_id)[2]
        if best is None or own is not None:
            return best
        return min(best, self._floor)

    def _scored(self, node_id: str) -> tuple[list[SupportRow], float, float | None]:
        """The node's support rows, their rounded sum and the best seed score among the counted rows
        (None without support), kept until the next hop."""
        scored = self._support.get(node_id)
        if scored is None:
            rows = self._support_rows(node_id)
            total = round(math.fsum([row.contribution for row in rows]), SCORE_DECIMALS)
            best = max((row.seed_score for row in rows[: self.scoring.max_seeds]), default=None)
            scored = self._support[node_id] = (rows, total, best)
        return scored

    def _support_rows(self, node_id: str) -> list[SupportRow]:
        paths = self.paths.get(node_id)
        if not paths:
            return []
        floor = self._floor
        boosts = self.scoring.graph_boosts
        link_weight = self.scoring.link_weight
        rows = []
        for seed_id, path in paths.items():
            seed_score = self.seed_scores[seed_id]
            contribution = link_weight * (seed_score - floor) * path.weight if boosts else 0.0
            direction: Literal["out", "in"] = "in" if path.incoming else "out"
            rows.append(
                SupportRow(
                    seed_id,
                    seed_score,
                    path.hops,
                    path.via_id,
                    path.edge_type,
                    direction,
                    round(path.weight, SCORE_DECIMALS),
                    round(contribution, SCORE_DECIMALS),
                )
            )
        if len(rows) > 1:
            rows.sort(key=lambda row: (-row.contribution, -row.seed_score, row.hops, row.seed_id))
        counted = self.scoring.max_seeds  # listed, but only the strongest max_seeds seeds count
        if len(rows) > counted:
            rows[counted:] = [row._replace(contribution=0.0) for row in rows[counted:]]
        return rows

    def adjusted(self, node_id: str, vector_score: float | None, lexical: float = 0.0) -> float:
        """The node's adjusted score, as :func:`adjusted_score` of its :meth:`breakdown`."""
        own = own_score(vector_score, lexical)
        return round((own or 0.0) + self.graph(node_id, own), SCORE_DECIMALS)

    def breakdown(self, node_id: str, vector_score: float | None, lexical: float = 0.0) -> ScoringBreakdown:
        """Every term of the node's score."""
        vector = vector_score if vector_score is not None else 0.0
        own = own_score(vector_score, lexical)
        return {
            "vector": vector,
            "lexical": lexical,
            "graph": self.graph(node_id, own),
            "marginFloor": self.floor(),
            "linkWeight": self.scoring.link_weight if self.scoring.graph_boosts else 0.0,
            "support": self.support(node_id),
            "ceiling": self.ceiling(node_id, own),
        }


def fanouts(links: Iterable[Link]) -> dict[str, int]:
    """How many distinct nodes each frontier node's links reach (its fanout in the hop)."""
    reached: dict[str, set[str]] = {}
    for link in links:
        reached.setdefault(link.frontier_id, set()).add(link.neighbor_id)
    return {frontier_id: len(found) for frontier_id, found in reached.items()}


def own_score(vector_score: float | None, lexical: float) -> float | None:
    """A node's own evidence, ``vector + lexical`` rounded: None when it has neither a vector score
    nor a lexical term."""
    if vector_score is None and not lexical:
        return None
    return round((vector_score or 0.0) + lexical, SCORE_DECIMALS)


def adjusted_score(breakdown: ScoringBreakdown) -> float:
    """``vector + lexical + graph``, rounded (``vector + lexical`` rounded first, as :func:`own_score`)."""
    own = round(breakdown["vector"] + breakdown["lexical"], SCORE_DECIMALS)
    return round(own + breakdown["graph"], SCORE_DECIMALS)


def best_via(support: list[CandidateSupport]) -> CandidateVia | None:
    """How a node reached by expansion was reached: its strongest supporting path (None without one)."""
    if not support:
        return None
    top = support[0]
    return {
        "seedNodeId": top["seedNodeId"],
        "viaNodeId": top["viaNodeId"],
        "edgeType": top["edgeType"],
        "direction": top["direction"],
        "hops": top["hops"],
    }


def rank_key(
    adjusted: float, own: float | None, node_id: str, *, exact: bool = False
) -> tuple[bool, float, float, str]:
    """The total order of candidates: exact matches first, then adjusted score, then own score
    (none last), then node id."""
    return (not exact, -adjusted, -(own if own is not None else -1.0), node_id)


def pack_size(top_k: int, max_citations: int) -> int:
    """How many candidates the prompt pack cites: the best ``topK`` (the size the caller asked for;
    expansion changes which sources fill it, not how many), at most ``max_citations``."""
    return max(0, min(top_k, max_citations))
