"""Cross-check of the ranking settings: every combination of :data:`GRID` on both samples, at the default
options (``topK`` 20, ``expandDepth`` 1), through the real pipeline.

    .venv-quality/bin/python -m benchmarks.quality.grid   # writes results/grid.json and results/grid.md
    .venv-quality/bin/python -m benchmarks.quality.grid --lexical-weight --embedder minilm   # and lexical:
    # results/grid-lexical-weight-<embedder>.json and .md

``--lexical-weight`` measures hybrid retrieval (``retrievalMode`` hybrid) at each ``lexical_weight`` of
:data:`LEXICAL_WEIGHTS` instead, next to vector mode, lexical mode and the harness's BM25, with the
embedder of ``--embedder`` (``run.py``'s), and chooses the weight on each sample for the other.

For each sample and setting: recall@5/10/20 of the pack's first N citations and the supporting paragraphs
lost / gained against vector top N at N = 5. A setting's *score* on a sample is its mean recall@5/10/20 (in
points) minus 0.5 per paragraph lost at N = 5. The report ranks the settings by their score on one sample
and shows how the best do on the other, both ways (issue 35: choose on one, judge on the other).
"""

from __future__ import annotations

import argparse
import itertools
import json
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import closing, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.quality import hotpotqa, musique
from benchmarks.quality.paragraph_graph import Question, Sample
from benchmarks.quality.run import (
    BUDGETS,
    EMBEDDERS,
    RESULTS_DIR,
    bm25_index,
    load_model,
    pack_citations,
    search_filter,
    vector_space,
)
from brain_graph import Dataset, EmbeddedStore, GraphScoring, ProfileRegistry, SearchServices, build_graph, load_dataset

GRID: Mapping[str, tuple[Any, ...]] = {
    "link_weight": (0.5, 1.0, 2.0, 3.0),
    "fanout_split": (False, True),
    "clique_damping": (0.0, 1.0, 2.0),
    "seed_ceiling": (False, True),
}
LEXICAL_WEIGHTS = (0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0)  # --lexical-weight: GraphScoring.lexical_weight in hybrid mode
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


@dataclass(frozen=True)
class Loaded:
    """A sample in an embedded store: its profiles, questions, and their vector and BM25 rankings."""

    store: EmbeddedStore
    registry: ProfileRegistry
    questions: list[Question]
    rankings: list[list[str]]
    bm25: list[list[str]]


@contextmanager
def loaded(sample: Sample, embedder_name: str = "minilm") -> Iterator[Loaded]:
    """The sample in an embedded store with the embedder ``embedder_name`` (``run.load_model``)."""
    model = load_model(embedder_name)
    corpus = sample.load_corpus()
    dataset = Dataset.model_validate(sample.build_dataset(corpus))
    questions = sample.load_questions(sample.doc_ids(corpus))
    with (
        tempfile.TemporaryDirectory(prefix="brain-graph-grid-") as workdir,
        closing(EmbeddedStore(Path(workdir) / f"{sample.name}.sqlite3")) as store,
    ):
        load_dataset(dataset, store, model.registry)
        space = vector_space(dataset, model.embedder, model.profile)
        rankings = [space.ranking(model.embedder.embed_query(q.text)) for q in questions]
        bm25 = bm25_index(dataset)
        yield Loaded(store, model.registry, questions, rankings, [bm25.ranking(q.text) for q in questions])


def measured(packs: list[list[str]], data: Loaded) -> Measured:
    """Recall@N of the packs' first N citations, and the supporting paragraphs lost / gained against
    vector top N at the first N."""
    recall, lost, gained = {}, 0, 0
    for n in BUDGETS:
        shares = []
        for pack, ranking, question in zip(packs, data.rankings, data.questions, strict=True):
            gold = set(question.supporting)
            mine, theirs = gold & set(pack[:n]), gold & set(ranking[:n])
            shares.append(len(mine) / len(gold))
            if n == BUDGETS[0]:
                lost, gained = lost + len(theirs - mine), gained + len(mine - theirs)
        recall[str(n)] = round(100 * sum(shares) / len(shares), 1)
    return Measured(recall, lost, gained)


def measure_pack(sample: Sample, data: Loaded, scoring: GraphScoring, options: Mapping[str, Any]) -> Measured:
    """The pipeline with ``scoring`` at the default options plus ``options``, on every question."""
    filter_ = search_filter(sample.name)
    graph = build_graph(SearchServices(backend=data.store, profiles=data.registry, scoring=scoring))
    return measured([pack_citations(graph, q.text, filter_, options).doc_ids for q in data.questions], data)


def measure(sample: Sample) -> list[Measured]:
    """Every setting of :func:`settings` on ``sample``, at the default options."""
    with loaded(sample) as data:
        return [measure_pack(sample, data, GraphScoring(**setting), {}) for setting in settings()]


def weight_settings() -> list[tuple[str, GraphScoring | None, dict[str, Any]]]:
    """The rows of ``--lexical-weight``: a label, the scoring (None: the harness's BM25) and the options."""
    return [
        ("BM25 (harness, top N)", None, {}),
        ("vector mode", GraphScoring(), {"retrievalMode": "vector"}),
        ("lexical mode", GraphScoring(), {"retrievalMode": "lexical"}),
        *(
            (f"hybrid, lexicalWeight {weight}", GraphScoring(lexical_weight=weight), {"retrievalMode": "hybrid"})
            for weight in LEXICAL_WEIGHTS
        ),
    ]


def measure_weights(sample: Sample, embedder_name: str) -> list[Measured]:
    """Every row of :func:`weight_settings` on ``sample`` (default options otherwise: topK 20, depth 1)."""
    with loaded(sample, embedder_name) as data:
        return [
            measured(data.bm25, data) if scoring is None else measure_pack(sample, data, scoring, options)
            for _, scoring, options in weight_settings()
        ]


def weight_report(results: Mapping[str, list[Measured]], embedder_name: str) -> str:
    """The markdown report of ``--lexical-weight``: every row on both samples, and the hybrid weight
    chosen on each sample (best score, the smaller weight on a tie) with its figures and rank on the other."""
    rows = weight_settings()
    names = list(results)
    hybrid = [i for i, (label, _, _) in enumerate(rows) if label.startswith("hybrid")]
    default_weight = "the embedder's" if GraphScoring().lexical_weight is None else GraphScoring().lexical_weight

    def rank(name: str, i: int) -> int:
        order = sorted(hybrid, key=lambda j: (-results[name][j].score, j))
        return order.index(i) + 1

    lines = [
        f"# Hybrid retrieval's lexicalWeight, cross-checked ({embedder_name} embedder)",
        "",
        f"Generated by `.venv-quality/bin/python -m benchmarks.quality.grid --lexical-weight --embedder "
        f"{embedder_name}`. Default options (topK 20, expandDepth 1) with `retrievalMode` as named; hybrid at "
        f"`lexical_weight` {', '.join(map(str, LEXICAL_WEIGHTS))} (default {default_weight}). Score: mean "
        f"recall@{'/'.join(map(str, BUDGETS))} minus {LOSS_PENALTY} per supporting paragraph lost against "
        f"vector search (this embedder's top N) at N = {BUDGETS[0]}. Rank: among the {len(hybrid)} hybrid weights.",
        "",
        "| setting | " + " | ".join(f"{n} recall@5/10/20 | lost / gained @5 | score | rank" for n in names) + " |",
        "| --- | " + " | ".join("---: | ---: | ---: | ---:" for _ in names) + " |",
    ]
    for i, (label, _, _) in enumerate(rows):
        cells = " | ".join(f"{_cells(results[n][i])} | {rank(n, i) if i in hybrid else '–'}" for n in names)
        lines.append(f"| {label} | {cells} |")
    lines.append("")
    for chosen in names:
        other = next(n for n in names if n != chosen)
        best = min(hybrid, key=lambda j: (-results[chosen][j].score, j))
        mine, theirs = results[chosen][best], results[other][best]
        lines.append(
            f"- Chosen on {chosen}: {rows[best][0]} (score {mine.score:.2f}); on {other} it gets "
            f"{' / '.join(f'{v:.1f}' for v in theirs.recall.values())}%, score {theirs.score:.2f}, rank "
            f"{rank(other, best)} of {len(hybrid)}."
        )
    return "\n".join(lines) + "\n"


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
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--lexical-weight", action="store_true", help="grid hybrid's lexical_weight instead")
    parser.add_argument("--embedder", choices=EMBEDDERS, default="minilm", help="with --lexical-weight; default minilm")
    args = parser.parse_args()
    if args.lexical_weight:
        main_weights(args.embedder)
        return
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


def main_weights(embedder_name: str) -> None:
    """``--lexical-weight``: write ``results/grid-lexical-weight-<embedder>.json`` and ``.md``."""
    results = {sample.name: measure_weights(sample, embedder_name) for sample in (hotpotqa.SAMPLE, musique.SAMPLE)}
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    rows = [
        {"setting": label, **{name: {**vars(ms[i]), "score": ms[i].score} for name, ms in results.items()}}
        for i, (label, _, _) in enumerate(weight_settings())
    ]
    stem = f"grid-lexical-weight-{embedder_name}"
    (RESULTS_DIR / f"{stem}.json").write_text(json.dumps(rows, indent=2) + "\n", encoding="utf-8")
    text = weight_report(results, embedder_name)
    (RESULTS_DIR / f"{stem}.md").write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
