"""Lexical retrieval's one definition, shared by every backend: how a text becomes terms, what a
node's lexical document is, and the BM25 score of a document for a query.

Terms are the runs of letters and digits of the NFKC case-folded text (``AUTH-104`` is ``auth``,
``104``; ``acme:work:AUTH-104`` is ``acme``, ``work``, ``auth``, ``104``): no stemming, no stop words.
Stores keep a document as its terms joined by single spaces (:func:`lexical_document`), so a server
that tokenises on white space sees exactly these terms.

The score is Okapi BM25 with Lucene's non-negative idf, over the statistics of one tenant's documents
in one profile (:class:`CorpusStats`): ``sum over distinct query terms t of idf(t) * tf * (k1 + 1) /
(tf + k1 * (1 - b + b * length / average length))`` with ``idf(t) = ln(1 + (N - df + 0.5) / (df + 0.5))``,
``k1`` 1.2 and ``b`` 0.75, the terms added in sorted order, so that every backend computes the same float.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

K1 = 1.2
B = 0.75
MAX_QUERY_TERMS = 32  # distinct terms of a query that are searched (the first ones, in query order)
_TERM = re.compile(r"[^\W_]+", re.UNICODE)


def terms(text: str) -> list[str]:
    """The terms of ``text``, in order (repeats kept)."""
    return _TERM.findall(unicodedata.normalize("NFKC", text).casefold())


def query_terms(text: str) -> tuple[str, ...]:
    """The distinct terms a query searches for: the first :data:`MAX_QUERY_TERMS`, sorted."""
    return tuple(sorted(list(dict.fromkeys(terms(text)))[:MAX_QUERY_TERMS]))


def lexical_document(node_id: str, text: str) -> str:
    """The lexical document of a node's vector in a profile: the terms of its id and of the text the
    profile embeds, joined by single spaces."""
    return " ".join([*terms(node_id), *terms(text)])


def exact_key(text: str) -> str:
    """What an exact match compares: the NFKC case-folded text without white space at either end."""
    return unicodedata.normalize("NFKC", text).casefold().strip()


def is_exact_match(query: str, node_id: str, title: str | None) -> bool:
    """Whether ``query`` names the node exactly: its id, the part of its id after the last ``:``
    (``AUTH-104`` of ``acme:work:AUTH-104``) or its title, compared by :func:`exact_key`."""
    key = exact_key(query)
    if not key:
        return False
    names = [node_id, node_id.rsplit(":", 1)[-1]]
    if title:
        names.append(title)
    return any(exact_key(name) == key for name in names)


@dataclass(frozen=True)
class CorpusStats:
    """The statistics BM25 scores against: ``documents`` (N), ``total_length`` (the sum of the
    documents' term counts) and ``frequencies``, the number of documents holding each query term."""

    documents: int
    total_length: int
    frequencies: Mapping[str, int]

    @property
    def average_length(self) -> float:
        return self.total_length / self.documents if self.documents else 0.0


def idf(documents: int, frequency: int) -> float:
    """Lucene's idf: ``ln(1 + (N - df + 0.5) / (df + 0.5))``, never negative."""
    return math.log(1.0 + (documents - frequency + 0.5) / (frequency + 0.5))


def term_score(idf_value: float, frequency: float, length: float, average_length: float) -> float:
    """One term's part of a document's score (``frequency`` occurrences in a document of ``length`` terms)."""
    norm = K1 * (1.0 - B + B * length / average_length) if average_length > 0 else K1
    return idf_value * frequency * (K1 + 1.0) / (frequency + norm)


def score(document_terms: Sequence[str], query: Sequence[str], stats: CorpusStats) -> float:
    """The BM25 score of a document (its terms) for the sorted distinct ``query`` terms."""
    counts = Counter(document_terms)
    length = float(len(document_terms))
    total = 0.0
    for term in query:
        frequency = counts.get(term, 0)
        if frequency:
            total += term_score(
                idf(stats.documents, stats.frequencies.get(term, 0)), frequency, length, stats.average_length
            )
    return total


def ranked(scored: Iterable[tuple[str, float]], limit: int) -> list[tuple[str, float]]:
    """The best ``limit`` of ``(node id, score)`` pairs with a positive score, by score descending then id."""
    return sorted(((node_id, value) for node_id, value in scored if value > 0), key=lambda pair: (-pair[1], pair[0]))[
        : max(0, limit)
    ]
