"""Similarity scores: the one formula every backend scores with, so the same data gives bit-identical
scores everywhere (float64 arithmetic over the stored float32 vectors)."""

from __future__ import annotations

import math
from collections.abc import Sequence

SCORE_DECIMALS = 6


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    """Cosine similarity in float64, accumulated left to right (the order fixes the last bit)."""
    dot = norm_a = norm_b = 0.0
    for x, y in zip(a, b, strict=True):
        dot += x * y
        norm_a += x * x
        norm_b += y * y
    if norm_a == 0.0 or norm_b == 0.0:
        return 0.0
    return dot / math.sqrt(norm_a * norm_b)


def similarity_from_cosine(cosine: float) -> float:
    """Map cosine similarity in [-1, 1] to a score in [0, 1] (Weaviate's "certainty"), rounded to
    :data:`SCORE_DECIMALS` so every backend yields the same value for the same vectors."""
    return round(min(1.0, max(0.0, (1.0 + cosine) / 2.0)), SCORE_DECIMALS)
