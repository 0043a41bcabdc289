"""Per-principal rate limits (the ``limits`` library, moving window, in process memory unless a shared
storage is configured) and the HTTP headers that let clients back off."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

from limits import RateLimitItem, parse, storage, strategies
from limits.errors import ConfigurationError as LimitsConfigurationError

from brain_graph.core.errors import ConfigurationError, RateLimitedError

DEFAULT_RATE_LIMIT = "60 per 60 seconds"  # 60 requests / 60 s per principal


def parse_rate_limit(text: str) -> RateLimitItem | None:
    """``"60 per 60 seconds"``, ``"100/minute"``...; ``"off"`` (or empty) disables the limit."""
    if text.strip().lower() in {"", "off", "none"}:
        return None
    try:
        return parse(text)
    except ValueError:
        raise ConfigurationError(
            f"BRAIN_GRAPH_RATE_LIMIT: {text[:80]!r} is not a rate limit (e.g. '60 per 60 seconds', '100/minute', 'off')"
        ) from None


@dataclass(frozen=True)
class RateDecision:
    """One request counted against a limit: what is left and when the window frees a slot."""

    limit: int
    remaining: int
    reset_after_s: int

    def headers(self) -> dict[str, str]:
        """``X-RateLimit-Limit``, ``X-RateLimit-Remaining`` and ``X-RateLimit-Reset`` (seconds)."""
        return {
            "X-RateLimit-Limit": str(self.limit),
            "X-RateLimit-Remaining": str(self.remaining),
            "X-RateLimit-Reset": str(self.reset_after_s),
        }


def rate_limit_storage(uri: str) -> storage.Storage:
    """The ``limits`` storage of ``BRAIN_GRAPH_RATE_LIMIT_STORAGE``: ``memory://`` (one budget per
    process), or a shared one such as ``redis://host:6379`` (its client library installed) so that
    every worker and replica counts against the same budget."""
    try:
        store = storage.storage_from_string(uri)
    except (LimitsConfigurationError, ValueError) as error:
        raise ConfigurationError(f"BRAIN_GRAPH_RATE_LIMIT_STORAGE: {uri[:80]!r}: {error}") from None
    if not isinstance(store, storage.Storage):  # an async:// storage cannot serve the synchronous gate
        raise ConfigurationError(f"BRAIN_GRAPH_RATE_LIMIT_STORAGE: {uri[:80]!r} is an async storage; drop 'async+'")
    return store


class RateLimiter:
    """Counts requests per key (a principal id) in a moving window; thread-safe."""

    def __init__(self, item: RateLimitItem, store: storage.Storage | None = None) -> None:
        self.item = item
        self._limiter = strategies.MovingWindowRateLimiter(store or storage.MemoryStorage())

    def hit(self, key: str) -> RateDecision:
        """Count one request for ``key``; :class:`RateLimitedError` (with ``retry_after`` and the
        headers) once the window is full."""
        allowed = self._limiter.hit(self.item, key)
        stats = self._limiter.get_window_stats(self.item, key)
        reset_after = max(1, math.ceil(stats.reset_time - time.time()))
        decision = RateDecision(limit=self.item.amount, remaining=stats.remaining, reset_after_s=reset_after)
        if not allowed:
            raise RateLimitedError(
                f"rate limit of {self.item.amount} requests per {self.item.get_expiry()} s reached for this "
                f"principal; retry after {reset_after} s",
                retry_after=reset_after,
                headers=decision.headers(),
            )
        return decision
