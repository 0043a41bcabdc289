"""Step 6: the prompt pack, deterministic markdown context plus structured citations."""

from __future__ import annotations

from typing import Any

from brain_graph.contracts import (
    BrainCitation,
    BrainPromptPack,
    BrainRagPassage,
    BrainSearchEpisode,
    BrainSearchHit,
    BrainSearchRequest,
)
from brain_graph.requests import read_list, read_request
from brain_graph.state import BrainSearchState
from brain_graph.steps import StepDeps
from brain_graph.text import one_line

SCORE_FORMAT = "{:.4f}"


def _score(value: float) -> str:
    return SCORE_FORMAT.format(value)


def _cite(node_id: str, numbers: dict[str, int]) -> str:
    return f"[{numbers[node_id]}] " if node_id in numbers else ""


def _refs(node_ids: list[str], numbers: dict[str, int]) -> str:
    return "".join(f"[{numbers[node_id]}]" for node_id in node_ids if node_id in numbers)


def render_markdown(
    request: BrainSearchRequest,
    hits: list[BrainSearchHit],
    episodes: list[BrainSearchEpisode],
    episode_labels: dict[str, str],
    passages: list[BrainRagPassage],
    numbers: dict[str, int],
) -> str:
    """The context markdown: query, episodes, top hits and passages, each cited by ``[n]``."""
    project = request.filter.project_key
    scope = f"project `{project}`" if project is not None else "all projects"
    lines = [
        "# Brain search context",
        "",
        f"**Query:** {one_line(request.query_text)}",
        f"**Scope:** tenant `{request.filter.tenant_id}`, {scope}",
        "",
        "## Episodes",
        "",
    ]
    if episodes:
        for index, episode in enumerate(episodes, 1):
            label = one_line(episode_labels.get(episode.cluster_node_id, episode.cluster_node_id))
            lines.append(
                f"{index}. **{label}** ({episode.cluster_kind}, project {episode.project_key or '-'}) "
                f"score {_score(episode.score)}; {len(episode.member_node_ids)} of {episode.size} members "
                f"match: {_refs(episode.member_node_ids, numbers)}"
            )
    else:
        lines.append("_No episodes._")
    lines += ["", "## Top hits", ""]
    if hits:
        for hit in hits:
            link = f" <{hit.url}>" if hit.url else ""
            lines.append(
                f"- {_cite(hit.node_id, numbers)}**{one_line(hit.title) or hit.node_id}** `{hit.node_id}` "
                f"({hit.node_type}, {hit.profile_kind}) score {_score(hit.score)}{link}"
            )
    else:
        lines.append("_No hits._")
    lines += ["", "## Passages", ""]
    if passages:
        for passage in passages:
            link = f" <{passage.url}>" if passage.url else ""
            lines += [
                f"### {_cite(passage.source_node_id, numbers)}`{passage.source_node_id}` ({passage.source_kind}){link}",
                "",
                passage.text,
                "",
            ]
    else:
        lines += ["_No passages._", ""]
    return "\n".join(lines).rstrip() + "\n"


def build_pack(state: BrainSearchState, deps: StepDeps) -> dict[str, Any]:
    """Write ``promptPack``: citations are the hits in rank order (bounded), numbered from 1, built
    from rows already fetched, with no further store calls."""
    request = read_request(state, deps.services)
    hits = read_list(state, "hits", BrainSearchHit)
    cited = hits[: deps.services.limits.max_citations]
    citations = [
        BrainCitation(source_node_id=hit.node_id, url=hit.url, title=hit.title, node_type=hit.node_type)
        for hit in cited
    ]
    numbers = {hit.node_id: index for index, hit in enumerate(cited, 1)}
    markdown = render_markdown(
        request,
        hits,
        read_list(state, "episodes", BrainSearchEpisode),
        dict(state.get("episodeLabels") or {}),
        read_list(state, "passages", BrainRagPassage),
        numbers,
    )
    return {"promptPack": BrainPromptPack(context_markdown=markdown, citations=citations)}
