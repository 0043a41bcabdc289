"""A deterministic lexical embedder that ships with the package.

``LexicalHashEmbeddings`` is a LangChain :class:`~langchain_core.embeddings.Embeddings` that hashes
words, light stems and character trigrams into a fixed-size signed vector (the "hashing trick",
each feature into three buckets so that one collision cannot dominate a score).
Texts sharing words or word pieces get a higher cosine similarity; nothing is random, nothing is
downloaded, and the output is identical on every machine and Python run (no salted ``hash()``).
Use it for tests, demos and offline set-ups; any other ``Embeddings`` can replace it per profile.

Speed, without changing a bit of the vectors the plain per-feature loop gave: a text is cut into
runs of word characters (a camelCase boundary always falls inside a run), and what a run adds to a
vector, its ``(bucket, signed weight)`` pairs in feature order, is memoised per run (as are each
feature's buckets) in bounded memos. A chunk of texts then adds all its pairs into its rows with one
``numpy.bincount``, which adds in array order: per bucket, the order of the loop's ``+=``. Each norm
is the square root of the row's squares summed in index order the way the builtin ``sum`` does it,
and the division is the same IEEE division. :meth:`LexicalHashEmbeddings.embed_documents_array`
returns the rows as a float32 matrix without going through Python floats.
``tests/unit/test_lexical_speed_equivalence.py`` keeps the plain loop and compares every float.
"""

from __future__ import annotations

import hashlib
import math
import re
import sys
from array import array
from collections.abc import Callable, Iterator, Sequence
from functools import partial
from itertools import chain
from typing import Generic, TypeVar

import numpy as np
import numpy.typing as npt
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
_Value = TypeVar("_Value")


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


def _word_features(word: str) -> list[tuple[str, int]]:
    """The features of one lower-cased, non-stopword token in order, each with its weight's kind:
    0 the word (``WORD_WEIGHT``), 1 its stem (``STEM_WEIGHT``), ``k + 1`` a trigram of a stem with
    ``k`` trigrams (``TRIGRAM_WEIGHT / sqrt(k)``)."""
    root = stem(word)
    padded = f"#{root}#"
    grams = [padded[i : i + 3] for i in range(len(padded) - 2)]
    return [(f"w:{word}", 0), (f"s:{root}", 1)] + [(f"g:{gram}", len(grams) + 1) for gram in grams]


class _Generation(dict[str, _Value]):
    """One generation of a :class:`_Memo`; a key it lacks is asked of the memo."""

    def __init__(self, memo: _Memo[_Value]) -> None:
        super().__init__()
        self.memo = memo

    def __missing__(self, key: str) -> _Value:
        return self.memo.fill(key)


class _Memo(Generic[_Value]):
    """A bounded memo of a pure function of strings, in two generations: ``memo.young[key]`` is the
    value of ``key``, memoised or not.

    A key the young generation lacks is looked up in the old one, else computed, and then put in the
    young one (unless longer than ``longest`` characters: such keys hardly repeat); once the young
    generation holds about ``budget`` bytes (``size(value)`` and the key's length, plus what the
    objects and their dict slot cost) it becomes the old one and a new young one starts, so at most
    about ``2 * budget`` bytes are held. Each step is one dict operation or attribute rebinding
    (atomic under the GIL) and every value is an immutable function of its key: two threads racing
    can at worst drop an entry, recomputed later to the same value, never corrupt one.
    """

    def __init__(self, compute: Callable[[str], _Value], size: Callable[[_Value], int], budget: int) -> None:
        self.compute = compute
        self.size = size
        self.budget = budget
        self.spent = 0
        self.young: _Generation[_Value] = _Generation(self)
        self.old: _Generation[_Value] = _Generation(self)

    def fill(self, key: str) -> _Value:
        value = self.old.get(key)
        if value is None:
            value = self.compute(key)
            if len(key) > _LONGEST_MEMOISED_KEY:
                return value
        self.young[key] = value
        self.spent += len(key) + self.size(value) + _ENTRY_OVERHEAD
        if self.spent > self.budget:
            self.spent = 0
            self.old = self.young
            self.young = _Generation(self)
        return value

    def forget(self) -> None:
        self.old = _Generation(self)
        self.young = _Generation(self)
        self.spent = 0


_LONGEST_MEMOISED_KEY = 64  # longer runs (ids, hashes, base64) and their features hardly repeat: not kept
_ENTRY_OVERHEAD = 150  # bytes an entry costs besides its key's characters and its value: objects, a dict slot
_RUN_BUDGET = 12 << 20  # run -> its pairs, per dimension: at most ~24 MB
_FEATURE_BUDGET = 4 << 20  # feature -> its probes, per dimension: at most ~8 MB
_PROBES_SIZE = 160  # bytes of a tuple of PROBES ints below 2**34
_PAIR_BYTES = 8  # a pair is one int64: its weight's code << 32 | its bucket
_BUCKET_MASK = (1 << 32) - 1
_TEXTS_PER_CHUNK = 128  # texts per bincount: the chunk's arrays stay in the CPU caches
_CELLS_PER_CHUNK = 1 << 16  # ... and at most this many vector cells (texts x dimension), but one text at least
# Python < 3.12 sums floats left to right (np.cumsum does the same); 3.12 compensates (Neumaier), so
# there the rows' squares go through the builtin sum itself.
_SUM_IS_SEQUENTIAL = sys.version_info < (3, 12)
_NOT_WORD_ASCII = str.maketrans({c: " " for c in map(chr, range(128)) if not c.isalnum()})
_MEMOS: dict[int, tuple[_Memo[bytes], _Memo[tuple[int, ...]]]] = {}  # per dimension: runs, features


def _runs(text: str) -> list[str]:
    """The runs of word characters of ``text``: ``_WORD.findall(text)``, faster for ASCII text."""
    return text.translate(_NOT_WORD_ASCII).split() if text.isascii() else _WORD.findall(text)


def _weights(codes: int) -> npt.NDArray[np.float64]:
    """The signed weight of each code below ``codes`` (code ``2 * kind`` the positive weight of a
    kind of :func:`_word_features`, ``2 * kind + 1`` the negative): the very floats the plain loop adds."""
    table = _WEIGHT_TABLE
    if len(table) >= codes:
        return table
    signed = [WORD_WEIGHT, -WORD_WEIGHT, STEM_WEIGHT, -STEM_WEIGHT]
    for k in range(1, (codes + 1) // 2 - 1):
        weight = TRIGRAM_WEIGHT / math.sqrt(k)
        signed += [weight, -weight]
    grown = np.array(signed, dtype=np.float64)
    _keep_longer(grown)
    return grown


def _keep_longer(table: npt.NDArray[np.float64]) -> None:
    global _WEIGHT_TABLE
    if len(table) > len(_WEIGHT_TABLE):  # a racing thread may have grown it further: keep the longest
        _WEIGHT_TABLE = table


_WEIGHT_TABLE: npt.NDArray[np.float64] = np.zeros(0, dtype=np.float64)
_weights(2 * (_LONGEST_MEMOISED_KEY + 2))


def _feature_probes(feature: str, dimension: int) -> tuple[int, ...]:
    """A feature's buckets, each ``negative << 32 | bucket`` (``negative`` 1 where the loop subtracts)."""
    digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8 * PROBES).digest()
    probes = []
    for probe in range(PROBES):
        chunk = digest[8 * probe : 8 * probe + 8]
        bucket = int.from_bytes(chunk[:7], "big") % dimension
        probes.append((0 if chunk[7] & 1 else 1) << 32 | bucket)
    return tuple(probes)


def _run_pairs(run: str, features: _Memo[tuple[int, ...]]) -> bytes:
    """What a run of word characters adds to a vector: its ``(bucket, signed weight)`` pairs in the
    order the plain loop adds them, each an int64 ``weight code << 32 | bucket``."""
    probes_of = features.young
    pairs = []
    for word in tokenize(run):
        if word in _STOPWORDS:
            continue
        for feature, kind in _word_features(word):
            code = 2 * kind << 32
            for probe in probes_of[feature]:
                pairs.append(code + probe)
    return array("q", pairs).tobytes()


def _run_memo(dimension: int) -> _Memo[bytes]:
    """The run memo of a dimension, shared by the embedders of that dimension."""
    memos = _MEMOS.get(dimension)
    if memos is None:
        features = _Memo(partial(_feature_probes, dimension=dimension), lambda _: _PROBES_SIZE, _FEATURE_BUDGET)
        runs = _Memo(partial(_run_pairs, features=features), len, _RUN_BUDGET)
        memos = _MEMOS.setdefault(dimension, (runs, features))
    return memos[0]


def _forget_memos() -> None:
    """Empty every memo (for cold-start measurements)."""
    for memos in list(_MEMOS.values()):
        for memo in memos:
            memo.forget()


def _row_sums(squares: npt.NDArray[np.float64], sequential: bool) -> npt.NDArray[np.float64]:
    """Each row's ``sum()`` as Python computes it, buckets in index order."""
    if sequential:
        sums: npt.NDArray[np.float64] = np.cumsum(squares, axis=1)[:, -1]
        return sums
    nonzero = squares != 0.0  # adding 0.0 to a sum of squares changes nothing
    values = squares[nonzero].tolist()
    ends = np.cumsum(nonzero.sum(axis=1)).tolist()
    return np.array([sum(values[start:end]) for start, end in zip([0, *ends], ends, strict=False)])


class LexicalHashEmbeddings(Embeddings):
    """Deterministic feature-hashing embeddings with real lexical signal.

    ``lexical_weight`` is the weight hybrid retrieval gives BM25 next to these vectors when none is
    configured (:func:`brain_graph.embedding.profiles.hybrid_weight`): they carry little meaning beyond
    the words, so the exact lexical match leads.

    Args:
        dimension: Vector size (default 512).
        name: Embedder name recorded with the vectors it produced.
    """

    lexical_weight = 3.0

    def __init__(self, dimension: int = 512, name: str | None = None) -> None:
        if dimension < 8:
            raise ValueError("dimension must be at least 8")
        self.dimension = dimension
        self.name = name or ("lexical-hash-v1" if dimension == 512 else f"lexical-hash-v1/{dimension}")

    def _rows(self, texts: Sequence[str]) -> npt.NDArray[np.float64]:
        """The vectors of a chunk of texts, one float64 row each."""
        dimension = self.dimension
        count = len(texts)
        runs = [_runs(text) for text in texts]
        found = list(map(_run_memo(dimension).young.__getitem__, chain.from_iterable(runs)))
        pairs = np.frombuffer(b"".join(found), dtype=np.int64)
        cells = pairs & _BUCKET_MASK
        if count > 1:  # each text's buckets into its own row
            pairs_per_run = np.fromiter(map(len, found), dtype=np.int64, count=len(found)) // _PAIR_BYTES
            runs_per_text = np.fromiter(map(len, runs), dtype=np.int64, count=count)
            run_offsets = np.repeat(np.arange(0, count * dimension, dimension, dtype=np.int64), runs_per_text)
            cells += np.repeat(run_offsets, pairs_per_run)
        codes = pairs >> 32
        weights = _weights(int(codes.max(initial=0)) + 1).take(codes)
        # bincount adds the weights in array order: per bucket, in the order of the plain loop's `+=`
        rows = np.bincount(cells, weights=weights, minlength=count * dimension).astype(np.float64, copy=False)
        rows = rows.reshape(count, dimension)  # (bincount counts in int64 when there is nothing to add)
        norms = np.sqrt(_row_sums(rows * rows, _SUM_IS_SEQUENTIAL))
        norms[norms == 0.0] = 1.0  # an all-zero vector is returned as it is
        rows /= norms[:, None]
        return rows

    def _chunks(self, texts: Sequence[str]) -> Iterator[npt.NDArray[np.float64]]:
        size = max(1, min(_TEXTS_PER_CHUNK, _CELLS_PER_CHUNK // self.dimension))
        for start in range(0, len(texts), size):
            yield self._rows(texts[start : start + size])

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Embed many texts."""
        vectors: list[list[float]] = []
        for rows in self._chunks(texts):
            vectors.extend(rows.tolist())
        return vectors

    def embed_documents_array(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Embed many texts into a float32 matrix, one row per text (the rows of
        :meth:`embed_documents` as float32, without the Python float lists)."""
        matrix = np.empty((len(texts), self.dimension), dtype=np.float32)
        start = 0
        for rows in self._chunks(texts):
            matrix[start : start + len(rows)] = rows
            start += len(rows)
        return matrix

    def embed_query(self, text: str) -> list[float]:
        """Embed the query text."""
        vector: list[float] = self._rows([text])[0].tolist()
        return vector
