"""The reference score (:func:`~brain_graph.core.scoring.cosine` then
:func:`~brain_graph.core.scoring.similarity_from_cosine`) of one query against many stored vectors at once,
bit for bit: the same float64 products, summed left to right (``np.add.accumulate``, unlike
``np.sum``), then the same division and rounding in Python floats."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from brain_graph.core.scoring import similarity_from_cosine


def exact_scores(query: Sequence[float], stored: Sequence[Sequence[float]] | npt.NDArray[np.float32]) -> list[float]:
    """The score of ``query`` against each of ``stored`` (rows of the query's dimension; float32 rows
    are widened exactly)."""
    if len(stored) == 0:
        return []
    if not len(query):
        return [similarity_from_cosine(0.0)] * len(stored)
    q = np.asarray(query, dtype=np.float64)
    rows = np.asarray(stored, dtype=np.float64)
    dots = np.add.accumulate(rows * q, axis=1)[:, -1].tolist()
    norms = np.add.accumulate(rows * rows, axis=1)[:, -1].tolist()
    query_norm = float(np.add.accumulate(q * q)[-1])
    return [
        similarity_from_cosine(0.0 if query_norm == 0.0 or norm == 0.0 else dot / math.sqrt(query_norm * norm))
        for dot, norm in zip(dots, norms, strict=True)
    ]
