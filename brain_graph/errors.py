"""Typed errors of brain-graph. Every message is one line a caller can act on."""

from __future__ import annotations


class BrainGraphError(Exception):
    """Base class of every error brain-graph raises on purpose."""

    code = "BRAIN_GRAPH_ERROR"


class InvalidRequestError(BrainGraphError, ValueError):
    """A request field is missing, malformed or out of its allowed range."""

    code = "INVALID_REQUEST"

    def __init__(self, field: str, problem: str) -> None:
        self.field = field
        self.problem = problem
        super().__init__(f"invalid request: {field}: {problem}")


class AuthorizationError(BrainGraphError, PermissionError):
    """The caller may not run this search (e.g. secured mode without a principal)."""

    code = "UNAUTHORIZED"


class BackendUnavailableError(BrainGraphError, ConnectionError):
    """A storage backend is down, unreachable or timed out."""

    code = "BACKEND_UNAVAILABLE"

    def __init__(self, backend: str, detail: str) -> None:
        self.backend = backend
        self.detail = detail
        super().__init__(f"{backend} unavailable: {detail}")


class ConfigurationError(BrainGraphError):
    """The configuration (environment, profiles, stores) is inconsistent."""

    code = "CONFIGURATION_ERROR"


class DatasetError(BrainGraphError, ValueError):
    """A dataset to load is malformed; nothing was written."""

    code = "INVALID_DATASET"
