"""brain_search on a LangGraph server as a node of another graph, run as the parent run's principal.

:func:`remote_brain_search` wraps :class:`langgraph.pregel.remote.RemoteGraph`: it reads the
``queryText``, ``filter`` and ``options`` of the parent's state, sends the parent's principal to the
server as a bearer token (from ``credentials``: by default a token valid for 60 s minted with this
deployment's ``BRAIN_GRAPH_AUTH_SECRET``, which the server verifies) and in the run context (for a
server in insecure development mode), and returns the result keys to the parent's state. A failed
remote run raises the same brain-graph error here (type and message), an HTTP refusal the matching
one (401 :class:`AuthenticationError`, 403 :class:`ForbiddenError`, 429 :class:`RateLimitedError`),
a server that cannot be reached :class:`BackendUnavailableError`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from langgraph.pregel.remote import RemoteException, RemoteGraph
from langgraph.runtime import Runtime
from langgraph_sdk import errors as sdk_errors

from brain_graph.auth.principals import as_principal, is_insecure_user, principal_from_user
from brain_graph.auth.settings import load_auth_settings
from brain_graph.core.errors import (
    AuthenticationError,
    AuthorizationError,
    BackendUnavailableError,
    BrainGraphError,
    CapacityError,
    ConfigurationError,
    ForbiddenError,
    InvalidRequestError,
    RateLimitedError,
)
from brain_graph.core.security import Principal
from brain_graph.graphs.search import GRAPH_NAME
from brain_graph.pipeline.state import BrainSearchOutput

RESULT_KEYS = tuple(BrainSearchOutput.__annotations__)  # the output schema's keys, in its order
DELEGATED_TOKEN_TTL_S = 60

CredentialSource = Callable[[Principal, str], str]
"""``(principal, tenant) -> bearer token`` for a search of ``tenant`` as ``principal``."""


def delegated_token(principal: Principal, tenant_id: str) -> str:
    """A reader token for ``principal``, valid 60 s, minted with ``BRAIN_GRAPH_AUTH_SECRET``; it names
    the principal's tenants, or the searched tenant for a principal without a tenant list (a caller
    in this process, trusted with any tenant)."""
    tenants = principal.tenants if principal.tenants is not None else frozenset({tenant_id})
    scoped = Principal(principal.principal_id, principal.groups, tenants)
    return load_auth_settings().issuer_for_minting().for_principal(scoped, ttl_s=DELEGATED_TOKEN_TTL_S)


def parent_principal(runtime: Runtime[Any]) -> Principal | None:
    """The principal a token may be minted for: the parent run's own context principal when the parent
    runs in this process (the application set it), or the authenticated user of the parent's server
    when that user carries a tenant list. A context principal sent to a parent on a server is request
    data, never delegated (it would make this node a token oracle)."""
    if runtime.server_info is None:
        context = runtime.context
        value = context.get("principal") if isinstance(context, Mapping) else getattr(context, "principal", None)
        return as_principal(value)
    user = runtime.server_info.user
    if user is None or is_insecure_user(user):
        return None
    principal = principal_from_user(user)
    return principal if principal.tenants is not None else None


def remote_brain_search(
    url: str,
    *,
    assistant_id: str = GRAPH_NAME,
    credentials: CredentialSource | None = delegated_token,
    api_key: str | None = None,
) -> Callable[[Mapping[str, Any], Runtime[Any]], dict[str, Any]]:
    """A node running brain_search on the server at ``url`` as the parent run's principal.

    ``credentials=None`` sends no token (a server without authentication, or in insecure mode).
    Without a principal in the parent run, no token is sent: secured searches fail closed there.
    """
    remote = RemoteGraph(assistant_id, url=url, api_key=api_key)

    def brain_search(state: Mapping[str, Any], runtime: Runtime[Any]) -> dict[str, Any]:
        request = {key: state[key] for key in ("queryText", "filter", "options") if state.get(key) is not None}
        principal = parent_principal(runtime)
        headers: dict[str, str] = {}
        context: dict[str, Any] = {}
        if principal is not None and not principal.is_anonymous:
            context["principal"] = principal.to_wire()
            if credentials is not None:
                tenant = (request.get("filter") or {}).get("tenantId")
                headers["Authorization"] = f"Bearer {credentials(principal, str(tenant or ''))}"
        try:
            output = remote.invoke(request, context=context or None, headers=headers or None)
        except RemoteException as error:
            raise remote_error(error) from None
        except sdk_errors.APIConnectionError as error:
            raise BackendUnavailableError("brain_search server", f"{url}: {type(error).__name__}") from None
        except sdk_errors.APIStatusError as error:
            raise status_error(error) from None
        return {key: output[key] for key in RESULT_KEYS if key in output}

    return brain_search


REMOTE_ERRORS: dict[str, Callable[[str], BrainGraphError]] = {
    "AuthenticationError": AuthenticationError,
    "ForbiddenError": ForbiddenError,
    "AuthorizationError": AuthorizationError,
    "ConfigurationError": ConfigurationError,
    "CapacityError": CapacityError,
}


def remote_error(error: RemoteException) -> BrainGraphError:
    """A remote run's ``{error, message}`` as the same brain-graph error here (its type and one-line
    message kept), so a parent's caller sees why the search failed."""
    payload = error.args[0] if error.args else None
    name = payload.get("error") if isinstance(payload, Mapping) else None
    message = str(payload.get("message", "")) if isinstance(payload, Mapping) else str(error)
    if name == "InvalidRequestError":
        field, _, problem = message.removeprefix("invalid request: ").partition(": ")
        return InvalidRequestError(field or "request", problem or message)
    if name == "BackendUnavailableError":
        return BackendUnavailableError("brain_search server", message)
    factory = REMOTE_ERRORS.get(str(name))
    if factory is None:
        return BrainGraphError(f"remote brain_search failed: {name}: {message}")
    return factory(message)


def status_error(error: sdk_errors.APIStatusError) -> BrainGraphError:
    """An HTTP refusal of the brain_search server as a brain-graph error."""
    status = error.status_code
    if status == 401:
        return AuthenticationError(f"the brain_search server refused the credentials (HTTP 401): {error.message}")
    if status == 403:
        return ForbiddenError(f"the brain_search server refused the request (HTTP 403): {error.message}")
    if status == 429:
        retry_after = error.response.headers.get("Retry-After", "1")
        return RateLimitedError(
            f"the brain_search server's rate limit was reached: {error.message}",
            retry_after=int(retry_after) if retry_after.isdigit() else 1,
        )
    return BackendUnavailableError("brain_search server", f"HTTP {status}: {error.message}")
