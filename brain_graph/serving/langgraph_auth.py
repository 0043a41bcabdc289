"""The LangGraph server's custom auth (``"auth": {"path": "brain_graph.serving.langgraph_auth:auth"}`` in
``langgraph.json``): bearer tokens checked by the shared :class:`~brain_graph.auth.gate.Gate`, so a
principal is the same, and has one rate-limit budget, over the runs API, Studio and ``/graphql``.

- Authentication: a missing or invalid token is 401; a run over the rate limit is 429 with
  ``Retry-After`` and ``X-RateLimit-*`` headers; a run that cannot be counted because the shared
  rate-limit storage is unreachable is 503. The user carries the principal (``identity``, ``groups``, ``tenants``)
  and ``scopes``; the graphs read it from ``Runtime.server_info.user``.
- Authorization: threads and runs (their state, history and copies) belong to the principal that
  created them, the token's ``sub`` with its tenants and groups (``owner`` and ``owner_principal``
  metadata, filtered on every read: a token for the same ``sub`` with other tenants or groups is
  another owner); each run is charged to the principal's rate limit; assistants are readable
  by all and changed by maintainers only; the store is for maintainers; crons are refused (a cron run
  would not carry the token's tenants and scopes).
- Insecure development mode (``BRAIN_GRAPH_AUTH=insecure``): a request without a token is served as
  an unauthenticated stand-in user, and the graph takes the principal from the run context, as on a
  server without auth. The server logs a warning at start.

Importing this module builds the gate: a server whose authentication is not configured (or configured
with a bad value) does not start; it prints one line saying what to set and exits with a non-zero
status (:func:`brain_graph.serving.startup.refuse_to_start`).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from langgraph_sdk import Auth

from brain_graph.auth.credentials import MAINTAINER, PERMISSION_PREFIX, principal_key
from brain_graph.auth.gate import Gate, default_gate
from brain_graph.auth.principals import INSECURE_CLAIM, is_insecure_user, principal_from_user
from brain_graph.core.errors import (
    AuthenticationError,
    BackendUnavailableError,
    ConfigurationError,
    InvalidRequestError,
    RateLimitedError,
)
from brain_graph.serving.admission import storage_refusal
from brain_graph.serving.startup import refuse_to_start

logger = logging.getLogger("brain_graph.auth")
OWNER_KEY = "owner"  # the principal id, for people reading the metadata
PRINCIPAL_KEY = "owner_principal"  # principal_key(): the id with its tenants and groups
INSECURE_USER: dict[str, Any] = {
    "identity": "insecure-dev",
    "display_name": "insecure development mode",
    "is_authenticated": False,
    "permissions": [],
    INSECURE_CLAIM: True,
}


def _server_gate() -> Gate:
    """The process's gate; without a usable configuration the server ends, saying what to set."""
    try:
        return default_gate()
    except ConfigurationError as error:
        refuse_to_start(str(error))


_gate = _server_gate()
auth = Auth()


@auth.authenticate
async def authenticate(authorization: str | None) -> Auth.types.MinimalUserDict:
    """The user of a valid bearer token, counted against its rate limit."""
    try:
        admission = _gate.admit(authorization, charge=False)  # runs are charged one by one (create_run)
    except AuthenticationError as error:
        raise Auth.exceptions.HTTPException(
            status_code=401, detail=str(error), headers={"WWW-Authenticate": "Bearer"}
        ) from None
    if admission.credentials is None:
        return INSECURE_USER  # type: ignore[return-value]
    return admission.credentials.server_user()  # type: ignore[return-value]


def _is_insecure(ctx: Auth.types.AuthContext) -> bool:
    return is_insecure_user(ctx.user)


def _is_maintainer(ctx: Auth.types.AuthContext) -> bool:
    return f"{PERMISSION_PREFIX}{MAINTAINER}" in ctx.permissions


@auth.on.threads
async def own_threads(ctx: Auth.types.AuthContext, value: Any) -> Auth.types.FilterType | None:
    """Threads and their runs belong to their creator's whole principal (id, tenants, groups)."""
    return _owned(ctx, value)


@auth.on.threads.create_run
async def charge_runs(ctx: Auth.types.AuthContext, value: Any) -> Auth.types.FilterType | None:
    """Each run counts against its principal's rate limit (``/runs/batch`` included); runs happen on
    the principal's own threads."""
    if not _is_insecure(ctx):
        try:
            await asyncio.to_thread(_gate.charge, ctx.user.identity)  # a shared storage is a network call
        except RateLimitedError as error:
            raise Auth.exceptions.HTTPException(status_code=429, detail=str(error), headers=error.headers) from None
        except BackendUnavailableError as error:  # fail closed: a run that cannot be counted is refused
            logger.error("refused a run, its rate limit cannot be counted: %s", error)
            refusal = storage_refusal(error.backend)
            raise Auth.exceptions.HTTPException(
                status_code=refusal.status, detail=refusal.message, headers=dict(refusal.headers)
            ) from None
    return _owned(ctx, value)


@auth.on.crons
async def refuse_crons(ctx: Auth.types.AuthContext, value: Any) -> Auth.types.FilterType | None:
    """Crons are refused with bearer tokens: a cron run carries the creator's id but not the token's
    tenants and scopes, so it could not be held to them (insecure mode: allowed)."""
    if _is_insecure(ctx):
        return None
    raise Auth.exceptions.HTTPException(
        status_code=403, detail="crons are not available with bearer-token auth (a cron run loses the token's claims)"
    )


def _owned(ctx: Auth.types.AuthContext, value: Any) -> Auth.types.FilterType | None:
    if _is_insecure(ctx):
        return None
    try:
        principal = principal_from_user(ctx.user)
    except InvalidRequestError as error:
        raise Auth.exceptions.HTTPException(status_code=403, detail=str(error)) from None
    if principal.is_anonymous:  # fail closed: records always belong to a named principal
        raise Auth.exceptions.HTTPException(status_code=403, detail="threads and runs need an authenticated principal")
    owner = {OWNER_KEY: principal.principal_id, PRINCIPAL_KEY: principal_key(principal)}
    if isinstance(value, dict):  # stamp the owner in place (the server keeps a reference to this dict)
        metadata = value.get("metadata")
        if not isinstance(metadata, dict):
            metadata = value["metadata"] = {}
        metadata.update(owner)
    return owner  # and only the records of this very principal (id, tenants, groups) are read


@auth.on.assistants.read
async def read_assistants(ctx: Auth.types.AuthContext, value: Any) -> None:
    """Every caller may read the assistants (the graphs themselves check what a run may do)."""


@auth.on.assistants.search
async def search_assistants(ctx: Auth.types.AuthContext, value: Any) -> None:
    """Every caller may list the assistants."""


@auth.on.assistants
async def change_assistants(ctx: Auth.types.AuthContext, value: Any) -> bool:
    """Creating, changing or deleting assistants is for maintainers."""
    if _is_insecure(ctx) or _is_maintainer(ctx):
        return True
    raise Auth.exceptions.HTTPException(status_code=403, detail="changing assistants needs the 'maintainer' scope")


@auth.on.store
async def maintainer_store(ctx: Auth.types.AuthContext, value: Any) -> bool:
    """The key-value store is for maintainers (brain-graph's graphs do not use it)."""
    if _is_insecure(ctx) or _is_maintainer(ctx):
        return True
    raise Auth.exceptions.HTTPException(status_code=403, detail="the store needs the 'maintainer' scope")
