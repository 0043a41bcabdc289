"""A shared rate-limit storage: two limiters on one Redis (as two processes would be) share a
principal's budget, one that cannot be reached fails closed (503 naming the rate-limit storage, its
address only in the log), and readiness checks it; ``memory://`` needs no check."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest

from brain_graph.auth import Gate, JwtVerifier, RateLimiter, TokenIssuer
from brain_graph.auth.rate_limit import (
    STORAGE_NAME,
    parse_rate_limit,
    rate_limit_storage,
    storage_label,
)
from brain_graph.core.errors import BackendUnavailableError, RateLimitedError
from brain_graph.serving.admission import GateRefusal, admit
from tests.platform.devserver import free_port
from tests.platform.redis_server import RedisServer, run_redis
from tests.unit.auth_plugin import SECRET

ITEM = parse_rate_limit("3 per hour")
assert ITEM is not None


@pytest.fixture(scope="module")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    with run_redis(tmp_path_factory.mktemp("redis")) as running:
        yield running


def limiter(uri: str) -> RateLimiter:
    assert ITEM is not None
    return RateLimiter(ITEM, rate_limit_storage(uri), label=storage_label(uri))


def test_limiters_on_one_redis_share_each_budget(redis_server: RedisServer) -> None:
    first, second = limiter(redis_server.url), limiter(redis_server.url)  # separate clients, as two workers
    assert first.shared
    assert second.shared
    remaining = [limiter_.hit("alice").remaining for limiter_ in (first, second, first)]
    assert remaining == [2, 1, 0]
    with pytest.raises(RateLimitedError):
        second.hit("alice")
    assert first.hit("bob").remaining == 2  # another principal, another budget
    first.check_storage()  # answers


def test_an_unreachable_storage_fails_closed() -> None:
    uri = f"redis://:hunter2@127.0.0.1:{free_port()}/0"  # nothing listens there
    unreachable = limiter(uri)
    with pytest.raises(BackendUnavailableError) as caught:
        unreachable.hit("alice")
    assert caught.value.backend == STORAGE_NAME
    assert f"redis://127.0.0.1:{uri.rsplit(':', 1)[1]}" in str(caught.value)
    assert "hunter2" not in str(caught.value)
    with pytest.raises(BackendUnavailableError):
        unreachable.check_storage()


def test_the_gate_refuses_with_503_and_logs_where(caplog: pytest.LogCaptureFixture) -> None:
    port = free_port()
    gate = Gate(JwtVerifier(SECRET), limiter(f"redis://127.0.0.1:{port}"))
    token = TokenIssuer(SECRET).mint("alice", ["acme"])
    with caplog.at_level(logging.ERROR):
        refusal = admit(lambda: gate, f"Bearer {token}", logging.getLogger("test"))
    assert isinstance(refusal, GateRefusal)
    assert (refusal.status, refusal.code) == (503, "BACKEND_UNAVAILABLE")
    assert refusal.message.startswith("rate-limit storage is unavailable")
    assert str(port) not in refusal.message
    assert refusal.headers["Retry-After"] == str(refusal.retry_after)
    assert str(port) in caplog.text


def test_readiness_checks_a_shared_storage_only(redis_server: RedisServer) -> None:
    assert ITEM is not None
    assert Gate(JwtVerifier(SECRET), RateLimiter(ITEM)).readiness_checks() == {}
    assert Gate(JwtVerifier(SECRET), None).readiness_checks() == {}
    checks = Gate(JwtVerifier(SECRET), limiter(redis_server.url)).readiness_checks()
    assert list(checks) == [STORAGE_NAME]
    checks[STORAGE_NAME]()  # answers


@pytest.mark.parametrize(
    ("uri", "label"),
    [
        ("redis://:secret@cache:6379/2?socket_timeout=1", "redis://cache:6379/2"),
        ("rediss://user:pw@cache.example:6380", "rediss://cache.example:6380"),
        ("memory://", "memory://"),
        ("redis+unix:///run/redis.sock?db=1", "redis+unix:///run/redis.sock"),
    ],
)
def test_the_label_drops_credentials_and_options(uri: str, label: str) -> None:
    assert storage_label(uri) == label


def test_memory_is_not_shared() -> None:
    assert not limiter("memory://").shared
