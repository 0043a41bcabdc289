"""Embedders of a provider, through LangChain's own integrations (``langchain.embeddings.init_embeddings``).

A provider embedder is named ``PROVIDER:MODEL`` (``openai:text-embedding-3-small``, ``ollama:nomic-embed-text``);
that name and the declared dimension are its identity, recorded in the index (a base URL or a key is not:
moving a gateway re-indexes nothing). :class:`ProviderEmbeddings` sends texts in batches of
``batch_size``, each request bounded by ``timeout_s`` and retried with exponential backoff by tenacity
(the client's own retries are switched off where it has them, so one policy applies to every
provider): rate limits (429), timeouts, connection failures and server errors are retried, at most
``max_retries`` times, honouring a ``Retry-After`` of at most :data:`MAX_WAIT_S`. After a request that
failed every retry, the next request is tried once (the provider is taken as down) until one succeeds.
A vector of another length than the declared dimension is a :class:`ConfigurationError`. The API key is
read from the environment variable ``api_key_env`` when the embedder is built: a missing one is a
one-line error naming the variable.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import partial
from typing import Any, Final

from langchain_core.embeddings import Embeddings
from tenacity import RetryCallState, Retrying, retry_if_exception, stop_after_attempt, wait_exponential

from brain_graph.core.errors import ConfigurationError
from brain_graph.stores.readiness import Check

MAX_WAIT_S: Final = 30.0  # the longest wait between two tries (backoff or Retry-After)
TRANSIENT_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504})
# Exception classes (by name, anywhere in the class's hierarchy) that say a request may succeed later,
# whatever the provider's client library: openai's and httpx's connection, timeout and rate-limit errors.
TRANSIENT_NAMES = frozenset(
    {
        "APIConnectionError",
        "APITimeoutError",
        "RateLimitError",
        "InternalServerError",
        "ServiceUnavailableError",
        "TransportError",
        "TimeoutException",
        "ConnectError",
        "ReadTimeout",
        "ConnectTimeout",
    }
)
# The LangChain provider names ``init_embeddings`` knows, with the package that brings each and the
# environment variable of its API key (None: the provider needs none, or its client finds its own).
PROVIDERS: Final[dict[str, tuple[str, str | None]]] = {
    "openai": ("langchain-openai", "OPENAI_API_KEY"),
    "azure_openai": ("langchain-openai", "AZURE_OPENAI_API_KEY"),
    "ollama": ("langchain-ollama", None),
    "cohere": ("langchain-cohere", "COHERE_API_KEY"),
    "mistralai": ("langchain-mistralai", "MISTRAL_API_KEY"),
    "google_genai": ("langchain-google-genai", "GOOGLE_API_KEY"),
    "google_vertexai": ("langchain-google-vertexai", None),
    "bedrock": ("langchain-aws", None),
    "huggingface": ("langchain-huggingface", None),
    "azure_ai": ("langchain-azure-ai", None),
}
# The dimension of the models whose size is known without asking the provider.
KNOWN_DIMENSIONS: Final[dict[str, int]] = {
    "openai:text-embedding-3-small": 1536,
    "openai:text-embedding-3-large": 3072,
    "openai:text-embedding-ada-002": 1536,
}
EXTRAS: Final[dict[str, str]] = {"langchain-openai": "openai", "langchain-ollama": "ollama"}
PING_TEXT: Final = "ready"  # what a readiness check embeds: one word, the cheapest request a provider takes
NO_KEY = "unused"  # what an OpenAI-compatible client is given when the endpoint takes no key


@dataclass(frozen=True)
class ProviderConfig:
    """A provider embedder's settings: ``provider:model``, its vectors' ``dimension`` and how it is
    called. ``api_key_env`` "" means no key; ``options`` are passed to the integration's class as they are."""

    provider: str
    model: str
    dimension: int
    base_url: str | None = None
    api_key_env: str | None = None
    batch_size: int = 64
    timeout_s: float = 30.0
    max_retries: int = 3
    retry_wait_s: float = 1.0
    request_dimensions: bool = False
    options: tuple[tuple[str, Any], ...] = ()

    @property
    def name(self) -> str:
        """``provider:model``: the identity the index records (with the dimension)."""
        return f"{self.provider}:{self.model}"

    @property
    def key_variable(self) -> str | None:
        """The environment variable the API key is read from (None: no key)."""
        if self.api_key_env is not None:
            return self.api_key_env or None
        return PROVIDERS[self.provider][1]


def parse_provider(value: str) -> tuple[str, str]:
    """``(provider, model)`` of ``PROVIDER:MODEL``; a :class:`ValueError` unless PROVIDER is one of
    :data:`PROVIDERS` and MODEL is not blank."""
    provider, _, model = value.strip().partition(":")
    provider = provider.strip().lower()
    if provider not in PROVIDERS or not model.strip():
        raise ValueError(f"a provider embedder is PROVIDER:MODEL with PROVIDER one of {', '.join(PROVIDERS)}")
    return provider, model.strip()


def _is_transient(error: BaseException) -> bool:
    """Whether a request that raised ``error`` may succeed when sent again."""
    if isinstance(error, ConnectionError | TimeoutError):
        return True
    status = getattr(error, "status_code", None)
    if isinstance(status, int):
        return status in TRANSIENT_STATUS
    return any(cls.__name__ in TRANSIENT_NAMES for cls in type(error).__mro__)


def _retry_after(error: BaseException | None) -> float | None:
    """The seconds a ``Retry-After`` header of the error's response asks for, if any."""
    response = getattr(error, "response", None)
    headers = getattr(response, "headers", None)
    value = headers.get("retry-after") if headers is not None else None
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


class _Backoff:
    """Exponential backoff from ``first`` seconds, or the ``Retry-After`` asked, at most :data:`MAX_WAIT_S`."""

    def __init__(self, first: float) -> None:
        self._exponential = wait_exponential(multiplier=first, max=MAX_WAIT_S)

    def __call__(self, state: RetryCallState) -> float:
        asked = _retry_after(state.outcome.exception() if state.outcome is not None else None)
        waited = self._exponential(state)
        return min(MAX_WAIT_S, max(waited, asked)) if asked is not None else waited


def _client_arguments(config: ProviderConfig, key: str | None) -> dict[str, Any]:
    """The keyword arguments of the integration's class: for OpenAI (and Azure OpenAI) the timeout, the
    client's own retries off, the batch size, the base URL and the key; for Ollama the timeout and the
    base URL; for the others the base URL, and the key when ``api_key_env`` names its variable (else
    their client reads its own). ``options`` come first, so these win."""
    arguments: dict[str, Any] = dict(config.options)
    if config.base_url:
        arguments["base_url"] = config.base_url
    if config.provider in ("openai", "azure_openai"):
        arguments.update(timeout=config.timeout_s, max_retries=0, check_embedding_ctx_length=False)
        arguments["chunk_size"] = config.batch_size
        if config.request_dimensions:
            arguments["dimensions"] = config.dimension
        arguments["api_key"] = key if key is not None else NO_KEY
    elif config.provider == "ollama":
        arguments["client_kwargs"] = {**arguments.get("client_kwargs", {}), "timeout": config.timeout_s}
    elif key is not None and config.api_key_env:
        arguments["api_key"] = key
    return arguments


def _init_embeddings(config: ProviderConfig, arguments: dict[str, Any]) -> Embeddings:
    """LangChain's integration for the config; a missing package is one line naming what to install."""
    package = PROVIDERS[config.provider][0]
    extra = EXTRAS.get(package)
    install = f"pip install 'brain-graph[{extra}]'" if extra else f"pip install langchain {package}"
    if importlib.util.find_spec("langchain") is None:
        raise ConfigurationError(f"embedder {config.name}: LangChain is not installed: {install}")
    from langchain.embeddings import init_embeddings

    try:
        return init_embeddings(config.model, provider=config.provider, **arguments)
    except ImportError:
        raise ConfigurationError(f"embedder {config.name}: {package} is not installed: {install}") from None
    except (ValueError, TypeError) as error:
        problem = " ".join(str(error).split())[:300]
        raise ConfigurationError(
            f"embedder {config.name}: the {package} client refused its settings: {problem}"
        ) from None


class ProviderEmbeddings(Embeddings):
    """A provider's embedding model behind brain-graph's rules (see the module docstring): ``name`` and
    ``dimension`` as configured, batches, bounded requests, retries with backoff, checked vectors."""

    def __init__(self, config: ProviderConfig, client: Embeddings | None = None) -> None:
        key = None
        variable = config.key_variable
        if client is None and variable is not None:
            key = os.environ.get(variable, "").strip()
            if not key:
                raise ConfigurationError(
                    f"embedder {config.name}: its API key is read from the environment variable {variable}, "
                    "which is not set: set it (or apiKeyEnv of the embedder in the profiles file)"
                )
        self.config = config
        self.name = config.name
        self.dimension = config.dimension
        self.client = client if client is not None else _init_embeddings(config, _client_arguments(config, key))
        self._down = False  # the last request failed every retry: the next is tried once

    def _retrying(self) -> Retrying:
        attempts = 1 if self._down else self.config.max_retries + 1
        return Retrying(
            stop=stop_after_attempt(attempts),
            wait=_Backoff(self.config.retry_wait_s),
            retry=retry_if_exception(_is_transient),
            reraise=True,
        )

    def _request(self, call: Callable[[], list[list[float]]], count: int) -> list[list[float]]:
        try:
            vectors = self._retrying()(call)
        except Exception as error:
            self._down = _is_transient(error)
            raise
        self._down = False
        return self._checked(vectors, count)

    def _checked(self, vectors: list[list[float]], count: int) -> list[list[float]]:
        if len(vectors) != count:
            raise ValueError(f"embedder {self.name} returned {len(vectors)} vector(s) for {count} text(s)")
        for vector in vectors:
            if len(vector) != self.dimension:
                raise ConfigurationError(
                    f"embedder {self.name} returned vectors of dimension {len(vector)}, its configured dimension "
                    f"is {self.dimension}: set dimension = {len(vector)} for it in the profiles file (or ask the "
                    "model for the configured one), then re-index: brain-graph index --full"
                )
        return vectors

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Vectors of many texts, :attr:`ProviderConfig.batch_size` per request."""
        vectors: list[list[float]] = []
        size = self.config.batch_size
        for start in range(0, len(texts), size):
            batch = texts[start : start + size]
            vectors.extend(self._request(partial(self.client.embed_documents, batch), len(batch)))
        return vectors

    def embed_query(self, text: str) -> list[float]:
        """The vector of a query."""
        return self._request(lambda: [self.client.embed_query(text)], 1)[0]

    def ping(self) -> None:
        """One embedding request of :data:`PING_TEXT`, tried once whatever ``max_retries`` and bounded by
        the client's timeout (readiness, :func:`embedder_checks`): returns when the provider answers it
        with a vector of the configured dimension, else raises."""
        self._checked([self.client.embed_query(PING_TEXT)], 1)

    def count_truncated(self, texts: list[str]) -> int:
        """How many texts the provider cuts: unknown here, counted as none (profiles cut to ``maxChars``)."""
        return 0


def embedder_checks(embedders: Iterable[Embeddings]) -> dict[str, Check]:
    """A readiness check per provider embedder among ``embedders`` (:meth:`ProviderEmbeddings.ping`),
    named ``embedder <provider:model>`` as a search's failure names it; in-process embedders have
    nothing to check."""
    return {f"embedder {e.name}": e.ping for e in embedders if isinstance(e, ProviderEmbeddings)}
