"""What a verified bearer token says: a principal and what it may do."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any, Literal

from brain_graph.auth.principals import SCOPES_CLAIM, missing_scope
from brain_graph.core.security import Principal

Scope = Literal["reader", "maintainer"]
READER: Scope = "reader"
MAINTAINER: Scope = "maintainer"
SCOPES: tuple[Scope, ...] = (READER, MAINTAINER)
PERMISSION_PREFIX = "brain:"  # a scope as a LangGraph server permission: brain:reader, brain:maintainer


def implied_scopes(scopes: frozenset[str]) -> frozenset[str]:
    """``maintainer`` may do all a ``reader`` may."""
    return scopes | {READER} if MAINTAINER in scopes else scopes


def principal_key(principal: Principal) -> str:
    """A stable digest of the whole principal (id, groups and tenants, sorted): what owns threads and
    runs, so that a token for the same id with other tenants or groups is another owner."""
    canonical = json.dumps(principal.to_wire(), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Credentials:
    """A caller the gate let in: its principal (identity, groups, the tenants it may read), its scopes,
    and when its token expires (seconds since the epoch, ``None`` if never)."""

    principal: Principal
    scopes: frozenset[str]
    expires_at: int | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "scopes", implied_scopes(frozenset(self.scopes)))

    def require(self, scope: Scope, action: str) -> None:
        """Raise :class:`ForbiddenError` unless these credentials carry ``scope``."""
        if scope not in self.scopes:
            raise missing_scope(scope, action, self.scopes)

    def server_user(self) -> dict[str, Any]:
        """The LangGraph server user (custom auth) of these credentials: ``identity``, ``groups``,
        ``tenants``, ``scopes`` and ``permissions`` (``brain:<scope>``)."""
        principal = self.principal
        return {
            "identity": principal.principal_id,
            "display_name": principal.principal_id,
            "is_authenticated": True,
            "groups": list(principal.groups),
            "tenants": sorted(principal.tenants) if principal.tenants is not None else None,
            SCOPES_CLAIM: sorted(self.scopes),
            "permissions": [f"{PERMISSION_PREFIX}{scope}" for scope in sorted(self.scopes)],
        }
