"""Step 3: graph expansion around the hits over allowlisted edge types, and the ranked candidates."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypedDict

from brain_graph.core.passage_heads import head_row, heads_suffice
from brain_graph.core.security import AccessScope
from brain_graph.core.wire import GraphEdge, GraphNode, NodeMeta, ScoringBreakdown, SearchCandidate
from brain_graph.observability.timing import timed_reads
from brain_graph.pipeline.binding import StepDeps
from brain_graph.pipeline.ranking import SupportTable, adjusted_score, best_via, own_score, rank_key
from brain_graph.pipeline.records import membership_row, node_meta, row_links, seed_scores
from brain_graph.pipeline.search_plan import expansion_types, passage_count, profile_queries
from brain_graph.pipeline.state import BrainSearchState, HitSource, MembershipRow, PassageTexts, SeedScores
from brain_graph.stores.base import (
    ContextRequest,
    Link,
    SearchContext,
    SearchReads,
    VectorHit,
    VectorQuery,
    best_hits,
)


class ExpandUpdate(TypedDict):
    graphNodes: list[GraphNode]
    graphEdges: list[GraphEdge]
    nodeRecords: dict[str, NodeMeta]
    candidates: list[SearchCandidate]
    clusterMemberships: list[MembershipRow] | None
    passageTexts: PassageTexts


def graph_node(node_id: str, meta: NodeMeta) -> GraphNode:
    """The wire form of a node: its label and its metadata properties (plus ``projectKey``)."""
    properties = dict(meta["properties"])
    if meta["projectKey"] is not None:
        properties["projectKey"] = meta["projectKey"]
    return {
        "nodeId": node_id,
        "nodeType": meta["nodeType"],
        "label": meta["title"],
        "properties": dict(sorted(properties.items())),
    }


def best_scores(raw: list[VectorHit]) -> dict[str, VectorHit]:
    """Each node's best hit over the profiles (score, then profile id)."""
    return {hit.node_id: hit for hit in best_hits(raw, len(raw))}


MAX_SCORED_PER_HOP = 10_000  # new nodes scored per hop: one similarity request per profile (Weaviate's page)


def reached_first(links: list[Link], frontier: list[str], admitted: set[str]) -> list[str]:
    """The new nodes of a hop, at most :data:`MAX_SCORED_PER_HOP`: those reached from the best-ranked
    frontier nodes first (frontier order, then node id), so a frontier full of large neighbourhoods
    cannot make a hop's similarity call unbounded."""
    position = {node_id: index for index, node_id in enumerate(frontier)}
    first: dict[str, int] = {}
    for link in links:
        if link.neighbor_id not in admitted:
            index = position[link.frontier_id]
            first[link.neighbor_id] = min(index, first.get(link.neighbor_id, index))
    ordered = sorted(first, key=lambda node_id: (first[node_id], node_id))[:MAX_SCORED_PER_HOP]
    return sorted(ordered)


def hop_similarity(
    reads: SearchReads,
    queries: list[VectorQuery],
    new_ids: list[str],
    scored: SeedScores | None,
    scope: AccessScope,
) -> list[VectorHit]:
    """The similarity of a hop's new nodes: for the profiles ``scored`` covers (what the backend read
    with the hop's links) from there, for the others from :meth:`SearchReads.similarity`."""
    done = set(scored["profileIds"]) if scored is not None else set()
    rest = [query for query in queries if query.profile_id not in done]
    found = reads.similarity(rest, new_ids, scope=scope) if rest else []
    if scored is None:
        return found
    wanted = set(new_ids)
    kept = [VectorHit(r["nodeId"], r["profileId"], r["score"]) for r in scored["scores"] if r["nodeId"] in wanted]
    return kept + found


def choose_new(
    links: list[Link],
    admitted: set[str],
    table: SupportTable,
    scores: dict[str, VectorHit],
    sources: Mapping[str, HitSource],
    per_node: int,
    room: int,
) -> list[str]:
    """The nodes this hop admits: of each frontier node's new neighbours its best ``per_node`` by
    :func:`~brain_graph.pipeline.ranking.rank_key` (scores so far), then of all those the best ``room``."""

    by_frontier: dict[str, set[str]] = {}
    for link in links:
        if link.neighbor_id not in admitted:
            by_frontier.setdefault(link.frontier_id, set()).add(link.neighbor_id)
    keys = {node_id: node_rank(node_id, table, scores, sources) for found in by_frontier.values() for node_id in found}
    chosen = {node_id for found in by_frontier.values() for node_id in sorted(found, key=keys.__getitem__)[:per_node]}
    return sorted(chosen, key=keys.__getitem__)[:room]


def expand(state: BrainSearchState, deps: StepDeps) -> ExpandUpdate:
    """Write ``graphNodes``, ``graphEdges``, ``candidates``, add the expanded nodes to ``nodeRecords``,
    and write ``clusterMemberships`` and ``passageTexts`` for the next steps.

    The first hop starts from the links ``retrieve`` read with the hits (``seedLinks``, and
    ``seedScores``); each further hop makes one ``hop`` read for its whole frontier (the nodes the
    previous hop admitted; hubs, above ``scoring.hub_degree`` neighbours, are not expanded through),
    its links and the similarity of the nodes they reach where the backend reads it with them. Each
    hop makes one ``similarity`` call for the new neighbours' vector scores (at most
    :data:`MAX_SCORED_PER_HOP`) in the profiles those did not cover, none when they covered all.
    Each frontier node admits at most ``scoring.neighbors_per_node`` new nodes, its best by score so
    far, and all admitted nodes, hits first, number at most ``maxNodes``. Then ONE
    :meth:`~brain_graph.stores.base.SearchReads.context` read: the metadata of the nodes new to this
    search, the edges among the admitted set, the hits' cluster memberships (when episodes are on) and
    the texts of the candidates passages are made of (ranks do not depend on metadata, so they are
    known before it). Tenant and ACL are enforced by the store. ``candidates`` are the admitted nodes
    ranked by :mod:`brain_graph.pipeline.ranking`, those whose adjusted score is below ``minScore``
    left out.

    A vector-only search (``graphContextIncluded`` false: no seed links) expands nothing and reads
    nothing: its candidates are its hits, its ``graphNodes`` empty, and no passage texts.
    """
    request = state["request"]
    options = request["options"]
    scope = deps.scope(request)
    backend = deps.services.backend
    reads = timed_reads(backend)
    scoring = deps.services.scoring
    edge_types = expansion_types(request, deps)

    hits = state["hits"][: options["maxNodes"]]
    sources = state["hitSources"]
    scores = {
        hit["nodeId"]: VectorHit(hit["nodeId"], hit["profileId"], vector)
        for hit in hits
        if (vector := hit["vectorScore"]) is not None
    }
    table = SupportTable({hit["nodeId"]: hit["score"] for hit in hits}, scoring)
    admitted = [hit["nodeId"] for hit in hits]
    frontier = list(admitted)
    queries = profile_queries(request, state["queryVectors"], deps)
    for hop in range(options["expandDepth"]):
        if not frontier or not edge_types:
            break
        scored: SeedScores | None
        if hop == 0:  # read by ``retrieve`` with the hits
            links, scored = row_links(state["seedLinks"] or [], frontier), state["seedScores"]
        else:
            found = reads.hop(queries, frontier, scope=scope, edge_types=edge_types, max_degree=scoring.hub_degree)
            links, scored = found.links, None if found.scored is None else seed_scores(found.scored)
        table.add_hop(links)
        room = options["maxNodes"] - len(admitted)
        new_ids = reached_first(links, frontier, set(admitted))
        if room <= 0 or not new_ids:
            break
        scores.update(best_scores(hop_similarity(reads, queries, new_ids, scored, scope)))
        in_reach = set(new_ids)
        considered = [link for link in links if link.neighbor_id in in_reach]
        frontier = choose_new(considered, set(admitted), table, scores, sources, scoring.neighbors_per_node, room)
        admitted.extend(frontier)

    records = dict(state["nodeRecords"])
    keys = {node_id: node_rank(node_id, table, scores, sources) for node_id in admitted}
    ranked = sorted(admitted, key=keys.__getitem__)
    floor = options["minScore"]
    if floor is not None:  # candidates below the floor are not ranked, so never cited
        ranked = [node_id for node_id in ranked if -keys[node_id][1] >= floor]
    episodes = bool(options["includeEpisodes"] and options["maxEpisodes"] > 0 and state["hits"])
    needed = ContextRequest(
        known=[node_id for node_id in admitted if node_id in records],
        new=[node_id for node_id in admitted if node_id not in records],
        records=list(records),
        edge_types=edge_types,
        members=[hit["nodeId"] for hit in state["hits"]] if episodes else [],
        ranked=ranked,
        passages=passage_count(request, deps.services.limits),
        whole_texts=not heads_suffice(
            max(deps.services.limits.longest_excerpt_chars, deps.services.profiles.longest_passage_bound)
        ),
    )
    graph = state["graphContextIncluded"]
    context = reads.context(needed, scope=scope) if graph else SearchContext([], [], [], [], {})
    records.update({node.node_id: node_meta(node) for node in sorted(context.nodes, key=lambda n: n.node_id)})
    visible = [node_id for node_id in admitted if node_id in records]
    edges: list[GraphEdge] = [
        {
            "edgeType": edge.edge_type,
            "fromNodeId": edge.from_node_id,
            "toNodeId": edge.to_node_id,
            "properties": dict(sorted(edge.properties.items())),
        }
        for edge in context.edges
    ]
    candidates = [
        candidate(
            node_id,
            records[node_id],
            sources.get(node_id),
            scores.get(node_id),
            table.breakdown(node_id, vector_score(scores, node_id), lexical_term(sources, node_id)),
        )
        for node_id in ranked
        if node_id in records
    ]
    return {
        "graphNodes": [graph_node(node_id, records[node_id]) for node_id in visible] if graph else [],
        "graphEdges": edges,
        "nodeRecords": records,
        "candidates": candidates,
        "clusterMemberships": [membership_row(m) for m in context.memberships] if episodes else None,
        "passageTexts": {
            "nodeIds": context.cited,
            "texts": {
                node_id: {name: head_row(head) for name, head in heads.items()}
                for node_id, heads in context.texts.items()
            },
        },
    }


def vector_score(scores: dict[str, VectorHit], node_id: str) -> float | None:
    """A node's vector score (None: it has no vector in the searched profiles)."""
    hit = scores.get(node_id)
    return hit.score if hit is not None else None


def lexical_term(sources: Mapping[str, HitSource], node_id: str) -> float:
    """A node's lexical term (0 unless it is a hit lexical retrieval found)."""
    source = sources.get(node_id)
    return source["lexical"] if source is not None else 0.0


def node_rank(
    node_id: str, table: SupportTable, scores: dict[str, VectorHit], sources: Mapping[str, HitSource]
) -> tuple[bool, float, float, str]:
    """The :func:`~brain_graph.pipeline.ranking.rank_key` of a node with the scores so far."""
    vector = vector_score(scores, node_id)
    lexical = lexical_term(sources, node_id)
    source = sources.get(node_id)
    exact = source is not None and source["reachedBy"] == "exact"
    return rank_key(table.adjusted(node_id, vector, lexical), own_score(vector, lexical), node_id, exact=exact)


def candidate(
    node_id: str, meta: NodeMeta, source: HitSource | None, hit: VectorHit | None, breakdown: ScoringBreakdown
) -> SearchCandidate:
    """A node with its scores and how it was reached (``source``: how a hit was found; None for a
    node reached by expansion)."""
    support = breakdown["support"]
    is_hit = source is not None
    return {
        "nodeId": node_id,
        "nodeType": meta["nodeType"],
        "title": meta["title"],
        "url": meta["url"],
        "profileId": hit.profile_id if hit is not None else None,
        "vectorScore": hit.score if hit is not None else None,
        "adjustedScore": adjusted_score(breakdown),
        "reachedBy": source["reachedBy"] if source is not None else "graph",
        "hops": 0 if is_hit or not support else support[0]["hops"],  # the hops of ``via``, its strongest path
        "via": None if is_hit else best_via(support),
        "scoringBreakdown": breakdown,
    }
