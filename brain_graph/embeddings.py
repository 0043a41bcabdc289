"""A deterministic lexical embedder that ships with the package.

``LexicalHashEmbeddings`` is a LangChain :class:`~langchain_core.embeddings.Embeddings` that hashes
words, light stems and character trigrams into a fixed-size signed vector (the "hashing trick",
each feature into three buckets so that one collision cannot dominate a score).
Texts sharing words or word pieces get a higher cosine similarity; nothing is random, nothing is
downloaded, and the output is identical on every machine and Python run (no salted ``hash()``).
Use it for tests, demos and offline set-ups; any other ``Embeddings`` can replace it per profile.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Iterator

from langchain_core.embeddings import Embeddings

_CAMEL_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_SUFFIXES = (
    "ications",
    "ication",
    "ations",
    "ation",
    "ates",
    "ate",
    "ings",
    "ing",
    "ers",
    "er",
    "ed",
    "es",
    "ic",
    "ly",
    "s",
)
_STOPWORDS = frozenset(
    (
        "a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "has", "have", "in", "is",
        "it", "its", "of", "on", "or", "that", "the", "to", "was", "were", "will", "with",
    )
)  # fmt: skip

WORD_WEIGHT = 1.0
STEM_WEIGHT = 0.7
TRIGRAM_WEIGHT = 0.6
PROBES = 3  # buckets per feature: a collision between two features costs a third of their weight


def tokenize(text: str) -> list[str]:
    """Lower-cased words, with camelCase and snake_case split (``AuthService`` -> auth, service)."""
    return [word.lower() for word in _WORD.findall(_CAMEL_BOUNDARY.sub(" ", text))]


def stem(word: str) -> str:
    """A crude, deterministic suffix stripper, applied until nothing changes:
    ``authentication`` and ``authenticates`` -> ``authent``, ``users`` -> ``user``."""
    changed = True
    while changed:
        changed = False
        for suffix in _SUFFIXES:
            if len(word) > len(suffix) + 3 and word.endswith(suffix):
                word = word[: -len(suffix)]
                changed = True
                break
    return word


def _features(text: str) -> Iterator[tuple[str, float]]:
    for word in tokenize(text):
        if word in _STOPWORDS:
            continue
        yield f"w:{word}", WORD_WEIGHT
        root = stem(word)
        yield f"s:{root}", STEM_WEIGHT
        padded = f"#{root}#"
        grams = [padded[i : i + 3] for i in range(len(padded) - 2)]
        for gram in grams:
            yield f"g:{gram}", TRIGRAM_WEIGHT / math.sqrt(len(grams))


class LexicalHashEmbeddings(Embeddings):
    """Deterministic feature-hashing embeddings with real lexical signal.

    Args:
        dimension: Vector size (default 512).
        name: Embedder name recorded with the vectors it produced.
    """

    def __init__(self, dimension: int = 512, name: str = "lexical-hash-v1") -> None:
        if dimension < 8:
            raise ValueError("dimension must be at least 8")
        self.dimension = dimension
        self.name = name

    def _embed(self, text: str) -> list[float]:
        vector = [0.0] * self.dimension
        for feature, weight in _features(text):
            digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8 * PROBES).digest()
            for probe in range(PROBES):
                chunk = digest[8 * probe : 8 * probe + 8]
                bucket = int.from_bytes(chunk[:7], "big") % self.dimension
                vector[bucket] += weight if chunk[7] & 1 else -weight
        norm = math.sqrt(sum(value * value for value in vector))
        if norm == 0.0:
            return vector
        return [value / norm for value in vector]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Embed many texts."""
        return [self._embed(text) for text in texts]

    def embed_query(self, text: str) -> list[float]:
        """Embed the query text."""
        return self._embed(text)
