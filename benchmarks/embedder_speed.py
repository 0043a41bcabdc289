"""Throughput of the bundled lexical embedder: the original plain loop ("before") against
:class:`~brain_graph.embedding.lexical.LexicalHashEmbeddings` ("after"), single-threaded.

    .venv/bin/python -m benchmarks.embedder_speed
    .venv/bin/python -m benchmarks.embedder_speed --nodes 10000 --reference-texts 1000 --repeat 5

Text sets: ``synthetic`` is every text the default profiles embed for ``synthetic_dataset(--nodes)``
(``embedding_text``: title + summary or body, cut to 1,000 characters), split into its ``short`` ones
(work items and code files: title + summary, 10-16 words) and its ``docs`` (title + body, ~1,000
characters); ``example`` the titles and texts of ``examples/data/example_graph.json``; ``1k chars``
texts of exactly 1,000 characters made of example-graph texts (real words, camelCase, punctuation).

Columns, in texts per second: ``before`` the plain loop (kept verbatim in
``tests/unit/test_lexical_speed_equivalence.py``) on ``--reference-texts`` texts spread over the set;
``cold`` the first ``embed_documents`` of the whole set after emptying the memos; ``list`` a warm
``embed_documents`` (best of ``--repeat``); ``array`` a warm ``embed_documents_array`` (what the loader
calls). ``x`` is ``array / before``. Every run also checks the vectors against the plain loop's, bit
for bit, on the reference texts. A last line gives ``embed_query`` latency on short queries.
"""

from __future__ import annotations

import argparse
import gc
import random
import statistics
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from benchmarks.synthetic import synthetic_dataset
from brain_graph import LexicalHashEmbeddings, default_profiles, example_dataset_path, read_dataset
from brain_graph.embedding import lexical as embeddings
from brain_graph.indexing.dataset import embedding_text
from tests.unit.test_lexical_speed_equivalence import _ReferenceEmbeddings


def _per_second(count: int, action: Callable[[], Any], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        action()
        best = min(best, time.perf_counter() - start)
    return count / best


def text_sets(nodes: int, long_texts: int) -> dict[str, list[str]]:
    registry = default_profiles()
    records = synthetic_dataset(nodes).node_records()
    by_profile = {
        profile.profile_id: [
            text for node in records if node.node_type in profile.node_types if (text := embedding_text(node, profile))
        ]
        for profile in registry.profiles
    }
    synthetic = [text for texts in by_profile.values() for text in texts]
    short = by_profile["cdm.work.summary"] + by_profile["code.file.summary"]
    example = []
    for node in read_dataset(example_dataset_path()).nodes:
        example += [node.title or "", *node.text.values()]
    example = [text for text in example if text]
    rng = random.Random(11)
    long = []
    for _ in range(long_texts):
        parts: list[str] = []
        while sum(len(part) + 1 for part in parts) < 1_000:
            parts.append(rng.choice(example))
        long.append("\n".join(parts)[:1_000])
    return {
        "synthetic": synthetic,
        "short": short,
        "docs": by_profile["cdm.doc.body"],
        "example": example,
        "1k chars": long,
    }


def measure(name: str, texts: list[str], reference_texts: int, repeat: int) -> dict[str, Any]:
    reference = _ReferenceEmbeddings()
    embedder = LexicalHashEmbeddings()
    sample = texts[:: max(1, len(texts) // reference_texts)][:reference_texts]  # spread over the set
    want = reference.embed_documents(sample)
    if embedder.embed_documents(sample) != want:
        raise SystemExit(f"{name}: the vectors differ from the plain loop's")
    if not np.array_equal(embedder.embed_documents_array(sample), np.asarray(want, dtype=np.float32)):
        raise SystemExit(f"{name}: embed_documents_array differs from the plain loop's vectors")
    before = _per_second(len(sample), lambda: reference.embed_documents(sample), 1)
    embeddings._forget_memos()
    cold = _per_second(len(texts), lambda: embedder.embed_documents(texts), 1)
    warm_list = _per_second(len(texts), lambda: embedder.embed_documents(texts), repeat)
    warm_array = _per_second(len(texts), lambda: embedder.embed_documents_array(texts), repeat)
    return {
        "set": name,
        "texts": len(texts),
        "chars": statistics.mean(len(text) for text in texts),
        "words": statistics.mean(len(text.split()) for text in texts),
        "before": before,
        "cold": cold,
        "list": warm_list,
        "array": warm_array,
    }


def query_latency(queries: Sequence[str], repeat: int) -> tuple[float, float]:
    reference = _ReferenceEmbeddings()
    embedder = LexicalHashEmbeddings()
    for query in queries:
        if embedder.embed_query(query) != reference._embed(query):
            raise SystemExit(f"embed_query differs from the plain loop for {query!r}")

    def per_query(embed: Callable[[str], list[float]]) -> float:
        return 1e6 / _per_second(len(queries), lambda: [embed(query) for query in queries], repeat)

    return per_query(reference._embed), per_query(embedder.embed_query)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nodes", type=int, default=10_000, help="synthetic graph size (default 10,000)")
    parser.add_argument("--reference-texts", type=int, default=1_000, help="texts the slow plain loop embeds per set")
    parser.add_argument("--long-texts", type=int, default=3_000, help="1,000-character texts (default 3,000)")
    parser.add_argument("--repeat", type=int, default=3, help="warm runs per measurement, best kept (default 3)")
    args = parser.parse_args(argv)
    rows = [
        measure(name, texts, args.reference_texts, args.repeat)
        for name, texts in text_sets(args.nodes, args.long_texts).items()
    ]
    print("texts/s, single thread; vectors checked bit for bit against the plain loop")
    print(
        f"{'set':10} {'texts':>6} {'chars':>6} {'words':>6} {'before':>7} {'cold':>7} {'list':>7} {'array':>7} {'x':>5}"
    )
    for row in rows:
        print(
            f"{row['set']:10} {row['texts']:7d} {row['chars']:7.0f} {row['words']:7.1f} {row['before']:7.0f}"
            f" {row['cold']:7.0f} {row['list']:7.0f} {row['array']:7.0f} {row['array'] / row['before']:7.0f}"
        )
    queries = ["token refresh race", "user authentication", "AuthService login failures after rotation"] * 50
    before, after = query_latency(queries, args.repeat)
    print(f"embed_query on short queries: {before:.0f} us before, {after:.0f} us after")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
