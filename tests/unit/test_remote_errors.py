"""A remote brain_search's failure becomes the same brain-graph error in the parent run."""

from __future__ import annotations

import httpx
import pytest
from langgraph.pregel.remote import RemoteException
from langgraph_sdk import errors as sdk_errors

from brain_graph.core.errors import (
    AuthenticationError,
    BackendUnavailableError,
    BrainGraphError,
    CapacityError,
    ForbiddenError,
    InvalidRequestError,
    RateLimitedError,
)
from brain_graph.serving.remote import remote_error, status_error


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("ForbiddenError", ForbiddenError),
        ("AuthenticationError", AuthenticationError),
        ("CapacityError", CapacityError),
        ("Other", BrainGraphError),
    ],
)
def test_remote_run_errors_keep_their_type_and_message(name: str, kind: type[Exception]) -> None:
    error = remote_error(RemoteException({"error": name, "message": "principal 'a' may not read tenant 'b'"}))
    assert type(error) is kind
    assert "may not read tenant 'b'" in str(error)


def test_an_invalid_request_keeps_its_field() -> None:
    error = remote_error(
        RemoteException({"error": "InvalidRequestError", "message": "invalid request: options.topK: too big"})
    )
    assert isinstance(error, InvalidRequestError)
    assert error.field == "options.topK"
    assert error.problem == "too big"


def _status(code: int, headers: dict[str, str] | None = None) -> sdk_errors.APIStatusError:
    request = httpx.Request("POST", "http://remote/runs/wait")
    response = httpx.Response(code, headers=headers, request=request, json={"detail": "no"})
    return sdk_errors.APIStatusError("refused", response=response, body={"detail": "no"})


@pytest.mark.parametrize(
    ("code", "kind"),
    [(401, AuthenticationError), (403, ForbiddenError), (429, RateLimitedError), (500, BackendUnavailableError)],
)
def test_http_refusals_map_to_typed_errors(code: int, kind: type[Exception]) -> None:
    error = status_error(_status(code, {"Retry-After": "7"}))
    assert type(error) is kind
    if isinstance(error, RateLimitedError):
        assert error.retry_after == 7
