"""Per-principal rate limits (the ``limits`` library, moving window, in process memory unless a shared
storage is configured) and the HTTP headers that let clients back off.

A shared storage (``redis://...``) that cannot be reached fails closed: the request is refused with
:class:`~brain_graph.core.errors.BackendUnavailableError` naming :data:`STORAGE_NAME`, never let in
uncounted.
"""

from __future__ import annotations

import math
import time
import urllib.parse
from dataclasses import dataclass

from limits import RateLimitItem, parse, storage, strategies
from limits.errors import ConfigurationError as LimitsConfigurationError
from limits.errors import StorageError

from brain_graph.core.errors import BackendUnavailableError, ConfigurationError, RateLimitedError

DEFAULT_RATE_LIMIT = "60 per 60 seconds"  # 60 requests / 60 s per principal
STORAGE_NAME = "rate-limit storage"  # how refusals and readiness name a shared storage
# A Redis that does not answer refuses a request after this long instead of holding it; a URI's own
# ``socket_timeout`` / ``socket_connect_timeout`` query parameters take precedence.
REDIS_TIMEOUT_S = 2.0
_REDIS_SCHEMES = frozenset({"redis", "rediss", "redis+unix", "valkey", "valkeys", "valkey+unix"})


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


def storage_label(uri: str) -> str:
    """``uri`` without its credentials or query, for logs: ``redis://cache:6379/2``."""
    parts = urllib.parse.urlsplit(uri.strip())
    host = parts.hostname or ""
    if parts.port is not None:
        host = f"{host}:{parts.port}"
    return f"{parts.scheme}://{host}{parts.path}"


def rate_limit_storage(uri: str) -> storage.Storage:
    """The ``limits`` storage of ``BRAIN_GRAPH_RATE_LIMIT_STORAGE``: ``memory://`` (one budget per
    process), or a shared one such as ``redis://host:6379`` (the ``redis`` client installed:
    ``brain-graph[redis]``) so that every worker and replica counts against the same budget. Its
    failures are raised as ``limits``' :class:`~limits.errors.StorageError`; a Redis gives up after
    :data:`REDIS_TIMEOUT_S`."""
    options: dict[str, float | str | bool] = {}
    if urllib.parse.urlsplit(uri.strip()).scheme.lower() in _REDIS_SCHEMES:
        options = {"socket_timeout": REDIS_TIMEOUT_S, "socket_connect_timeout": REDIS_TIMEOUT_S}
    try:
        store = storage.storage_from_string(uri.strip(), wrap_exceptions=True, **options)
    except (LimitsConfigurationError, ValueError) as error:
        raise ConfigurationError(f"BRAIN_GRAPH_RATE_LIMIT_STORAGE: {uri[:80]!r}: {error}") from None
    if not isinstance(store, storage.Storage):  # an async:// storage cannot serve the synchronous gate
        raise ConfigurationError(f"BRAIN_GRAPH_RATE_LIMIT_STORAGE: {uri[:80]!r} is an async storage; drop 'async+'")
    return store


class RateLimiter:
    """Counts requests per key (a principal id) in a moving window; thread-safe. The count of a key
    is one in the storage, so processes sharing a storage share each key's budget."""

    def __init__(self, item: RateLimitItem, store: storage.Storage | None = None, *, label: str = "memory://") -> None:
        self.item = item
        self.label = label
        self._store = store or storage.MemoryStorage()
        self._limiter = strategies.MovingWindowRateLimiter(self._store)

    @property
    def shared(self) -> bool:
        """Whether the storage is shared with other processes."""
        return not isinstance(self._store, storage.MemoryStorage)

    def check_storage(self) -> None:
        """Return when the storage answers; :class:`BackendUnavailableError` when it does not."""
        try:
            healthy = self._store.check()
        except StorageError as error:
            raise self._unavailable(error.storage_error) from None
        if not healthy:
            raise BackendUnavailableError(STORAGE_NAME, f"{self.label}: no answer to a health check")

    def hit(self, key: str) -> RateDecision:
        """Count one request for ``key``; :class:`RateLimitedError` (with ``retry_after`` and the
        headers) once the window is full, :class:`BackendUnavailableError` when the storage cannot
        be reached (the request is not let in)."""
        try:
            allowed = self._limiter.hit(self.item, key)
            stats = self._limiter.get_window_stats(self.item, key)
        except StorageError as error:
            raise self._unavailable(error.storage_error) from None
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

    def _unavailable(self, cause: Exception) -> BackendUnavailableError:
        return BackendUnavailableError(STORAGE_NAME, f"{self.label}: {type(cause).__name__}: {cause}")
