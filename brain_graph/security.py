"""Who may see what: principals, access scopes and the secured-mode decision."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from brain_graph.errors import AuthorizationError


@dataclass(frozen=True)
class Principal:
    """An authenticated caller: an id and the groups it belongs to (ACL entries match either)."""

    principal_id: str
    groups: tuple[str, ...] = ()

    @property
    def identities(self) -> frozenset[str]:
        """ACL entries this principal matches: ``user:<id>`` and ``group:<name>`` forms."""
        ids = {self.principal_id, f"user:{self.principal_id}"}
        ids.update(self.groups)
        ids.update(f"group:{group}" for group in self.groups)
        return frozenset(ids)


@dataclass(frozen=True)
class AccessScope:
    """The data a search may touch. Every store method takes one and enforces all of it.

    ``identities`` lists the ACL entries the caller matches; ``None`` means the caller sees no secured
    item at all. ``all_secured`` is the service-principal mode: every secured item of the tenant.
    """

    tenant_id: str
    identities: frozenset[str] | None = None
    all_secured: bool = False
    sorted_identities: tuple[str, ...] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if not self.tenant_id:
            raise AuthorizationError("an access scope needs a tenant")
        object.__setattr__(self, "sorted_identities", tuple(sorted(self.identities or ())))

    def may_see(self, tenant_id: str, secured: bool, acl: Iterable[str]) -> bool:
        """Whether a node with these attributes is visible in this scope."""
        if tenant_id != self.tenant_id:
            return False
        if not secured or self.all_secured:
            return True
        if self.identities is None:
            return False
        return not self.identities.isdisjoint(acl)


def resolve_scope(tenant_id: str, secured: bool, principal: Principal | None, service_principal: bool) -> AccessScope:
    """Decide what a request may see; fail closed when secured mode has no principal.

    - ``secured=False``: public items only, whoever asks.
    - ``secured=True`` with a principal: public items plus secured items whose ACL names the principal.
    - ``secured=True`` without a principal: :class:`AuthorizationError`, unless the deployment runs in
      service-principal mode, which sees every item of the tenant.
    """
    if not secured:
        return AccessScope(tenant_id=tenant_id)
    if principal is not None:
        return AccessScope(tenant_id=tenant_id, identities=principal.identities)
    if service_principal:
        return AccessScope(tenant_id=tenant_id, all_secured=True)
    raise AuthorizationError(
        "filter.secured is true but the request has no principal; pass a principal in the runtime "
        "context, set filter.secured=false for public items only, or enable service-principal mode"
    )
