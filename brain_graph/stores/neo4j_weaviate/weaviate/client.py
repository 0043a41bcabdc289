"""The Weaviate connection: the async client (weaviate-client v4) on a private event-loop thread, its
lifecycle, the bound on every call and the count of requests sent.

Every request is bounded by the client's own timeouts (``init`` and ``query`` at the configured
timeout, ``insert`` longer). The client retries a gRPC UNAVAILABLE by itself with sleeps of up to a
minute and that retry cannot be configured, so a search is also bounded as a whole
(``asyncio.wait_for``), and a client whose gRPC channel lost its connection (the server stopped or
restarted) is replaced before use: a stopped server is reported in milliseconds, a restarted one is
used at once. A client that failed to connect is discarded, so the next call builds a new one.
Failures become :class:`~brain_graph.core.errors.BackendUnavailableError` naming ``weaviate``.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import Awaitable, Callable, Coroutine
from concurrent.futures import TimeoutError as FutureTimeoutError
from typing import Any, TypeVar

import grpc  # type: ignore[import-untyped]
import weaviate
from weaviate.classes.init import AdditionalConfig, Auth, Timeout

from brain_graph.core.errors import BackendUnavailableError, BrainGraphError, ConfigurationError
from brain_graph.stores.neo4j_weaviate.weaviate.errors import (
    BACKEND,
    CLIENT_ERRORS,
    insert_timeout_s,
    is_connectivity,
    unavailable,
)

T = TypeVar("T")
Operation = Callable[[weaviate.WeaviateAsyncClient], Awaitable[T]]
_LOST = (grpc.ChannelConnectivity.IDLE, grpc.ChannelConnectivity.TRANSIENT_FAILURE, grpc.ChannelConnectivity.SHUTDOWN)


class LoopThread:
    """A private asyncio loop on a daemon thread: the async client lives here, and callers on any
    thread submit coroutines to it."""

    def __init__(self, name: str) -> None:
        self._name = name
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def _start(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None or self._thread is None or not self._thread.is_alive():
                loop = asyncio.new_event_loop()
                thread = threading.Thread(target=loop.run_forever, name=self._name, daemon=True)
                thread.start()
                self._loop, self._thread = loop, thread
            return self._loop

    def run(self, coro: Coroutine[Any, Any, T], wait: float | None) -> T:
        """Run ``coro`` on the loop; ``wait`` bounds how long the caller blocks (seconds)."""
        future = asyncio.run_coroutine_threadsafe(coro, self._start())
        try:
            return future.result(wait)
        except FutureTimeoutError:
            future.cancel()
            raise

    def stop(self) -> None:
        with self._lock:
            loop, thread = self._loop, self._thread
            self._loop = self._thread = None
        if loop is not None and thread is not None:
            loop.call_soon_threadsafe(loop.stop)
            thread.join(timeout=5)
            if not thread.is_alive():
                loop.close()


def channel_state(client: weaviate.WeaviateAsyncClient) -> Any:
    """The connectivity state of the client's gRPC channel, without I/O (None if not readable: the
    client's private attributes are read defensively)."""
    channel = getattr(getattr(client, "_connection", None), "_grpc_channel", None)
    get_state = getattr(channel, "get_state", None)
    return get_state(try_to_connect=False) if get_state is not None else None


class WeaviateConnection:
    """A lazily connected async client, bounded calls and the count of requests (:attr:`round_trips`)."""

    def __init__(
        self,
        *,
        host: str,
        http_port: int,
        grpc_port: int,
        api_key: str = "",
        timeout_s: float = 5.0,
        secure: bool = False,
    ) -> None:
        self.host = host
        self.http_port = http_port
        self.grpc_port = grpc_port
        self.secure = secure  # HTTPS and gRPC over TLS
        self.timeout_s = timeout_s
        self._api_key = api_key
        self._loop = LoopThread(f"brain-graph-weaviate-{id(self):x}")
        self._client: weaviate.WeaviateAsyncClient | None = None
        self._client_lock: asyncio.Lock | None = None
        self._grpc_used = False
        self._counter_lock = threading.Lock()
        self.round_trips = 0

    def tick(self, requests: int = 1) -> None:
        """Count requests about to be sent."""
        with self._counter_lock:
            self.round_trips += requests

    def _new_client(self) -> weaviate.WeaviateAsyncClient:
        timeout = Timeout(init=self.timeout_s, query=self.timeout_s, insert=insert_timeout_s(self.timeout_s))
        return weaviate.use_async_with_custom(
            http_host=self.host,
            http_port=self.http_port,
            http_secure=self.secure,
            grpc_host=self.host,
            grpc_port=self.grpc_port,
            grpc_secure=self.secure,
            additional_config=AdditionalConfig(timeout=timeout),
            auth_credentials=Auth.api_key(self._api_key) if self._api_key else None,
            skip_init_checks=True,
        )

    async def _get_client(self) -> tuple[weaviate.WeaviateAsyncClient, bool]:
        """The connected client and whether it was just created."""
        if self._client_lock is None:
            self._client_lock = asyncio.Lock()
        async with self._client_lock:
            if self._client is not None and self._grpc_used and channel_state(self._client) in _LOST:
                await self._discard_client()
            if self._client is not None:
                return self._client, False
            try:
                client = self._new_client()
            except ValueError as error:  # pydantic validation of hosts/ports
                raise ConfigurationError(f"Weaviate connection settings: {error}".splitlines()[0]) from None
            try:
                self.tick()  # connect() reads /v1/meta
                await client.connect()
            except BaseException:
                with contextlib.suppress(Exception):
                    await client.close()
                raise
            self._client = client
            return client, True

    def _note_success(self, client: weaviate.WeaviateAsyncClient) -> None:
        """Remember that the client's gRPC channel has been connected (REST-only calls do not count):
        from then on a lost channel means the server went away."""
        if channel_state(client) == grpc.ChannelConnectivity.READY:
            self._grpc_used = True

    async def _discard_client(self) -> None:
        self._grpc_used = False
        client, self._client = self._client, None
        if client is not None:
            with contextlib.suppress(Exception):
                await client.close()

    async def _with_client(self, op: Operation[T]) -> T:
        client, fresh = await self._get_client()
        try:
            result = await op(client)
        except Exception as error:
            if not is_connectivity(error):
                raise
            await self._discard_client()
            if fresh:
                raise
        else:
            self._note_success(client)
            return result
        client, _ = await self._get_client()  # a stale connection: one retry on a new client
        result = await op(client)
        self._note_success(client)
        return result

    def call(self, op: Operation[T], timeout: float | None) -> T:
        """Run ``op`` with a connected client, within ``timeout`` seconds as a whole when set (each
        request is bounded by the client's timeouts anyway); map failures."""

        async def bounded() -> T:
            if timeout is None:
                return await self._with_client(op)
            try:
                return await asyncio.wait_for(self._with_client(op), timeout)
            except TimeoutError:
                await self._discard_client()
                raise

        started = time.monotonic()
        try:
            return self._loop.run(bounded(), None if timeout is None else timeout + 5)
        except (TimeoutError, FutureTimeoutError):
            raise BackendUnavailableError(
                BACKEND, f"no answer from {self.host}:{self.http_port} within {time.monotonic() - started:.1f}s"
            ) from None
        except BrainGraphError:
            raise
        except CLIENT_ERRORS as error:
            raise unavailable(f"{self.host}:{self.http_port}/{self.grpc_port}", error) from None

    def ping(self) -> None:
        """One request to the server's REST API (``/v1/meta``, with the configured API key), bounded by
        the timeout, not counted in :attr:`round_trips`: returns when the server answers it, else
        :class:`BackendUnavailableError` naming ``weaviate``."""

        async def meta(client: weaviate.WeaviateAsyncClient) -> None:
            await client.get_meta()

        self.call(meta, self.timeout_s)

    def close(self) -> None:
        """Close the client and stop the loop thread (a later call starts them again)."""
        with contextlib.suppress(Exception):
            self._loop.run(self._discard_client(), 10)
        self._client_lock = None
        self._loop.stop()
