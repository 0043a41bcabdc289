"""Step 6: the prompt pack, deterministic markdown context plus structured citations.

The markdown has the sections ``# Brain search context`` (query and scope), ``## Episodes``,
``## Top hits`` and ``## Passages`` (one ``### [n] ...`` heading and one fenced block per passage).

Neutralisation: no text from the data or the request can open, close or forge a section. Passage
bodies are fenced with a backtick fence longer than any backtick run inside them (bidi controls
removed); every inline field is put on one line without format characters and markdown-escaped, bare
URLs included (:func:`brain_graph.text.inline`), identifiers are code spans
(:func:`brain_graph.text.code_span`), and only safe ``http(s)`` URLs are printed, as ``<url>``
autolinks (:func:`brain_graph.text.safe_url`). The only headings, fences and links of the markdown
are the pack's own.

Citations: the first ``max_citations`` distinct hits in rank order, numbered from 1. Every hit,
episode member reference and passage the markdown lists carries its ``[n]``; hits beyond the
citation limit are not listed (one line says how many), and neither are their passages.

Length: every printed field has a limit, so ``len(contextMarkdown) <= context_markdown_bound(limits)``
whatever the data (138,802 characters at the default limits; typical packs are far smaller).
"""

from __future__ import annotations

from typing import TypedDict

from brain_graph.contracts import MAX_MAX_EPISODES, MAX_QUERY_CHARS
from brain_graph.services import SearchLimits
from brain_graph.state import BrainSearchState
from brain_graph.steps import StepDeps
from brain_graph.text import clean_block, clip, code_span, excerpt, fence_overhead, fenced, inline, one_line, safe_url
from brain_graph.wire import Citation, PromptPack, RagPassage, SearchEpisode, SearchHit, SearchRequest

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
EPISODES = "## Episodes"
EPISODE_LINE = (
    "{index}. **{label}** ({kind}, project {project}) score {score}; {matched} of {size} members match: {refs}{uncited}"
)
UNCITED = " (+{count} not cited)"
NO_EPISODES = "_No episodes._"
TOP_HITS = "## Top hits"
HIT_LINE = "- [{number}] **{title}** {node_id} ({node_type}, {profile_kind}) score {score}{link}"
LEFT_OUT = "_{count} more hits are not listed: the pack cites at most {limit}._"
NO_HITS = "_No hits._"
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


def distinct_hits(hits: list[SearchHit]) -> list[SearchHit]:
    """The hits in rank order, each node once (its first, best-ranked hit)."""
    first: dict[str, SearchHit] = {}
    for hit in hits:
        first.setdefault(hit["nodeId"], hit)
    return list(first.values())


def citation_title(title: str | None, limits: SearchLimits) -> str | None:
    """A citation's title: one line without format characters (bidi controls, zero-width characters:
    :func:`~brain_graph.text.one_line`), at most ``max_title_chars`` (cut with ``…``)."""
    return None if title is None else clip(one_line(title), limits.max_title_chars)


def header_lines(request: SearchRequest, limits: SearchLimits) -> list[str]:
    """Title, query and scope."""
    project = request["filter"]["projectKey"]
    scope = SCOPE_ALL if project is None else SCOPE_PROJECT.format(project=code_span(project, limits.max_id_chars))
    return [
        TITLE,
        "",
        QUERY_LINE.format(query=inline(request["queryText"], QUERY_CHARS)),
        SCOPE_LINE.format(tenant=code_span(request["filter"]["tenantId"], limits.max_id_chars), scope=scope),
    ]


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
        uncited=UNCITED.format(count=_count(uncited)) if uncited else "",
    )


def hit_line(number: int, hit: SearchHit, limits: SearchLimits) -> str:
    """One cited hit: title (or id), id, node type, profile kind, score, url."""
    return HIT_LINE.format(
        number=number,
        title=inline(hit["title"] or hit["nodeId"], limits.max_title_chars),
        node_id=code_span(hit["nodeId"], limits.max_id_chars),
        node_type=inline(hit["nodeType"], limits.max_kind_chars),
        profile_kind=inline(hit["profileKind"], limits.max_kind_chars),
        score=_score(hit["score"]),
        link=_link(hit["url"], limits),
    )


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
    hits: list[SearchHit],
    episodes: list[SearchEpisode],
    episode_labels: dict[str, str],
    passages: list[RagPassage],
    limits: SearchLimits,
) -> str:
    """The context markdown: query, episodes, cited hits and their passages, each cited by ``[n]``
    (see the module doc for the neutralisation rule and the length bound)."""
    ranked = distinct_hits(hits)
    cited = ranked[: limits.max_citations]
    numbers = {hit["nodeId"]: number for number, hit in enumerate(cited, 1)}
    lines = [*header_lines(request, limits), "", EPISODES, ""]
    shown = episodes[: min(request["options"]["maxEpisodes"], MAX_MAX_EPISODES)]
    for index, episode in enumerate(shown, 1):
        label = episode_labels.get(episode["clusterNodeId"], episode["clusterNodeId"])
        lines.append(episode_line(index, episode, label, numbers, limits))
    if not shown:
        lines.append(NO_EPISODES)
    lines += ["", TOP_HITS, ""]
    lines += [hit_line(number, hit, limits) for number, hit in enumerate(cited, 1)] or [NO_HITS]
    if len(ranked) > len(cited):
        lines.append(LEFT_OUT.format(count=_count(len(ranked) - len(cited)), limit=limits.max_citations))
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

    With T, I, K, U the title, id, kind and url limits, C citations, P passages, E = 50 episodes and
    Q = 4,000 (twice the query limit), counting one line break per line:

    - header: ``# Brain search context``, query line (Q), scope line (I + ``project `` + I)
    - E episode lines: label T, kind K, project I, score 12, two counts 9, the refs ``[1]..[C]``
      and ``(+N not cited)``
    - C hit lines: title T, id I, node type K, profile kind K, score 12, `` <url>`` U + 3; plus the
      left-out line
    - P passage headings (id I, kind K, url U + 3) and their fenced bodies, at most the passage
      budget in all (it counts the fences) and at most 3 * max_passage_chars + 4 each, plus four
      line breaks each
    - the fixed section lines.
    """
    ids, kinds, titles = limits.max_id_chars, limits.max_kind_chars, limits.max_title_chars
    link = _template_chars(LINK) + limits.max_url_chars
    citations = limits.max_citations
    digits = len(str(citations))
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
    episode = _template_chars(EPISODE_LINE) + len(str(MAX_MAX_EPISODES)) + titles + kinds + ids
    episode += SCORE_CHARS + 2 * COUNT_CHARS + refs + _template_chars(UNCITED) + COUNT_CHARS
    hit = _template_chars(HIT_LINE) + digits + titles + ids + 2 * kinds + SCORE_CHARS + link
    left_out = _template_chars(LEFT_OUT) + COUNT_CHARS + digits
    heading = _template_chars(PASSAGE_HEADING) + digits + ids + kinds + link
    passages = min(limits.max_passages, citations)
    body = limits.max_passage_chars  # fenced: two fences, each at most one longer than the body, two line breaks
    bodies = min(limits.passage_budget_chars, passages * (body + 2 * max(3, body + 1) + 2))
    sections = sum(len(line) + 1 for line in ("", EPISODES, "", "", TOP_HITS, "", "", PASSAGES, ""))
    return (
        header
        + sections
        + max(len(NO_EPISODES) + 1, (episode + 1) * MAX_MAX_EPISODES)
        + max(len(NO_HITS) + 1, (hit + 1) * citations)
        + left_out
        + 1
        + max(len(NO_PASSAGES) + 2, passages * (heading + 4) + bodies)
    )


class PackUpdate(TypedDict):
    promptPack: PromptPack


def build_pack(state: BrainSearchState, deps: StepDeps) -> PackUpdate:
    """Write ``promptPack``: citations are the distinct hits in rank order (at most
    ``max_citations``), numbered from 1, with one-line titles of at most ``max_title_chars``; built
    from rows already fetched, with no further store calls."""
    limits = deps.services.limits
    hits = state["hits"]
    citations = [
        Citation(
            sourceNodeId=hit["nodeId"],
            url=hit["url"],
            title=citation_title(hit["title"], limits),
            nodeType=hit["nodeType"],
        )
        for hit in distinct_hits(hits)[: limits.max_citations]
    ]
    markdown = render_markdown(
        state["request"], hits, state["episodes"], state["episodeLabels"], state["passages"], limits
    )
    return {"promptPack": PromptPack(contextMarkdown=markdown, citations=citations)}
