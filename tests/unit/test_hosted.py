"""Provider embedders without a provider: which failures are retried, the waits, the arguments each
integration is given, batches and the checks of what comes back (a stand-in client)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from langchain_core.embeddings import Embeddings
from tenacity import RetryCallState

from brain_graph.core.errors import ConfigurationError
from brain_graph.embedding.hosted import (
    MAX_WAIT_S,
    NO_KEY,
    ProviderConfig,
    ProviderEmbeddings,
    _Backoff,
    _client_arguments,
    _is_transient,
    parse_provider,
)


class StatusError(Exception):
    def __init__(self, status_code: int, retry_after: str | None = None) -> None:
        super().__init__(f"status {status_code}")
        self.status_code = status_code
        self.response = SimpleNamespace(headers={"retry-after": retry_after} if retry_after else {})


class APIConnectionError(Exception):  # named as the OpenAI client's
    pass


@pytest.mark.parametrize(
    ("error", "transient"),
    [
        (StatusError(429), True),
        (StatusError(503), True),
        (StatusError(500), True),
        (StatusError(400), False),
        (StatusError(401), False),
        (ConnectionRefusedError(), True),
        (TimeoutError(), True),
        (APIConnectionError(), True),
        (ValueError("bad input"), False),
    ],
)
def test_what_is_retried(error: Exception, transient: bool) -> None:
    assert _is_transient(error) is transient


def _state(error: Exception, attempt: int) -> RetryCallState:
    state = RetryCallState(None, None, (), {})  # type: ignore[arg-type]
    state.attempt_number = attempt
    state.set_exception((type(error), error, None))
    return state


def test_backoff_doubles_and_honours_a_bounded_retry_after() -> None:
    backoff = _Backoff(1.0)
    assert [backoff(_state(StatusError(503), attempt)) for attempt in (1, 2, 3)] == [1.0, 2.0, 4.0]
    assert backoff(_state(StatusError(429, "7"), 1)) == 7.0
    assert backoff(_state(StatusError(429, "3600"), 1)) == MAX_WAIT_S
    assert backoff(_state(StatusError(429, "soon"), 2)) == 2.0
    assert _Backoff(0.0)(_state(StatusError(429, "0"), 3)) == 0.0


def test_provider_strings() -> None:
    assert parse_provider(" Ollama : nomic-embed-text:latest ") == ("ollama", "nomic-embed-text:latest")
    for bad in ("voyage:voyage-3", "openai:", "openai"):
        with pytest.raises(ValueError, match="PROVIDER:MODEL with PROVIDER one of openai, azure_openai, ollama"):
            parse_provider(bad)


def test_the_arguments_each_integration_is_given() -> None:
    gateway = ProviderConfig("openai", "m", 8, base_url="http://gw/v1", api_key_env="", batch_size=5, timeout_s=2.5)
    assert _client_arguments(gateway, None) == {
        "base_url": "http://gw/v1",
        "timeout": 2.5,
        "max_retries": 0,
        "check_embedding_ctx_length": False,
        "chunk_size": 5,
        "api_key": NO_KEY,
    }
    shortened = ProviderConfig("openai", "text-embedding-3-small", 256, request_dimensions=True)
    assert _client_arguments(shortened, "sk")["dimensions"] == 256
    assert _client_arguments(ProviderConfig("ollama", "m", 8, timeout_s=4), None) == {"client_kwargs": {"timeout": 4}}
    assert _client_arguments(ProviderConfig("cohere", "m", 8), "k") == {}  # its client reads COHERE_API_KEY
    assert _client_arguments(ProviderConfig("cohere", "m", 8, api_key_env="MY_KEY"), "k") == {"api_key": "k"}
    options = ProviderConfig("mistralai", "m", 8, options=(("max_concurrent_requests", 2),))
    assert _client_arguments(options, None) == {"max_concurrent_requests": 2}


class Recording(Embeddings):
    """A stand-in client: vectors of ``dimension`` ones, ``short`` fewer than asked for."""

    def __init__(self, dimension: int, short: int = 0) -> None:
        self.dimension = dimension
        self.short = short
        self.calls: list[list[str]] = []

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.calls.append(list(texts))
        return [[1.0] * self.dimension for _ in texts[: len(texts) - self.short]]

    def embed_query(self, text: str) -> list[float]:
        return self.embed_documents([text])[0]


def test_batches_and_checked_vectors() -> None:
    client = Recording(4)
    embedder = ProviderEmbeddings(ProviderConfig("openai", "m", 4, batch_size=2), client)
    assert (embedder.name, embedder.dimension) == ("openai:m", 4)
    assert len(embedder.embed_documents(["a", "b", "c", "d", "e"])) == 5
    assert client.calls == [["a", "b"], ["c", "d"], ["e"]]
    with pytest.raises(ValueError, match="returned 1 vector"):
        ProviderEmbeddings(ProviderConfig("openai", "m", 4), Recording(4, short=1)).embed_documents(["a", "b"])
    with pytest.raises(ConfigurationError, match="returned vectors of dimension 3, its configured dimension is 4"):
        ProviderEmbeddings(ProviderConfig("openai", "m", 4), Recording(3)).embed_query("a")
