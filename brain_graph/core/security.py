"""Who may see what: principals, typed ACL entries, access scopes and the secured-mode decision.

ACL entries are typed: ``user:<principal id>`` or ``group:<group name>``. A principal matches an entry
only within its kind: its id against ``user:`` entries, its groups against ``group:`` entries. Names
(principal ids and group names) are refused when they are empty, longer than
:data:`MAX_NAME_CHARS`, start or end with white space, hold control, format or line-separator
characters (:func:`text_problem`), or start with a kind prefix (``user:``/``group:``, any case), so no
name can be read as another kind and none prints like another.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from typing import Any, Literal

from brain_graph.core.errors import AuthorizationError, ForbiddenError, InvalidRequestError

AclKind = Literal["user", "group"]
ACL_KINDS: tuple[AclKind, ...] = ("user", "group")
MAX_NAME_CHARS = 256
MAX_GROUPS = 1000
# Control (Cc), format (Cf: zero-width characters, BOM, soft hyphen, bidi controls), surrogate (Cs)
# and line or paragraph separator (Zl, Zp) characters.
_FORBIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})


def text_problem(value: str) -> str | None:
    """Why a string cannot be used as an identifier or a name: it holds a control, format (invisible:
    zero-width, BOM, soft hyphen, bidi control), surrogate or line-separator character, so it would
    print like another string or reorder the text around it. The one rule for ids, tenant ids, project
    keys, principal ids, group names and ACL entries, for searching and loading alike."""
    if value.isprintable():  # no "Other" or separator character but the space: none of the forbidden ones
        return None
    for char in value:
        if unicodedata.category(char) in _FORBIDDEN_CATEGORIES:
            return f"must not contain control, format or line-separator characters (found U+{ord(char):04X})"
    return None


def name_problem(name: object) -> str | None:
    """Why ``name`` cannot be a principal id or group name, or ``None`` when it can."""
    if not isinstance(name, str):
        return f"must be a string (got {type(name).__name__})"
    if not name:
        return "must not be empty"
    if len(name) > MAX_NAME_CHARS:
        return f"must be at most {MAX_NAME_CHARS} characters (got {len(name)})"
    if name != name.strip():
        return "must not start or end with white space"
    if name.lower().startswith(tuple(f"{kind}:" for kind in ACL_KINDS)):
        return "must not start with 'user:' or 'group:' (the ACL kinds)"
    return text_problem(name)


def acl_entry(kind: AclKind, name: str) -> str:
    """The ACL entry naming a user or a group."""
    return f"{kind}:{name}"


def parse_acl_entry(entry: object) -> tuple[AclKind, str]:
    """``(kind, name)`` of an ACL entry; raises :class:`ValueError` saying why an entry is invalid."""
    if isinstance(entry, str):
        for kind in ACL_KINDS:
            prefix = f"{kind}:"
            if entry.startswith(prefix):
                problem = name_problem(entry[len(prefix) :])
                if problem is not None:
                    raise ValueError(f"ACL entry {entry[:80]!r}: the {kind} name {problem}")
                return kind, entry[len(prefix) :]
    raise ValueError(f"ACL entry {str(entry)[:80]!r} is neither 'user:<id>' nor 'group:<name>'")


def _tenant_set(tenants: Any) -> frozenset[str]:
    """A principal's tenant list, validated like every identifier."""
    if isinstance(tenants, str) or not isinstance(tenants, Iterable):
        raise InvalidRequestError(
            "context.principal.tenants", f"must be a list of tenant ids (got {type(tenants).__name__})"
        )
    values = list(tenants)
    if len(values) > MAX_GROUPS:
        raise InvalidRequestError("context.principal.tenants", f"must hold at most {MAX_GROUPS} tenants")
    for index, tenant in enumerate(values):
        if not isinstance(tenant, str) or not tenant or len(tenant) > MAX_NAME_CHARS:
            raise InvalidRequestError(
                f"context.principal.tenants[{index}]", f"must be a tenant id of 1 to {MAX_NAME_CHARS} characters"
            )
        problem = text_problem(tenant)
        if problem is not None:
            raise InvalidRequestError(f"context.principal.tenants[{index}]", problem)
    return frozenset(values)


@dataclass(frozen=True)
class Principal:
    """An authenticated caller: an id, the groups it belongs to and the tenants it may read.

    Constructing one validates it (:class:`~brain_graph.core.errors.InvalidRequestError` naming the field);
    ``groups`` must be a list or tuple of group names and is stored sorted and deduplicated. An empty
    id is no principal at all: a secured search with it fails closed. ``tenants`` lists the tenants a
    search may name (a bearer token always carries them; any other tenant is a
    :class:`~brain_graph.core.errors.ForbiddenError`); ``None`` (the default, for a caller in the same
    process) leaves the tenant to the request.
    """

    principal_id: str
    groups: tuple[str, ...] = ()
    tenants: Sequence[str] | AbstractSet[str] | None = None  # stored as a frozenset

    def __post_init__(self) -> None:
        if not isinstance(self.principal_id, str):
            raise InvalidRequestError(
                "context.principal.principalId", f"must be a string (got {type(self.principal_id).__name__})"
            )
        if self.principal_id:
            problem = name_problem(self.principal_id)
            if problem is not None:
                raise InvalidRequestError("context.principal.principalId", problem)
        groups: Any = self.groups
        if not isinstance(groups, tuple | list):
            raise InvalidRequestError(
                "context.principal.groups", f"must be a list of group names (got {type(groups).__name__})"
            )
        if len(groups) > MAX_GROUPS:
            raise InvalidRequestError("context.principal.groups", f"must hold at most {MAX_GROUPS} groups")
        for index, group in enumerate(groups):
            problem = name_problem(group)
            if problem is not None:
                raise InvalidRequestError(f"context.principal.groups[{index}]", problem)
        object.__setattr__(self, "groups", tuple(sorted(set(groups))))
        if self.tenants is not None:
            object.__setattr__(self, "tenants", _tenant_set(self.tenants))

    def may_read_tenant(self, tenant_id: str) -> bool:
        """Whether a search may name ``tenant_id`` (always, without a tenant list)."""
        return self.tenants is None or tenant_id in self.tenants

    def to_wire(self) -> dict[str, Any]:
        """The JSON form a run context carries: ``{principalId, groups[, tenants]}``."""
        wire: dict[str, Any] = {"principalId": self.principal_id, "groups": list(self.groups)}
        if self.tenants is not None:
            wire["tenants"] = sorted(self.tenants)
        return wire

    @property
    def is_anonymous(self) -> bool:
        """Whether this principal names nobody (an empty id)."""
        return not self.principal_id

    @property
    def identities(self) -> frozenset[str]:
        """The typed ACL entries this principal matches: ``user:<id>`` and ``group:<name>`` for each group."""
        if self.is_anonymous:
            return frozenset()
        return frozenset({acl_entry("user", self.principal_id), *(acl_entry("group", g) for g in self.groups)})


ANONYMOUS = Principal("")


@dataclass(frozen=True)
class AccessScope:
    """The data a search may touch. Every store method takes one and enforces all of it.

    ``identities`` lists the typed ACL entries the caller matches (see :attr:`Principal.identities`);
    ``None`` means the caller sees no secured item at all. ``all_secured`` is the service-principal
    mode: every secured item of the tenant.
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
        if not self.identities:
            return False
        return not self.identities.isdisjoint(acl)


def resolve_scope(tenant_id: str, secured: bool, principal: Principal | None, service_principal: bool) -> AccessScope:
    """Decide what a request may see; fail closed when secured mode has no principal.

    - ``secured=False``: public items only, whoever asks.
    - ``secured=True`` with a principal: public items plus secured items whose ACL names the principal
      (``user:<id>``) or one of its groups (``group:<name>``).
    - ``secured=True`` without a principal: :class:`AuthorizationError`, unless the deployment runs in
      service-principal mode, which sees every item of the tenant.
    - ``secured=True`` with the anonymous principal (an empty id, an unauthenticated server user):
      :class:`AuthorizationError`, service-principal mode or not.
    - A principal with a tenant list naming another tenant: :class:`ForbiddenError`, secured or not
      (a refusal, never an empty result).
    """
    if principal is not None and not principal.may_read_tenant(tenant_id):
        raise ForbiddenError(
            f"principal {principal.principal_id!r} may not read tenant {tenant_id!r}; its credentials allow "
            f"{', '.join(repr(t) for t in sorted(principal.tenants or ())[:10]) or 'no tenant'}"
        )
    if not secured:
        return AccessScope(tenant_id=tenant_id)
    if principal is not None and not principal.is_anonymous:
        return AccessScope(tenant_id=tenant_id, identities=principal.identities)
    if principal is None and service_principal:
        return AccessScope(tenant_id=tenant_id, all_secured=True)
    raise AuthorizationError(
        "filter.secured is true but the request has no principal; pass a principal in the runtime "
        "context, set filter.secured=false for public items only, or enable service-principal mode"
    )
