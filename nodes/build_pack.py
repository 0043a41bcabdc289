"""Step 6: the prompt pack, deterministic markdown context plus structured citations.

The markdown has the sections ``# Brain search context`` (query and scope), ``## Episodes``,
``## Sources`` (the cited candidates in rank order, with their scores and how each was reached),
``## Graph facts`` (the allowlisted relationships among the cited sources, as background) and
``## Passages`` (one ``### [n] ...`` heading and one fenced block per passage).

Neutralisation: no text from the data or the request can open, close or forge a section. Passage
bodies are fenced with a backtick fence longer than any backtick run inside them (bidi controls
removed); every inline field is put on one line without format characters and markdown-escaped, bare
URLs included (:func:`brain_graph.core.text.inline`), identifiers are code spans
(:func:`brain_graph.core.text.code_span`), and only safe ``http(s)`` URLs are printed, as ``<url>``
autolinks (:func:`brain_graph.core.text.safe_url`). The only headings, fences and links of the markdown
are the pack's own.

Citations: the best ``topK`` candidates (hits and expanded nodes, ranked by :mod:`brain_graph.pipeline.ranking`;
at most ``max_citations``), numbered from 1, so the first N citations are the best N sources. Every
source, episode member reference, fact and passage the markdown lists carries its ``[n]``; candidates
beyond the citation limit are not listed (one line says how many), and neither are their passages.

Length: every printed field has a limit, so ``len(contextMarkdown) <= context_markdown_bound(limits)``
whatever the data (220,097 characters at the default limits; typical packs are far smaller).
"""

from __future__ import annotations

from typing import TypedDict

from brain_graph.core.contracts import MAX_FILTER_VALUES, MAX_MAX_EPISODES, MAX_QUERY_CHARS
from brain_graph.core.text import (
    clean_block,
    clip,
    code_span,
    excerpt,
    fence_overhead,
    fenced,
    inline,
    one_line,
    safe_url,
)
from brain_graph.core.vocabulary import MAX_EDGE_TYPE_CHARS
from brain_graph.core.wire import (
    Citation,
    FiltersApplied,
    GraphEdge,
    PromptPack,
    RagPassage,
    SearchCandidate,
    SearchEpisode,
    SearchRequest,
)
from brain_graph.pipeline.binding import StepDeps
from brain_graph.pipeline.ranking import pack_size
from brain_graph.pipeline.services import SearchLimits
from brain_graph.pipeline.state import BrainSearchState

SCORE_FORMAT = "{:.4f}"
SCORE_CAP = 999_999.0  # scores print in at most len("-999999.0000") characters
SCORE_CHARS = len(SCORE_FORMAT.format(-SCORE_CAP))
COUNT_CAP = 999_999_999  # counts print in at most 9 digits
COUNT_CHARS = len(str(COUNT_CAP))
QUERY_CHARS = 2 * MAX_QUERY_CHARS  # a valid query is never cut, even fully escaped

TITLE = "# Brain search context"
QUERY_LINE = "**Query:** {query}"
SCOPE_LINE = "**Scope:** tenant {tenant}, {scope}"
SCOPE_PROJECT = "project {project}"
SCOPE_ALL = "all projects"
FILTERS_LINE = "**Filters:** {parts}"  # only when retrieval was narrowed beyond the project
FILTER_PARTS = {"nodeTypes": "node types {values}", "namespaces": "namespaces {values}", "tags": "tags {values}"}
UPDATED_PART = "updated after {cutoff}"
FILTER_SEPARATOR = "; "
NO_GRAPH_LINE = (  # a vector-only result (graphContextIncluded false): one fixed line, whatever the data
    "**Graph context not included:** the graph store was unavailable; the sources are vector matches only, "
    "without node types, titles, relationships, episodes or passages."
)
EPISODES = "## Episodes"
EPISODE_LINE = (
    "{index}. **{label}** ({kind}, project {project}) score {score}; {matched} of {size} members match: {refs}{uncited}"
)
UNCITED = "(+{count} not cited)"
NO_EPISODES = "_No episodes._"
SOURCES = "## Sources"
SOURCE_LINE = (
    "- [{number}] **{title}** {node_id} ({node_type}) score {score} (similarity {vector}{lexical}, graph +{graph});"
    " {how}{link}"
)
LEXICAL_PART = ", lexical +{lexical}"  # only for a node with a lexical term
HIT_KINDS = {"vector": "vector hit", "lexical": "lexical hit", "exact": "exact match"}
REACHED = "via {seed} {arrow}{hops}"
ARROW = {"out": "-{edge}->", "in": "<-{edge}-"}
HOPS = " ({hops} hops, last from {via})"
NO_SIMILARITY = "-"
LEFT_OUT = "_Not cited: {count} more candidate(s); the pack cites the best {limit}._"
NO_SOURCES = "_No sources._"
FACTS = "## Graph facts"
FACTS_NOTE = "_Background: relationships among the cited sources (not sources themselves)._"
FACT_LINE = "- [{source}] **{source_title}** -{edge}-> [{target}] **{target_title}**"
FACTS_LEFT_OUT = "_{count} more relationships are not listed._"
NO_FACTS = "_No relationships among the cited sources._"
PASSAGES = "## Passages"
PASSAGE_HEADING = "### [{number}] {node_id} ({kind}){link}"
NO_PASSAGES = "_No passages._"
LINK = " <{url}>"


def _score(value: float) -> str:
    """Four decimals, clamped to ``±SCORE_CAP``."""
    return SCORE_FORMAT.format(min(max(value, -SCORE_CAP), SCORE_CAP))


def _count(value: int) -> str:
    """A count, clamped to ``0..COUNT_CAP``."""
    return str(min(max(value, 0), COUNT_CAP))


def _link(url: str | None, limits: SearchLimits) -> str:
    """`` <url>`` for a safe url, else nothing."""
    safe = safe_url(url, limits.max_url_chars)
    return LINK.format(url=safe) if safe else ""


def distinct(candidates: list[SearchCandidate]) -> list[SearchCandidate]:
    """The candidates in rank order, each node once (its first, best-ranked entry)."""
    first: dict[str, SearchCandidate] = {}
    for item in candidates:
        first.setdefault(item["nodeId"], item)
    return list(first.values())


def citation_title(title: str | None, limits: SearchLimits) -> str | None:
    """A citation's title: one line without format characters (bidi controls, zero-width characters:
    :func:`~brain_graph.core.text.one_line`), at most ``max_title_chars`` (cut with ``…``)."""
    return None if title is None else clip(one_line(title), limits.max_title_chars)


def header_lines(request: SearchRequest, limits: SearchLimits, *, graph_context: bool = True) -> list[str]:
    """Title, query, scope, the filters, and :data:`NO_GRAPH_LINE` without graph context."""
    project = request["filter"]["projectKey"]
    scope = SCOPE_ALL if project is None else SCOPE_PROJECT.format(project=code_span(project, limits.max_id_chars))
    lines = [
        TITLE,
        "",
        QUERY_LINE.format(query=inline(request["queryText"], QUERY_CHARS)),
        SCOPE_LINE.format(tenant=code_span(request["filter"]["tenantId"], limits.max_id_chars), scope=scope),
    ]
    parts = filter_parts(request["filtersApplied"], limits)
    if parts:
        lines.append(FILTERS_LINE.format(parts=FILTER_SEPARATOR.join(parts)))
    if not graph_context:
        lines.append(NO_GRAPH_LINE)
    return lines


def filter_parts(applied: FiltersApplied, limits: SearchLimits) -> list[str]:
    """What narrowed retrieval beyond the project, each value a code span of at most ``max_id_chars``."""
    parts = []
    given = {"nodeTypes": applied["nodeTypes"], "namespaces": applied["namespaces"], "tags": applied["tags"]}
    for key, template in FILTER_PARTS.items():
        values = given[key]
        if values:
            parts.append(template.format(values=", ".join(code_span(value, limits.max_id_chars) for value in values)))
    if applied["updatedAfter"] is not None:
        parts.append(UPDATED_PART.format(cutoff=code_span(applied["updatedAfter"], limits.max_id_chars)))
    return parts


def episode_line(index: int, episode: SearchEpisode, label: str, numbers: dict[str, int], limits: SearchLimits) -> str:
    """One episode: label, kind, project, score, and the ``[n]`` of its cited member hits."""
    members = list(dict.fromkeys(episode["memberNodeIds"]))
    cited = [numbers[member] for member in members if member in numbers]
    uncited = len(members) - len(cited)
    return EPISODE_LINE.format(
        index=index,
        label=inline(label, limits.max_title_chars),
        kind=inline(episode["clusterKind"], limits.max_kind_chars),
        project=inline(episode["projectKey"], limits.max_id_chars),
        score=_score(episode["score"]),
        matched=_count(len(members)),
        size=_count(episode["size"]),
        refs="".join(f"[{number}]" for number in cited),
        uncited=(" " if cited else "") + UNCITED.format(count=_count(uncited)) if uncited else "",
    )


def _ref(node_id: str, numbers: dict[str, int], limits: SearchLimits) -> str:
    """``[n]`` for a cited node, else its id as a code span."""
    number = numbers.get(node_id)
    return f"[{number}]" if number is not None else code_span(node_id, limits.max_id_chars)


def how_reached(item: SearchCandidate, numbers: dict[str, int], limits: SearchLimits) -> str:
    """``vector hit``, ``lexical hit`` or ``exact match`` for a hit, else ``via [s] -EDGE->``
    (``<-EDGE-`` when the edge points at the seed side), with the number of hops and the node of the
    last edge when the path is longer than one hop."""
    via = item["via"]
    reached = item["reachedBy"]
    if reached != "graph" or via is None:
        return HIT_KINDS.get(reached, HIT_KINDS["vector"])
    edge = inline(via["edgeType"], MAX_EDGE_TYPE_CHARS)
    hops = HOPS.format(hops=_count(via["hops"]), via=_ref(via["viaNodeId"], numbers, limits)) if via["hops"] > 1 else ""
    return REACHED.format(
        seed=_ref(via["seedNodeId"], numbers, limits), arrow=ARROW[via["direction"]].format(edge=edge), hops=hops
    )


def lexical_part(lexical: float) -> str:
    """``, lexical +x`` for a node with a lexical term, else nothing."""
    return LEXICAL_PART.format(lexical=_score(lexical)) if lexical else ""


def source_line(number: int, item: SearchCandidate, numbers: dict[str, int], limits: SearchLimits) -> str:
    """One cited candidate: title (or id), id, node type, scores, how it was reached, url."""
    vector = item["vectorScore"]
    return SOURCE_LINE.format(
        number=number,
        title=inline(item["title"] or item["nodeId"], limits.max_title_chars),
        node_id=code_span(item["nodeId"], limits.max_id_chars),
        node_type=inline(item["nodeType"], limits.max_kind_chars),
        score=_score(item["adjustedScore"]),
        vector=_score(vector) if vector is not None else NO_SIMILARITY,
        lexical=LEXICAL_PART.format(lexical=_score(lexical))
        if (lexical := item["scoringBreakdown"]["lexical"])
        else "",
        graph=_score(item["scoringBreakdown"]["graph"]),
        how=how_reached(item, numbers, limits),
        link=_link(item["url"], limits),
    )


def fact_lines(
    edges: list[GraphEdge], cited: list[SearchCandidate], numbers: dict[str, int], limits: SearchLimits
) -> list[str]:
    """The allowlisted relationships among the cited sources, ordered by (source number, edge type,
    target number), at most ``max_facts`` of them, then one line saying how many are left out."""
    titles = {item["nodeId"]: item["title"] or item["nodeId"] for item in cited}
    facts = sorted(
        {
            (numbers[edge["fromNodeId"]], edge["edgeType"], numbers[edge["toNodeId"]])
            for edge in edges
            if edge["fromNodeId"] in numbers and edge["toNodeId"] in numbers
        }
    )
    by_number = {number: node_id for node_id, number in numbers.items()}
    lines = [
        FACT_LINE.format(
            source=source,
            source_title=inline(titles[by_number[source]], limits.max_title_chars),
            edge=inline(edge_type, MAX_EDGE_TYPE_CHARS),
            target=target,
            target_title=inline(titles[by_number[target]], limits.max_title_chars),
        )
        for source, edge_type, target in facts[: limits.max_facts]
    ]
    if len(facts) > limits.max_facts:
        lines.append(FACTS_LEFT_OUT.format(count=_count(len(facts) - limits.max_facts)))
    return lines


def passage_body(text: str, remaining: int, limits: SearchLimits) -> str | None:
    """A passage text as the pack prints it: at most ``max_passage_chars``, and fenced within
    ``remaining`` characters of the passage budget; ``None`` if it would be cut below
    ``min_passage_chars``. (Passages from ``assemble_passages`` already fit and pass unchanged.)"""
    body = clean_block(text)
    if len(body) > limits.max_passage_chars:
        body = excerpt(body, limits.max_passage_chars, code=True)
    room = remaining - fence_overhead(body)
    if len(body) <= room:
        return body
    if room < limits.min_passage_chars:
        return None
    return excerpt(body, room, code=True)


def passage_lines(passages: list[RagPassage], numbers: dict[str, int], limits: SearchLimits) -> list[str]:
    """The passages of cited hits in order (at most ``min(max_passages, max_citations)``), each a
    heading and a fenced block, the blocks within the passage budget."""
    lines: list[str] = []
    remaining = limits.passage_budget_chars
    count, most = 0, min(limits.max_passages, limits.max_citations)
    for passage in passages:
        number = numbers.get(passage["sourceNodeId"])
        if number is None:
            continue
        body = passage_body(passage["text"], remaining, limits) if count < most else None
        if body is None:
            break
        block = fenced(body)
        heading = PASSAGE_HEADING.format(
            number=number,
            node_id=code_span(passage["sourceNodeId"], limits.max_id_chars),
            kind=inline(passage["sourceKind"], limits.max_kind_chars),
            link=_link(passage["url"], limits),
        )
        lines += [heading, "", block, ""]
        remaining -= len(block)
        count += 1
    return lines


def render_markdown(
    request: SearchRequest,
    candidates: list[SearchCandidate],
    episodes: list[SearchEpisode],
    episode_labels: dict[str, str],
    edges: list[GraphEdge],
    passages: list[RagPassage],
    limits: SearchLimits,
    *,
    graph_context: bool = True,
) -> str:
    """The context markdown: query, episodes, cited sources, the facts among them and their passages,
    each cited by ``[n]`` (see the module doc for the neutralisation rule and the length bound);
    ``graph_context`` False (a vector-only result) adds :data:`NO_GRAPH_LINE` to the header."""
    ranked = distinct(candidates)
    size = pack_size(request["options"]["topK"], limits.max_citations)
    cited = ranked[:size]
    numbers = {item["nodeId"]: number for number, item in enumerate(cited, 1)}
    lines = [*header_lines(request, limits, graph_context=graph_context), "", EPISODES, ""]
    shown = episodes[: min(request["options"]["maxEpisodes"], MAX_MAX_EPISODES)]
    for index, episode in enumerate(shown, 1):
        label = episode_labels.get(episode["clusterNodeId"], episode["clusterNodeId"])
        lines.append(episode_line(index, episode, label, numbers, limits))
    if not shown:
        lines.append(NO_EPISODES)
    lines += ["", SOURCES, ""]
    lines += [source_line(number, item, numbers, limits) for number, item in enumerate(cited, 1)] or [NO_SOURCES]
    if len(ranked) > len(cited):
        lines.append(LEFT_OUT.format(count=_count(len(ranked) - len(cited)), limit=size))
    lines += ["", FACTS, "", FACTS_NOTE, ""]
    lines += fact_lines(edges, cited, numbers, limits) or [NO_FACTS]
    lines += ["", PASSAGES, ""]
    lines += passage_lines(passages, numbers, limits) or [NO_PASSAGES, ""]
    return "\n".join(lines).rstrip() + "\n"


class _Blank(dict[str, str]):
    """Formats every field of a template as nothing."""

    def __missing__(self, key: str) -> str:
        return ""


def _template_chars(template: str) -> int:
    """Characters of a line template without its fields."""
    return len(template.format_map(_Blank()))


def context_markdown_bound(limits: SearchLimits) -> int:
    """Upper bound of ``len(contextMarkdown)`` under ``limits``, whatever the data and request.

    With T, I, K, U the title, id, kind and url limits, C citations, F facts, P passages, E = 50
    episodes, Q = 4,000 (twice the query limit) and X = 64 (edge types), counting one line break per line:

    - header: ``# Brain search context``, query line (Q), scope line (I + ``project `` + I), the
      filters line (three lists of at most 50 values, each I, and a cutoff I), the no-graph line
    - E episode lines: label T, kind K, project I, score 12, two counts 9, the refs ``[1]..[C]``
      and ``(+N not cited)``
    - C source lines: title T, id I, node type K, three scores 12, how it was reached (two
      references, each ``[n]`` or an id I, an edge type X and a count 9), `` <url>`` U + 3; plus
      the left-out line
    - the facts note, F fact lines (two ``[n]``, two titles T, an edge type X) and their left-out line
    - P passage headings (id I, kind K, url U + 3) and their fenced bodies, at most the passage
      budget in all (it counts the fences) and at most 3 * max_passage_chars + 4 each, plus four
      line breaks each
    - the fixed section lines.
    """
    ids, kinds, titles = limits.max_id_chars, limits.max_kind_chars, limits.max_title_chars
    link = _template_chars(LINK) + limits.max_url_chars
    citations = limits.max_citations
    digits = len(str(citations))
    ref = max(digits + 2, ids)
    refs = sum(len(f"[{number}]") for number in range(1, citations + 1))
    header = (
        len(TITLE)
        + 2
        + _template_chars(QUERY_LINE)
        + QUERY_CHARS
        + 1
        + _template_chars(SCOPE_LINE)
        + ids
        + max(len(SCOPE_ALL), _template_chars(SCOPE_PROJECT) + ids)
        + 1
    )
    values = MAX_FILTER_VALUES * (ids + len(", "))
    header += _template_chars(FILTERS_LINE) + 1 + len(UPDATED_PART.format(cutoff="")) + ids + len(NO_GRAPH_LINE) + 1
    header += sum(len(part.format(values="")) + values + len(FILTER_SEPARATOR) for part in FILTER_PARTS.values())
    episode = _template_chars(EPISODE_LINE) + len(str(MAX_MAX_EPISODES)) + titles + kinds + ids
    episode += SCORE_CHARS + 2 * COUNT_CHARS + refs + 1 + _template_chars(UNCITED) + COUNT_CHARS
    reached = _template_chars(REACHED) + ref + max(_template_chars(a) for a in ARROW.values()) + MAX_EDGE_TYPE_CHARS
    reached += _template_chars(HOPS) + COUNT_CHARS + ref
    how = max(max(len(kind) for kind in HIT_KINDS.values()), reached)
    lexical = _template_chars(LEXICAL_PART) + SCORE_CHARS
    source = _template_chars(SOURCE_LINE) + digits + titles + ids + kinds + 3 * SCORE_CHARS + lexical + how + link
    left_out = _template_chars(LEFT_OUT) + COUNT_CHARS + digits
    fact = _template_chars(FACT_LINE) + 2 * digits + 2 * titles + MAX_EDGE_TYPE_CHARS
    facts = len(FACTS_NOTE) + 2 + max(len(NO_FACTS) + 1, (fact + 1) * limits.max_facts)
    facts += _template_chars(FACTS_LEFT_OUT) + COUNT_CHARS + 1
    heading = _template_chars(PASSAGE_HEADING) + digits + ids + kinds + link
    passages = min(limits.max_passages, citations)
    body = limits.max_passage_chars  # fenced: two fences, each at most one longer than the body, two line breaks
    bodies = min(limits.passage_budget_chars, passages * (body + 2 * max(3, body + 1) + 2))
    sections = sum(len(line) + 1 for line in ("", EPISODES, "", "", SOURCES, "", "", FACTS, "", "", PASSAGES, ""))
    return (
        header
        + sections
        + max(len(NO_EPISODES) + 1, (episode + 1) * MAX_MAX_EPISODES)
        + max(len(NO_SOURCES) + 1, (source + 1) * citations)
        + left_out
        + 1
        + facts
        + max(len(NO_PASSAGES) + 2, passages * (heading + 4) + bodies)
    )


class PackUpdate(TypedDict):
    promptPack: PromptPack


def build_pack(state: BrainSearchState, deps: StepDeps) -> PackUpdate:
    """Write ``promptPack``: citations are the distinct candidates in rank order (at most
    ``max_citations``), numbered from 1, with one-line titles of at most ``max_title_chars``, their
    scores and how each was reached; built from rows already fetched, with no further store calls."""
    limits = deps.services.limits
    candidates = state["candidates"]
    citations: list[Citation] = [
        {
            "sourceNodeId": item["nodeId"],
            "url": item["url"],
            "title": citation_title(item["title"], limits),
            "nodeType": item["nodeType"],
            "vectorScore": item["vectorScore"],
            "adjustedScore": item["adjustedScore"],
            "reachedBy": item["reachedBy"],
            "via": item["via"],
        }
        for item in distinct(candidates)[: pack_size(state["request"]["options"]["topK"], limits.max_citations)]
    ]
    markdown = render_markdown(
        state["request"],
        candidates,
        state["episodes"],
        state["episodeLabels"],
        state["graphEdges"],
        state["passages"],
        limits,
        graph_context=state["graphContextIncluded"],
    )
    return {"promptPack": PromptPack(contextMarkdown=markdown, citations=citations)}
