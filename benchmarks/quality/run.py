"""Retrieval quality on HotpotQA and MuSiQue: recall of the supporting paragraphs among the first N documents.

    benchmarks/quality/setup.sh                         # once: the model venv .venv-quality
    .venv-quality/bin/python -m benchmarks.quality.run  # writes results/hotpotqa.json and hotpotqa.md
    .venv-quality/bin/python -m benchmarks.quality.run --dataset musique  # results/musique.json and .md
    .venv-quality/bin/python -m benchmarks.quality.run --embedder lexical  # results/hotpotqa-lexical.json and .md

The dataset of :mod:`benchmarks.quality.hotpotqa` (or, held out, :mod:`benchmarks.quality.musique`) is
embedded with all-MiniLM-L6-v2 (``--embedder lexical``: brain-graph's bundled ``LexicalHashEmbeddings``,
the embedder of ``default_profiles()``) and loaded with ``load_dataset`` into an embedded store in a
temporary directory (which also keeps the lexical documents that hybrid and lexical retrieval search).
For every question and budget N in :data:`BUDGETS`, methods rank documents and recall@N is the fraction
of the question's supporting paragraphs among their first N, averaged over questions:

- ``vector``: top N by cosine, with numpy over the vectors brain-graph indexed (its score and tie order);
- ``peer``: N/2 vector seeds plus their one-hop REFERENCES neighbours (either direction), ranked by
  similarity to the query, cut to N (neo4j-graphrag's VectorCypherRetriever with a one-hop query);
  ``peer-filled``: the same, filled up to N with the next vector hits when the pool is smaller (the
  naive recipe as issue 35 measured it);
- ``bm25``: Okapi BM25 (k1 1.2, b 0.75) over each paragraph's title and text, top N;
- ``brain-graph``: the compiled graph at each depth of :data:`DEPTHS` with ``topK`` N (``retrievalMode``
  vector), and at the default options (``topK`` 20, ``expandDepth`` 1: the first N citations of one pack):
  unchanged (the deployment's default mode), in each mode of :data:`MODES`, and in vector mode with graph
  boosts off, through :data:`PACK_METHOD`.

Every method is also compared with vector-only per question: gold paragraphs lost (in vector top N, not in
the method's first N) and gained, and the questions that lose more than they gain.

Timings go to stderr only, so the result files are identical from run to run: the latency of the whole
search and of its ``expand`` step (p50 / p95 over the questions) at each brain-graph setting.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import closing
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any, cast

import numpy as np
from langchain_core.embeddings import Embeddings

from benchmarks.quality import hotpotqa, musique
from benchmarks.quality.minilm import DIMENSION, MiniLMEmbeddings, cache_file, versions
from benchmarks.quality.paragraph_graph import CACHE_DIR, DOC, HERE, REFERENCES, Question, Sample
from brain_graph import (
    BrainSearchGraph,
    BrainSearchInput,
    BrainSearchResult,
    Dataset,
    EmbeddedStore,
    EmbeddingProfile,
    GraphScoring,
    LexicalHashEmbeddings,
    ProfileRegistry,
    SearchServices,
    default_profiles,
    load_dataset,
)
from brain_graph.core.scoring import SCORE_DECIMALS
from brain_graph.graphs.search import PIPELINE, compile_steps
from brain_graph.indexing.dataset import embedding_text
from brain_graph.pipeline.binding import Step

BUDGETS = (5, 10, 20)
DEPTHS = (0, 1, 2)
MODES = ("vector", "lexical", "hybrid")  # options.retrievalMode
EMBEDDERS = ("minilm", "lexical")  # --embedder: all-MiniLM-L6-v2, or brain-graph's bundled LexicalHashEmbeddings
SAMPLES = {sample.name: sample for sample in (hotpotqa.SAMPLE, musique.SAMPLE)}
RESULTS_DIR = HERE / "results"
# The reference recall@10 figures the harness is compared with (benchmarks/quality/README.md).
ISSUE_FIGURES = {"hotpotqa": {"vector": 0.850, "peer": 0.965}}


@dataclass(frozen=True)
class Retrieved:
    """A method's documents for one question, best first, and the documents it had before any cut to N
    (vector: the top N; peer: seeds plus neighbours; brain-graph: the ``cdm.doc`` nodes of ``graphNodes``)."""

    doc_ids: list[str]
    seen: frozenset[str]


PackMethod = Callable[[BrainSearchGraph, str, Mapping[str, Any], Mapping[str, Any]], Retrieved]


def search_filter(tenant: str) -> dict[str, Any]:
    """The filter of every brain-graph search: the sample's public docs."""
    return {"tenantId": tenant, "secured": False, "profileKindIn": ["doc"]}


def pack_citations(
    graph: BrainSearchGraph, query_text: str, filter_: Mapping[str, Any], options: Mapping[str, Any]
) -> Retrieved:
    """brain-graph as an LLM sees it: the prompt pack's citations in order."""
    request = {"queryText": query_text, "filter": dict(filter_), "options": dict(options)}
    result = BrainSearchResult.model_validate(graph.invoke(cast(BrainSearchInput, request)))
    citations = [citation.source_node_id for citation in result.prompt_pack.citations]
    return Retrieved(citations, frozenset(node.node_id for node in result.graph_nodes if node.node_type == DOC))


PACK_METHOD: PackMethod = pack_citations  # swap in another pack to measure it


@dataclass(frozen=True)
class VectorSpace:
    """The indexed doc vectors and the REFERENCES neighbourhood (either direction) of every doc."""

    ids: list[str]
    matrix: np.ndarray[Any, np.dtype[np.float64]]
    neighbours: Mapping[str, frozenset[str]]

    def ranking(self, query: Sequence[float]) -> list[str]:
        """Every doc, best first, by brain-graph's score ((1 + cosine) / 2 rounded), then node id."""
        vector = np.asarray(query, dtype=np.float32).astype(np.float64)
        cosines = self.matrix @ vector / (np.linalg.norm(self.matrix, axis=1) * np.linalg.norm(vector))
        scores = np.round(np.clip((1.0 + cosines) / 2.0, 0.0, 1.0), SCORE_DECIMALS)
        return [self.ids[i] for i in sorted(range(len(self.ids)), key=lambda i: (-scores[i], self.ids[i]))]


def vector_only(ranking: list[str], n: int) -> Retrieved:
    """Top N by similarity (brain-graph at expandDepth 0 should return exactly these)."""
    return Retrieved(ranking[:n], frozenset(ranking[:n]))


def peer_recipe(space: VectorSpace, ranking: list[str], n: int) -> Retrieved:
    """N/2 seeds plus their one-hop neighbours, ranked by similarity, cut to N. The seeds are the most
    similar docs, so they stay first whatever neighbours join them."""
    seeds = ranking[: n // 2]
    pool = set(seeds).union(*(space.neighbours[seed] for seed in seeds))
    return Retrieved([doc for doc in ranking if doc in pool][:n], frozenset(pool))


def peer_filled(space: VectorSpace, ranking: list[str], n: int) -> Retrieved:
    """:func:`peer_recipe`, filled up to N with the next vector hits when seeds and neighbours are fewer."""
    peer = peer_recipe(space, ranking, n)
    rest = [doc for doc in ranking if doc not in peer.seen][: n - len(peer.doc_ids)]
    return Retrieved(peer.doc_ids + rest, peer.seen | frozenset(rest))


_TOKEN = re.compile(r"\w+")


class BM25:
    """Okapi BM25 (k1 1.2, b 0.75, idf ``ln(1 + (N - df + 0.5) / (df + 0.5))``) over lower-cased word
    tokens of each doc's title and text; ties by node id."""

    def __init__(self, docs: Mapping[str, str], k1: float = 1.2, b: float = 0.75) -> None:
        self.ids = sorted(docs)
        self.k1, self.b = k1, b
        self.counts: list[dict[str, int]] = []
        for doc_id in self.ids:
            counts: dict[str, int] = {}
            for token in _TOKEN.findall(docs[doc_id].lower()):
                counts[token] = counts.get(token, 0) + 1
            self.counts.append(counts)
        self.lengths = [sum(c.values()) for c in self.counts]
        self.average = statistics.fmean(self.lengths) if self.lengths else 0.0
        frequency: dict[str, int] = {}
        for counts in self.counts:
            for token in counts:
                frequency[token] = frequency.get(token, 0) + 1
        total = len(self.ids)
        self.idf = {t: math.log(1.0 + (total - df + 0.5) / (df + 0.5)) for t, df in frequency.items()}

    def ranking(self, query: str) -> list[str]:
        """Every doc, best first (score, then node id)."""
        terms = [t for t in _TOKEN.findall(query.lower()) if t in self.idf]
        scores = []
        for counts, length in zip(self.counts, self.lengths, strict=True):
            score = 0.0
            for term in terms:
                tf = counts.get(term, 0)
                if tf:
                    norm = tf + self.k1 * (1.0 - self.b + self.b * length / self.average)
                    score += self.idf[term] * tf * (self.k1 + 1.0) / norm
            scores.append(round(score, 9))
        order = sorted(range(len(self.ids)), key=lambda i: (-scores[i], self.ids[i]))
        return [self.ids[i] for i in order]


def bm25_index(dataset: Dataset) -> BM25:
    """BM25 over the docs' titles and texts."""
    docs = {
        node.node_id: " ".join([node.title or "", *(node.text[k] for k in sorted(node.text))])
        for node in dataset.node_records()
        if node.node_type == DOC
    }
    return BM25(docs)


def recall(docs: Iterable[str], question: Question) -> float:
    """Fraction of the question's supporting paragraphs among ``docs``."""
    return len(set(docs) & set(question.supporting)) / len(question.supporting)


@dataclass(frozen=True)
class Model:
    """An embedder, the default profiles that use it, the doc profile and what the results record of it."""

    embedder: Embeddings
    registry: ProfileRegistry
    profile: EmbeddingProfile
    info: dict[str, Any]


def load_model(name: str = "minilm", cache: bool = True) -> Model:
    """The embedder ``name`` of :data:`EMBEDDERS` in ``default_profiles``. MiniLM's vectors are kept
    under ``.cache/`` when ``cache`` (embedding the corpus takes minutes on a busy 2-vCPU machine); the
    lexical embedder is fast and deterministic and needs no cache."""
    embedder: Embeddings
    if name == "minilm":
        embedder = MiniLMEmbeddings(cache_file=cache_file(CACHE_DIR) if cache else None)
        model_name, model_versions = MiniLMEmbeddings.name, versions()
    elif name == "lexical":
        lexical = LexicalHashEmbeddings()
        embedder, model_name = lexical, f"brain-graph LexicalHashEmbeddings ({lexical.name})"
        model_versions = {"brain-graph": metadata.version("brain-graph")}
    else:
        raise ValueError(f"unknown embedder {name!r}; one of {EMBEDDERS}")
    registry = default_profiles({"default": embedder})
    profile = next(p for p in registry.profiles if DOC in p.node_types)
    if name == "minilm" and profile.dimension != DIMENSION:
        raise SystemExit(f"doc profile has dimension {profile.dimension}, expected {DIMENSION}")
    info = {"name": model_name, "dimension": profile.dimension, "maxChars": profile.max_chars}
    return Model(embedder, registry, profile, {**info, "versions": model_versions})


def result_name(sample: Sample, embedder_name: str) -> str:
    """The results' file stem: the sample's name, ``-lexical`` added for the lexical embedder."""
    return sample.name if embedder_name == "minilm" else f"{sample.name}-{embedder_name}"


def vector_space(dataset: Dataset, embedder: Embeddings, profile: EmbeddingProfile) -> VectorSpace:
    """The doc vectors (the texts ``load_dataset`` embedded, so the same floats with a memoising embedder)
    and the REFERENCES neighbourhoods."""
    docs = [node for node in dataset.node_records() if node.node_type == DOC]
    vectors = embedder.embed_documents([embedding_text(node, profile) for node in docs])
    neighbours: dict[str, set[str]] = {node.node_id: set() for node in docs}
    for edge in dataset.edge_records():
        if edge.edge_type == REFERENCES:
            neighbours[edge.from_node_id].add(edge.to_node_id)
            neighbours[edge.to_node_id].add(edge.from_node_id)
    matrix = np.asarray(vectors, dtype=np.float32).astype(np.float64)
    return VectorSpace([node.node_id for node in docs], matrix, {k: frozenset(v) for k, v in neighbours.items()})


def one_hop(space: VectorSpace, rankings: list[list[str]], questions: list[Question]) -> dict[str, int]:
    """Supporting paragraphs missed by vector top 10, and how many of them are one REFERENCES hop from a
    vector top-5 / top-10 hit."""
    missed = near5 = near10 = 0
    for ranking, question in zip(rankings, questions, strict=True):
        for doc in set(question.supporting) - set(ranking[:10]):
            missed += 1
            near5 += bool(space.neighbours[doc] & set(ranking[:5]))
            near10 += bool(space.neighbours[doc] & set(ranking[:10]))
    return {"missedByVectorTop10": missed, "oneHopFromTop5": near5, "oneHopFromTop10": near10}


def summarise(name: str, label: str, runs: Mapping[int, list[Retrieved]], questions: list[Question]) -> dict[str, Any]:
    """Per budget N: mean recall of the first N documents, mean number of documents seen, and *reach*,
    the mean recall of everything seen (what a better ranking of the same candidates could get)."""

    def mean(values: Iterable[float], digits: int) -> float:
        return round(statistics.fmean(values), digits)

    def per_question(n: int) -> Iterable[tuple[Retrieved, Question]]:
        return zip(runs[n], questions, strict=True)

    return {
        "method": name,
        "label": label,
        "recall": {str(n): mean((recall(r.doc_ids[:n], q) for r, q in per_question(n)), 4) for n in runs},
        "docsSeen": {str(n): mean((len(r.seen) for r in runs[n]), 1) for n in runs},
        "reach": {str(n): mean((recall(r.seen, q) for r, q in per_question(n)), 4) for n in runs},
    }


def against_vector(
    runs: Mapping[int, list[Retrieved]], vector: Mapping[int, list[Retrieved]], questions: list[Question]
) -> dict[str, dict[str, int]]:
    """Per budget N, against vector top N question by question: supporting paragraphs ``lost`` (in vector
    top N, not in the method's first N) and ``gained``, the questions that lose or gain any, and
    ``netLoss``: the questions that lose more than they gain."""
    out: dict[str, dict[str, int]] = {}
    for n in runs:
        lost = gained = losing = gaining = net = 0
        for run, ref, question in zip(runs[n], vector[n], questions, strict=True):
            gold = set(question.supporting)
            mine, theirs = gold & set(run.doc_ids[:n]), gold & set(ref.doc_ids[:n])
            minus, plus = len(theirs - mine), len(mine - theirs)
            lost, gained = lost + minus, gained + plus
            losing, gaining, net = losing + bool(minus), gaining + bool(plus), net + (minus > plus)
        out[str(n)] = {
            "lost": lost,
            "gained": gained,
            "questionsLosing": losing,
            "questionsGaining": gaining,
            "netLoss": net,
        }
    return out


def linked(space: VectorSpace, docs: Sequence[str]) -> bool:
    """Whether ``docs`` are connected by REFERENCES edges (either direction) among themselves; for two
    docs: whether they are linked directly."""
    reached, todo = {docs[0]}, [docs[0]]
    while todo:
        for doc in (space.neighbours[todo.pop()] & set(docs)) - reached:
            reached.add(doc)
            todo.append(doc)
    return len(reached) == len(set(docs))


def dataset_facts(
    sample: Sample, raw: Mapping[str, Any], questions: list[Question], space: VectorSpace
) -> dict[str, Any]:
    """Counts that describe the graph and the questions."""
    types: dict[str, int] = {}
    for item in (*raw["nodes"], *raw["edges"]):
        kind = item.get("nodeType") or item["edgeType"]
        types[kind] = types.get(kind, 0) + 1
    return {
        "source": sample.source,
        "sha256": {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sample.files},
        "questions": len(questions),
        "questionTypes": {k: sum(q.kind == k for q in questions) for k in sorted({q.kind for q in questions})},
        "counts": dict(sorted(types.items())),
        "questionsWithLinkedSupport": sum(linked(space, q.supporting) for q in questions),
    }


def markdown(results: Mapping[str, Any], sample: Sample = hotpotqa.SAMPLE, embedder_name: str = "minilm") -> str:
    """The results as a short markdown report."""
    facts, hop, model = results["dataset"], results["oneHop"], results["model"]
    counts = facts["counts"]
    budgets = results["budgets"]
    at = "/".join(map(str, budgets))
    lines = [
        f"# Retrieval quality: {sample.title}",
        "",
        f"Generated by `.venv-quality/bin/python -m benchmarks.quality.run{_options(sample, embedder_name)}` "
        "(venv: `benchmarks/quality/setup.sh`).",
        "",
        f"{facts['questions']} questions ({', '.join(f'{v} {k}' for k, v in facts['questionTypes'].items())}), "
        f"{counts[DOC]} paragraphs as `cdm.doc`, {counts.get('kg.cluster', 0)} mention clusters, "
        f"{counts.get(REFERENCES, 0)} `REFERENCES` and {counts.get('IN_CLUSTER', 0)} `IN_CLUSTER` edges; "
        f"{facts['questionsWithLinkedSupport']} questions have their supporting paragraphs linked by `REFERENCES`. "
        f"Embeddings: {model['name']} ({model['dimension']} dimensions, title + body cut to "
        f"{model['maxChars']} characters), {', '.join(f'{k} {v}' for k, v in model['versions'].items())}.",
        "",
        "Recall of the supporting paragraphs among the first N documents, mean over questions. *Docs seen*: "
        "documents the method had before the cut to N (vector: N; peer: seeds plus neighbours; brain-graph: "
        "`cdm.doc` nodes in `graphNodes`); *reach*: recall over all of them.",
        "",
        "| method | " + " | ".join(f"recall@{n}" for n in budgets) + f" | docs seen @{at} | reach @{at} |",
        "| --- | " + " | ".join("---:" for _ in budgets) + " | ---: | ---: |",
    ]
    for row in results["methods"]:
        cells = " | ".join(f"{100 * row['recall'][str(n)]:.1f}%" for n in budgets)
        seen = " / ".join(f"{row['docsSeen'][str(n)]:g}" for n in budgets)
        reach = " / ".join(f"{100 * row['reach'][str(n)]:.1f}%" for n in budgets)
        lines.append(f"| {row['label']} | {cells} | {seen} | {reach} |")
    lines += [
        "",
        "Against vector only, question by question: supporting paragraphs lost (in vector top N, not in the "
        "method's first N) / gained, and in brackets the questions that lose more than they gain.",
        "",
        "| method | " + " | ".join(f"lost / gained @{n}" for n in budgets) + " |",
        "| --- | " + " | ".join("---:" for _ in budgets) + " |",
    ]
    for row in results["methods"]:
        versus = row["againstVector"]
        cells = " | ".join(
            f"{versus[str(n)]['lost']} / {versus[str(n)]['gained']} ({versus[str(n)]['netLoss']})" for n in budgets
        )
        lines.append(f"| {row['label']} | {cells} |")
    same = results["packEqualsVector"]
    lines += [
        "",
        "brain-graph's first N citations equal vector top N on "
        + ", ".join(f"depth {d}: {same[str(d)]}" for d in results["depths"])
        + f" of {facts['questions'] * len(budgets)} (question, N) pairs.",
        "",
        f"Vector top 10 misses {hop['missedByVectorTop10']} supporting paragraphs; {hop['oneHopFromTop5']} of them "
        f"are one `REFERENCES` hop (either direction) from a vector top-5 hit, {hop['oneHopFromTop10']} from a "
        "top-10 hit.",
        "",
    ]
    if "issueFigures" in results:
        lines.append(
            "Issue 10 reported recall@10 of "
            + ", ".join(f"{k} {100 * v:.1f}%" for k, v in results["issueFigures"].items())
            + "; see `benchmarks/quality/README.md` for how this harness differs."
        )
    else:
        lines.append(
            "brain-graph's ranking settings were chosen on the HotpotQA sample and checked on this one; "
            "see `benchmarks/quality/README.md`."
        )
    return "\n".join(lines) + "\n"


def _options(sample: Sample, embedder_name: str) -> str:
    dataset = "" if sample.name == hotpotqa.SAMPLE.name else f" --dataset {sample.name}"
    return dataset + ("" if embedder_name == "minilm" else f" --embedder {embedder_name}")


def evaluate(
    pack_method: PackMethod = PACK_METHOD,
    cache: bool = True,
    sample: Sample = hotpotqa.SAMPLE,
    embedder_name: str = "minilm",
) -> dict[str, Any]:
    """Build, embed, load and measure ``sample`` with the embedder ``embedder_name`` (:func:`load_model`);
    returns the results object. ``cache`` keeps MiniLM's vectors under ``.cache/``."""
    started = time.perf_counter()
    model = load_model(embedder_name, cache)
    embedder, registry, profile = model.embedder, model.registry, model.profile
    corpus = sample.load_corpus()
    raw = sample.build_dataset(corpus)
    dataset = Dataset.model_validate(raw)
    questions = sample.load_questions(sample.doc_ids(corpus))
    filter_ = search_filter(sample.name)
    _log(f"dataset built: {_since(started)}")

    with (
        tempfile.TemporaryDirectory(prefix="brain-graph-quality-") as workdir,
        closing(EmbeddedStore(Path(workdir) / f"{sample.name}.sqlite3")) as store,
    ):
        started = time.perf_counter()
        loaded = load_dataset(dataset, store, registry)
        counts = f"{loaded.nodes} nodes, {loaded.edges} edges, {loaded.embedded} vectors"
        _log(f"embedded and loaded {counts}: {_since(started)}")
        space = vector_space(dataset, embedder, profile)
        rankings = [space.ranking(embedder.embed_query(q.text)) for q in questions]

        vector = {n: [vector_only(r, n) for r in rankings] for n in BUDGETS}
        bm25 = bm25_index(dataset)
        lexical = [bm25.ranking(q.text) for q in questions]
        baselines = (
            ("vector", "vector only (top N by cosine)", vector),
            (
                "peer",
                "peer: N/2 seeds + 1-hop REFERENCES neighbours by similarity",
                {n: [peer_recipe(space, r, n) for r in rankings] for n in BUDGETS},
            ),
            (
                "peer-filled",
                "peer, filled to N with the next vector hits (the naive recipe)",
                {n: [peer_filled(space, r, n) for r in rankings] for n in BUDGETS},
            ),
            ("bm25", "BM25 (top N)", {n: [vector_only(r, n) for r in lexical] for n in BUDGETS}),
        )
        methods = []
        for name, label, baseline in baselines:
            row = summarise(name, label, baseline, questions)
            row["againstVector"] = against_vector(baseline, vector, questions)
            methods.append(row)
        timer = StepTimer()
        services = SearchServices(backend=store, profiles=registry)
        graph = timer.graph(services)
        same: dict[str, int] = {}
        latency: dict[str, dict[str, float]] = {}
        started = time.perf_counter()
        for depth in DEPTHS:
            runs = {}
            for n in BUDGETS:
                timer.reset()
                options = {"topK": n, "expandDepth": depth, "retrievalMode": "vector"}
                runs[n] = [timer.timed(pack_method, graph, q.text, filter_, options) for q in questions]
                latency[f"topK {n}, depth {depth}"] = timer.summary()
            label = f"brain-graph pack, topK N, expandDepth {depth} (vector mode)"
            row = summarise(f"brain-graph-d{depth}", label, runs, questions)
            row["againstVector"] = against_vector(runs, vector, questions)
            methods.append(row)
            same[str(depth)] = sum(
                run.doc_ids[:n] == ref.doc_ids for n in BUDGETS for run, ref in zip(runs[n], vector[n], strict=True)
            )
        pure_vector = timer.graph(
            SearchServices(backend=store, profiles=registry, scoring=GraphScoring(graph_boosts=False))
        )
        default = f"brain-graph pack, default options (topK 20, expandDepth 1; {services.default_mode()} mode)"
        defaults: list[tuple[str, str, BrainSearchGraph, dict[str, Any]]] = [
            ("brain-graph-default", default, graph, {}),
            *(
                (f"brain-graph-default-{mode}", f"the same, retrievalMode {mode}", graph, {"retrievalMode": mode})
                for mode in MODES
            ),
            (
                "brain-graph-default-no-boosts",
                "the same in vector mode with graph boosts off (pure vector ranking)",
                pure_vector,
                {"retrievalMode": "vector"},
            ),
        ]
        for name, label, compiled, options in defaults:
            timer.reset()
            packs = [timer.timed(pack_method, compiled, q.text, filter_, options) for q in questions]  # one each
            latency[name] = timer.summary()
            runs = dict.fromkeys(BUDGETS, packs)
            row = summarise(name, label, runs, questions)
            row["againstVector"] = against_vector(runs, vector, questions)
            methods.append(row)
        searches = (len(DEPTHS) * len(BUDGETS) + len(defaults)) * len(questions)
        _log(f"{searches} brain-graph searches: {_since(started)}")
        _log("latency, ms (p50 / p95 over the questions): search | expand")
        for setting, figures in latency.items():
            _log(
                f"  {setting}: {figures['searchP50']:.2f} / {figures['searchP95']:.2f}"
                f" | {figures['expandP50']:.2f} / {figures['expandP95']:.2f}"
            )

    results = {
        "dataset": dataset_facts(sample, raw, questions, space),
        "model": model.info,
        "budgets": list(BUDGETS),
        "depths": list(DEPTHS),
        "searchFilter": filter_,
        "methods": methods,
        "packEqualsVector": same,
        "oneHop": one_hop(space, rankings, questions),
    }
    if embedder_name == "minilm" and sample.name in ISSUE_FIGURES:
        results["issueFigures"] = ISSUE_FIGURES[sample.name]
    results["supportingVectorRanks"] = {
        q.question_id: [ranking.index(doc) + 1 for doc in q.supporting]
        for q, ranking in zip(questions, rankings, strict=True)
    }
    return results


class StepTimer:
    """Times whole searches and their ``expand`` step: :meth:`graph` compiles the pipeline with ``expand``
    wrapped; the figures stay out of the result files (they vary from run to run)."""

    def __init__(self) -> None:
        self.searches: list[float] = []
        self.expands: list[float] = []

    def graph(self, services: SearchServices) -> BrainSearchGraph:
        """The search graph of ``services`` with a timed ``expand``."""
        steps = [(name, self._wrap(step) if name == "expand" else step) for name, step in PIPELINE]
        return compile_steps(steps, lambda: services)

    def _wrap(self, step: Step) -> Step:
        def timed_step(state: Any, deps: Any) -> Any:
            started = time.perf_counter()
            try:
                return step(state, deps)
            finally:
                self.expands.append(time.perf_counter() - started)

        return timed_step

    def timed(self, method: PackMethod, *args: Any) -> Retrieved:
        """``method(*args)``, timed."""
        started = time.perf_counter()
        try:
            return method(*args)
        finally:
            self.searches.append(time.perf_counter() - started)

    def reset(self) -> None:
        self.searches.clear()
        self.expands.clear()

    def summary(self) -> dict[str, float]:
        """p50 and p95 in milliseconds of the searches and ``expand`` steps since :meth:`reset`."""

        def quantile(values: list[float], q: float) -> float:
            ordered = sorted(values)
            return 1000 * ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else 0.0

        return {
            "searchP50": quantile(self.searches, 0.5),
            "searchP95": quantile(self.searches, 0.95),
            "expandP50": quantile(self.expands, 0.5),
            "expandP95": quantile(self.expands, 0.95),
        }


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _since(started: float) -> str:
    return f"{time.perf_counter() - started:.1f} s"


def main() -> None:
    """Run the harness and write ``results/<dataset>.json`` and ``.md`` (``<dataset>-lexical`` with the
    lexical embedder)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", choices=sorted(SAMPLES), default=hotpotqa.SAMPLE.name, help="default hotpotqa")
    parser.add_argument("--embedder", choices=EMBEDDERS, default="minilm", help="default minilm")
    parser.add_argument("--no-cache", action="store_true", help="embed everything afresh, keep nothing on disk")
    args = parser.parse_args()
    sample = SAMPLES[args.dataset]
    results = evaluate(cache=not args.no_cache, sample=sample, embedder_name=args.embedder)
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    stem = result_name(sample, args.embedder)
    (RESULTS_DIR / f"{stem}.json").write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n", "utf-8")
    report = markdown(results, sample, args.embedder)
    (RESULTS_DIR / f"{stem}.md").write_text(report, encoding="utf-8")
    print(report)


if __name__ == "__main__":
    main()
