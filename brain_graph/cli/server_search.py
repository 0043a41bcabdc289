"""``brain-graph search --server URL``: the search run by a LangGraph server that already holds the
embedding model, so a command pays no model load (the server pays it once, at its first search).

The request is the one the local search would run; the principal goes to the server as
:func:`brain_graph.serving.remote.remote_brain_search` sends it: a 60-s token minted with
``BRAIN_GRAPH_AUTH_SECRET`` when this machine has the server's key, else in the run context only (a
server in insecure development mode honours it; one that authenticates refuses the call).
"""

from __future__ import annotations

from typing import Any

import httpx
from langgraph.runtime import Runtime

from brain_graph.auth.settings import load_auth_settings
from brain_graph.core.errors import BackendUnavailableError
from brain_graph.core.security import Principal
from brain_graph.pipeline.state import BrainSearchInput
from brain_graph.serving.remote import delegated_token, remote_brain_search


def search_on_server(url: str, request: BrainSearchInput, principal: Principal | None) -> dict[str, Any]:
    """The output of ``brain_search`` on the server at ``url`` for ``request`` as ``principal``
    (a failure is the brain-graph error the server reported, the refusal of its HTTP status, or
    :class:`BackendUnavailableError` when it cannot be reached)."""
    credentials = delegated_token if load_auth_settings().secret is not None else None
    search = remote_brain_search(url, credentials=credentials)
    try:
        return search(dict(request), Runtime(context={"principal": principal}))
    except httpx.TransportError as error:  # the SDK lets a refused connection through as httpx's own error
        raise BackendUnavailableError("brain_search server", f"{url}: {type(error).__name__}") from None
