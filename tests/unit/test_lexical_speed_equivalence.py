"""The fast ``LexicalHashEmbeddings`` gives, float for float, the vectors of the original plain loop.

``_ReferenceEmbeddings`` below is the plain per-text loop (its module helpers and ``_embed``, frozen
here): snapshot packs hold scores computed from its vectors, so the fast one must agree bit for bit
(``==``, never approx) on every input.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import random
import re
import sys
import threading
from array import array
from collections.abc import Iterator

import numpy as np
import pytest

from brain_graph.embedding import lexical as embeddings
from brain_graph.embedding.lexical import LexicalHashEmbeddings
from brain_graph.embedding.profiles import default_profiles
from brain_graph.indexing.dataset import embedding_text, example_dataset_path, read_dataset

# --- the reference: brain_graph/embedding/lexical.py before the speed-up, verbatim ------------------------

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


class _ReferenceEmbeddings:
    def __init__(self, dimension: int = 512) -> None:
        self.dimension = dimension

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
        return [self._embed(text) for text in texts]


# --- texts -------------------------------------------------------------------------------------------

_ALPHABET = (
    "abcdefghijklmnopqrstuvwxyz" * 3
    + "ABCDEFGHIJKLMNOPQRSTUVWXYZ" * 2
    + "0123456789_-./:#@!?'\"()[]{}<>|\\+*=&%$^~`,; \t\n\r\x00\x0b\x0c\x1c\x1d\x1e\x1f\x7f\x85\xa0"
    + "éèêëàâäôöüçñßÉÀÇÑÆæøØåÅ"  # Latin-1
    + "İıŁłŒœſǅǈǋ"  # case mappings that change length or title-case letters
    + "αβγδΣσςΩωЖжЯяЁё"  # Greek, Cyrillic
    + "中文字日本語한국어"  # CJK, Hangul
    + "٣٤٥০১२३²³¹½ⅠⅡⅫ"  # other digits and numerics
    + "\u0301\u0308\u0307\u200b\u200c\u200d\u2028\u2029\u3000\ufeff"  # combining marks, zero widths, separators
    + "ＡＢＣａｂｃ１２３"  # fullwidth
    + "😀🚀👩\u200d💻🇫🇷"  # astral symbols
)
_WORDS = [
    "AuthService", "HTTPServer", "getHTTPResponseCode", "XMLHttpRequest", "token_refresh", "TOKEN_REFRESH",
    "snake_case_name", "camelCaseName", "PascalCase", "ABCdef", "a1B2c3", "v2Api", "IOError", "iOS", "ID", "userID",
    "the", "and", "of", "to", "a", "an", "is", "it", "authentication", "authenticates", "authenticator", "users",
    "sessions", "invoicing", "billing", "ications", "ation", "ers", "x", "y", "z", "ab", "abc", "abcd", "naïve",
    "café", "straße", "İstanbul", "ΣΊΣΥΦΟΣ", "Москва", "東京", "42", "3.14", "1e10", "0x1F", "__init__", "--flag",
    "foo-bar", "foo.bar", "foo/bar", "e-mail", "O'Reilly", "don't",
]  # fmt: skip


def _random_unicode(rng: random.Random, length: int) -> str:
    return "".join(rng.choice(_ALPHABET) for _ in range(length))


def _random_words(rng: random.Random, words: int) -> str:
    separators = (" ", " ", " ", "\n", ", ", ". ", "_", "-", "/", "")
    return "".join(rng.choice(_WORDS) + rng.choice(separators) for _ in range(words))


def _hand_picked() -> list[str]:
    return [
        "",
        " ",
        "\n\t \r\n",
        "!!! ??? ... ___ --- ///",
        "_",
        "the and of to a an is it",  # only stopwords
        "The AND Of",  # stopwords after lower-casing
        "AuthService token_refresh HTTPServer",
        "getHTTPResponseCode parseXMLDocument2Json userID iOS_app ABCdef",
        "snake_case_variable_name __dunder__ trailing_ _leading",
        "Token refresh race",
        "auth flow",
        "user authentication",
        "AuthService: authenticates users and issues sessions",
        "token " * 500,  # repeated words
        "TokenTokenToken token_token_token",
        "a",
        "ab",
        "abcd",
        "ications",  # suffixes longer than the word allows
        "communications " * 3 + "relational rationalisation",
        "x" * 70,  # a run longer than the memoised ones
        "y" * 5_000,  # a very long word: trigram weight kinds far beyond the prebuilt table
        "İstanbul İİİ ııı",  # lower() makes 'İ' two code points
        "naïve café Straße ΣΊΣΥΦΟΣ Москва 東京タワー",
        "ＡｕｔｈＳｅｒｖｉｃｅ ５００",  # fullwidth letters: not ASCII, no camelCase split
        "zero\u200bwidth joiner\u200dword e\u0301cole",
        "digits 0123 ٣٤٥ ²³ ½ Ⅻ",
        "emoji 😀 rocket🚀launch",
        "nul\x00byte and\x1cfile\x1dseparators\x85next",
        "tab\tand\x0bvertical\x0cform feed",
        "MixedCASEWordsWITHAcronymsLikeHTTPAndJSONParser",
        "1234567890 12345678901234567890",
        "ａ" * 80,
    ]


def _synthetic_texts() -> list[str]:
    from benchmarks.synthetic import synthetic_dataset

    dataset = synthetic_dataset(300)
    registry = default_profiles()
    nodes = dataset.node_records()
    return [
        embedding_text(node, profile)
        for profile in registry.profiles
        for node in nodes
        if node.node_type in profile.node_types
    ]


def _example_texts() -> list[str]:
    dataset = read_dataset(example_dataset_path())
    texts = []
    for node in dataset.nodes:
        texts.append(node.title or "")
        texts.extend(value for value in node.text.values() if value)
    return texts


def _corpus() -> list[str]:
    rng = random.Random(20261123)
    texts = _hand_picked()
    texts += [_random_unicode(rng, rng.randrange(0, 120)) for _ in range(300)]
    texts += [_random_unicode(rng, 3_000) for _ in range(3)]
    texts += [_random_words(rng, rng.randrange(1, 80)) for _ in range(300)]
    texts += [_random_words(rng, 2_000)]  # very long
    texts += _synthetic_texts()
    texts += _example_texts()
    return texts


CORPUS = _corpus()


@functools.cache
def _reference(dimension: int, texts: tuple[str, ...] = tuple(CORPUS)) -> list[list[float]]:
    return _ReferenceEmbeddings(dimension).embed_documents(list(texts))


@pytest.fixture
def cold_memos(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fresh memos with tiny budgets: every call starts cold and the generations rotate often."""
    monkeypatch.setattr(embeddings, "_MEMOS", {})
    monkeypatch.setattr(embeddings, "_RUN_BUDGET", 4_000)
    monkeypatch.setattr(embeddings, "_FEATURE_BUDGET", 2_000)


def _assert_same(fast: list[list[float]], reference: list[list[float]], texts: list[str]) -> None:
    assert len(fast) == len(reference) == len(texts)
    assert all(type(value) is float for value in fast[0])
    for text, got, want in zip(texts, fast, reference, strict=True):
        # bit for bit: equal floats, and the same signs of zeros
        assert array("d", got).tobytes() == array("d", want).tobytes(), f"vector differs for {text[:80]!r}"


# --- the tests -------------------------------------------------------------------------------------


@pytest.mark.parametrize("dimension", [8, 384, 512])
def test_embed_documents_is_bit_identical_to_the_reference(dimension: int) -> None:
    reference = _reference(dimension)
    embedder = LexicalHashEmbeddings(dimension=dimension)
    _assert_same(embedder.embed_documents(CORPUS), reference, CORPUS)  # cold or warm memos, then warm
    _assert_same(embedder.embed_documents(CORPUS), reference, CORPUS)
    _assert_same(embedder.embed_documents(list(reversed(CORPUS))), reference[::-1], CORPUS[::-1])


@pytest.mark.parametrize("dimension", [8, 384, 512])
def test_embed_documents_array_is_the_float32_of_the_reference(dimension: int) -> None:
    reference = _reference(dimension)
    matrix = LexicalHashEmbeddings(dimension=dimension).embed_documents_array(CORPUS)
    assert matrix.dtype == np.float32
    assert matrix.shape == (len(CORPUS), dimension)
    expected = np.asarray(reference, dtype=np.float32)
    assert np.array_equal(matrix, expected)
    assert matrix.tobytes() == expected.tobytes()  # bit for bit, signs of zeros included


@pytest.mark.parametrize("dimension", [8, 384, 512])
def test_embed_query_is_bit_identical_to_the_reference(dimension: int) -> None:
    embedder = LexicalHashEmbeddings(dimension=dimension)
    _assert_same([embedder.embed_query(text) for text in CORPUS], _reference(dimension), CORPUS)


@pytest.mark.usefixtures("cold_memos")
@pytest.mark.parametrize("dimension", [8, 512, 1_000, 70_000])
def test_cold_rotating_memos_and_odd_dimensions_change_nothing(dimension: int) -> None:
    texts = CORPUS[:: 20 if dimension == 70_000 else 6]
    reference = _reference(dimension, tuple(texts))
    _assert_same(LexicalHashEmbeddings(dimension=dimension).embed_documents(texts), reference, texts)
    memo = embeddings._MEMOS[dimension][0]
    assert len(memo.young) + len(memo.old) < len(set(embeddings._WORD.findall(" ".join(texts))))  # it rotated


@pytest.mark.parametrize("sequential", [False, True])
def test_both_ways_of_summing_the_squares_match_the_reference(
    monkeypatch: pytest.MonkeyPatch, sequential: bool
) -> None:
    if sequential and sys.version_info >= (3, 12):
        pytest.skip("Python 3.12+ sums floats with compensation: the builtin sum is used there")
    monkeypatch.setattr(embeddings, "_SUM_IS_SEQUENTIAL", sequential)
    reference = _reference(512)
    _assert_same(LexicalHashEmbeddings().embed_documents(CORPUS), reference, CORPUS)


def test_batches_of_any_size_and_order_give_the_same_rows() -> None:
    embedder = LexicalHashEmbeddings(dimension=384)
    whole = embedder.embed_documents(CORPUS)
    assert [embedder.embed_documents([text])[0] for text in CORPUS[:200]] == whole[:200]
    assert embedder.embed_documents(CORPUS[5:400]) == whole[5:400]  # chunk boundaries elsewhere
    assert embedder.embed_documents([]) == []
    assert embedder.embed_documents_array([]).shape == (0, 384)


def test_word_runs_are_the_regex_runs() -> None:
    rng = random.Random(5)
    texts = [*CORPUS, *(_random_unicode(rng, 200) for _ in range(500))]
    texts += ["".join(chr(code) for code in range(start, start + 64)) for start in range(0, 0x3000, 64)]
    for text in texts:
        assert embeddings._runs(text) == _WORD.findall(text), repr(text[:80])


def test_tokenize_and_stem_are_unchanged() -> None:
    for text in CORPUS:
        assert embeddings.tokenize(text) == tokenize(text)
        for word in tokenize(text):
            assert embeddings.stem(word) == stem(word)


@pytest.mark.usefixtures("cold_memos")
def test_threads_embedding_at_once_get_the_reference_vectors() -> None:
    texts = CORPUS[::16]
    reference = _reference(512)[::16]
    results: dict[int, list[list[float]]] = {}
    errors: list[BaseException] = []

    def work(index: int) -> None:
        try:
            order = texts if index % 2 == 0 else texts[::-1]
            vectors = LexicalHashEmbeddings().embed_documents(order)
            vectors = LexicalHashEmbeddings().embed_documents(order)
            results[index] = vectors if index % 2 == 0 else vectors[::-1]
        except BaseException as error:  # pragma: no cover - reported below
            errors.append(error)

    previous = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)  # switch threads as often as possible
    try:
        threads = [threading.Thread(target=work, args=(index,)) for index in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(previous)
    assert not errors
    for vectors in results.values():
        _assert_same(vectors, reference, texts)


def test_memos_stay_within_their_budget() -> None:
    memo = embeddings._Memo(lambda key: key.encode() * 10, len, budget=50_000)
    for index in range(20_000):
        assert memo.young[f"key{index}"] == f"key{index}".encode() * 10
    held = sum(len(key) * 11 + embeddings._ENTRY_OVERHEAD for key in [*memo.young, *memo.old])
    assert held <= 2 * 50_000 + 1_000
    long_key = "x" * (embeddings._LONGEST_MEMOISED_KEY + 1)
    assert memo.young[long_key] == long_key.encode() * 10  # computed, but too long to keep
    assert long_key not in memo.young
    memo.forget()
    assert not memo.young
    assert not memo.old


def test_vectors_are_json_floats() -> None:
    vector = LexicalHashEmbeddings().embed_query("Token refresh race")
    assert json.loads(json.dumps(vector)) == vector
