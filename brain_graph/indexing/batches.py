"""Embedding texts in batches, where a failing embedder costs the texts it failed on, not the run.

A batch that raises is retried text by text, so one bad input leaves only itself without a vector
(when the first :data:`GIVE_UP_AFTER` texts all fail alone too, the embedder is taken as down and the
rest of the batch is not tried); a text whose vector is not finite is treated the same. A vector of
the wrong dimension is a configuration error and stops the run (every vector would be wrong).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt
from langchain_core.embeddings import Embeddings

from brain_graph.core.errors import BrainGraphError, ConfigurationError

logger = logging.getLogger(__name__)
GIVE_UP_AFTER = 3  # texts retried alone after a failed batch before an embedder that fails them all is taken as down
Rows = npt.NDArray[np.float32]


@dataclass
class EmbeddedTexts:
    """The outcome of :func:`embed_texts`: a float32 row per text (None where the embedder failed)."""

    rows: list[npt.NDArray[np.float32] | None]
    truncated: int = 0
    errors: list[str] = field(default_factory=list)

    @property
    def failed(self) -> int:
        return sum(1 for row in self.rows if row is None)


def _as_rows(embedder: Embeddings, texts: Sequence[str]) -> Rows:
    many = getattr(embedder, "embed_documents_array", None)
    if callable(many):
        return np.asarray(many(list(texts)), dtype=np.float32)
    return np.asarray(embedder.embed_documents(list(texts)), dtype=np.float32)


def _checked(rows: Rows, count: int, dimension: int, profile_id: str) -> Rows:
    if rows.ndim != 2 or rows.shape[0] != count:
        raise ValueError(f"the embedder returned {rows.shape[0] if rows.ndim else 0} vector(s) for {count} text(s)")
    if rows.shape[1] != dimension:
        raise ConfigurationError(
            f"profile {profile_id}: the embedder returned dimension {rows.shape[1]}, the profile has {dimension}"
        )
    return rows


def _count_truncated(embedder: Embeddings, texts: Sequence[str]) -> int:
    counter = getattr(embedder, "count_truncated", None)
    if not callable(counter):
        return 0
    try:
        return int(counter(list(texts)))
    except Exception:  # counting is informative only
        return 0


def _embed_one(embedder: Embeddings, text: str, dimension: int, profile_id: str) -> tuple[Rows | None, str | None]:
    try:
        return _checked(_as_rows(embedder, [text]), 1, dimension, profile_id)[0], None
    except BrainGraphError:
        raise
    except Exception as error:
        return None, f"{type(error).__name__}: {error}"


def embed_texts(embedder: Embeddings, texts: Sequence[str], *, dimension: int, profile_id: str) -> EmbeddedTexts:
    """Embed ``texts``; a failure costs only the texts it failed on (see the module docstring)."""
    if not texts:
        return EmbeddedTexts([])
    outcome = EmbeddedTexts([None] * len(texts), truncated=_count_truncated(embedder, texts))
    suspects: Sequence[int] = range(len(texts))  # the rows that may hold a value that is not finite
    try:
        rows = _checked(_as_rows(embedder, texts), len(texts), dimension, profile_id)
        outcome.rows = list(rows)
        suspects = np.flatnonzero(~np.isfinite(rows).all(axis=1)).tolist()  # one pass over the batch
    except BrainGraphError:
        raise
    except Exception:  # retried text by text: only the texts that fail alone stay without a vector
        for index, text in enumerate(texts):
            if index >= GIVE_UP_AFTER and not any(row is not None for row in outcome.rows[:index]):
                outcome.errors.append(f"{len(texts) - index} more text(s) not tried: the embedder failed on every one")
                break  # the embedder is down, not one text bad: no call per remaining text
            row, problem = _embed_one(embedder, text, dimension, profile_id)
            outcome.rows[index] = row
            if problem is not None:
                outcome.errors.append(problem)
    for index in suspects:
        row = outcome.rows[index]
        if row is not None and not np.isfinite(row).all():
            outcome.rows[index] = None
            outcome.errors.append("the embedder returned a value that is not finite")
    if outcome.errors:
        logger.warning("profile %s: %d text(s) not embedded: %s", profile_id, outcome.failed, outcome.errors[0])
    return outcome
