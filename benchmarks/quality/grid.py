"""Cross-check of the ranking settings: every combination of :data:`GRID` on both samples, at the default
options (``topK`` 20, ``expandDepth`` 1), through the real pipeline.

    .venv-quality/bin/python -m benchmarks.quality.grid   # writes results/grid.json and results/grid.md

For each sample and setting: recall@5/10/20 of the pack's first N citations and the supporting paragraphs
lost / gained against vector top N at N = 5. A setting's *score* on a sample is its mean recall@5/10/20 (in
points) minus 0.5 per paragraph lost at N = 5. The report ranks the settings by their score on one sample
and shows how the best do on the other, both ways (issue 35: choose on one, judge on the other).
"""

from __future__ import annotations

import itertools
import json
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import closing, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.quality import hotpotqa, musique
from benchmarks.quality.minilm import MiniLMEmbeddings, cache_file
from benchmarks.quality.paragraph_graph import CACHE_DIR, DOC, Question, Sample
from benchmarks.quality.run import BUDGETS, RESULTS_DIR, pack_citations, search_filter, vector_space
from brain_graph import (
    Dataset,
    EmbeddedStore,
    GraphScoring,
    SearchServices,
    build_graph,
    default_profiles,
    load_dataset,
)

GRID: Mapping[str, tuple[Any, ...]] = {
    "link_weight": (0.5, 1.0, 2.0, 3.0),
    "fanout_split": (False, True),
    "clique_damping": (0.0, 1.0, 2.0),
    "seed_ceiling": (False, True),
}
LOSS_PENALTY = 0.5  # points of the score per supporting paragraph lost against vector search at N = 5
SHOWN = 10  # the best settings shown per sample


@dataclass(frozen=True)
class Measured:
    """One setting on one sample."""

    recall: dict[str, float]  # N -> percent
    lost5: int
    gained5: int

    @property
    def score(self) -> float:
        return round(sum(self.recall.values()) / len(self.recall) - LOSS_PENALTY * self.lost5, 3)


def settings() -> list[dict[str, Any]]:
    """Every combination of :data:`GRID`, in a fixed order."""
    return [dict(zip(GRID, values, strict=True)) for values in itertools.product(*GRID.values())]


@contextmanager
def loaded(sample: Sample) -> Iterator[tuple[EmbeddedStore, Any, list[Question], list[list[str]]]]:
    """The sample in an embedded store, its profiles, its questions and their vector rankings."""
    embedder = MiniLMEmbeddings(cache_file=cache_file(CACHE_DIR))
    registry = default_profiles({"default": embedder})
    profile = next(p for p in registry.profiles if DOC in p.node_types)
    corpus = sample.load_corpus()
    dataset = Dataset.model_validate(sample.build_dataset(corpus))
    questions = sample.load_questions(sample.doc_ids(corpus))
    with (
        tempfile.TemporaryDirectory(prefix="brain-graph-grid-") as workdir,
        closing(EmbeddedStore(Path(workdir) / f"{sample.name}.sqlite3")) as store,
    ):
        load_dataset(dataset, store, registry)
        space = vector_space(dataset, embedder, profile)
        yield store, registry, questions, [space.ranking(embedder.embed_query(q.text)) for q in questions]


def measure(sample: Sample) -> list[Measured]:
    """Every setting of :func:`settings` on ``sample``, at the default options."""
    filter_ = search_filter(sample.name)
    out = []
    with loaded(sample) as (store, registry, questions, rankings):
        for setting in settings():
            graph = build_graph(SearchServices(backend=store, profiles=registry, scoring=GraphScoring(**setting)))
            packs = [pack_citations(graph, q.text, filter_, {}).doc_ids for q in questions]
            recall, lost, gained = {}, 0, 0
            for n in BUDGETS:
                shares = []
                for pack, ranking, question in zip(packs, rankings, questions, strict=True):
                    gold = set(question.supporting)
                    mine, theirs = gold & set(pack[:n]), gold & set(ranking[:n])
                    shares.append(len(mine) / len(gold))
                    if n == BUDGETS[0]:
                        lost, gained = lost + len(theirs - mine), gained + len(mine - theirs)
                recall[str(n)] = round(100 * sum(shares) / len(shares), 1)
            out.append(Measured(recall, lost, gained))
    return out


def _name(setting: Mapping[str, Any]) -> str:
    return ", ".join(f"{k} {v}" for k, v in setting.items())


def _cells(m: Measured) -> str:
    return f"{' / '.join(f'{v:.1f}' for v in m.recall.values())} | {m.lost5} / {m.gained5} | {m.score:.2f}"


def report(results: Mapping[str, list[Measured]]) -> str:
    """The markdown report: the best settings on each sample, with their figures on the other."""
    grid = settings()
    names = list(results)
    default = GraphScoring()
    default_index = next(i for i, s in enumerate(grid) if all(getattr(default, k) == v for k, v in s.items()))
    lines = [
        "# Ranking settings, cross-checked",
        "",
        "Generated by `.venv-quality/bin/python -m benchmarks.quality.grid`. Default options (topK 20, depth 1); "
        f"{len(grid)} settings ({', '.join(f'{k} {list(v)}' for k, v in GRID.items())}; the rest at their "
        f"defaults). Score: mean recall@{'/'.join(map(str, BUDGETS))} minus {LOSS_PENALTY} per supporting "
        f"paragraph lost against vector search at N = {BUDGETS[0]}.",
    ]
    for chosen in names:
        other = next(n for n in names if n != chosen)
        order = sorted(range(len(grid)), key=lambda i: (-results[chosen][i].score, i))
        lines += [
            "",
            f"## Chosen on {chosen}, checked on {other}",
            "",
            f"| rank | setting | {chosen} recall@5/10/20 | lost / gained @5 | score "
            f"| {other} recall@5/10/20 | lost / gained @5 | score |",
            "| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |",
        ]
        shown = order[:SHOWN] + ([default_index] if default_index not in order[:SHOWN] else [])
        for i in shown:
            label = _name(grid[i]) + (" (**default**)" if i == default_index else "")
            lines.append(
                f"| {order.index(i) + 1} | {label} | {_cells(results[chosen][i])} | {_cells(results[other][i])} |"
            )
    return "\n".join(lines) + "\n"


def main() -> None:
    results = {sample.name: measure(sample) for sample in (hotpotqa.SAMPLE, musique.SAMPLE)}
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    rows = [
        {"setting": setting, **{name: {**vars(ms[i]), "score": ms[i].score} for name, ms in results.items()}}
        for i, setting in enumerate(settings())
    ]
    (RESULTS_DIR / "grid.json").write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")
    text = report(results)
    (RESULTS_DIR / "grid.md").write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
