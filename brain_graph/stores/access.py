"""One access rule, translated for each backend, side by side.

The rule is :meth:`brain_graph.core.security.AccessScope.may_see`: a node is visible when it belongs to the
scope's tenant and is public, or the scope is in service-principal mode (``all_secured``), or its ACL
names one of the scope's identities (none when the caller has no principal). Each translator below
states exactly that in one query language; ``tests/conformance/test_access_rule.py`` runs one table of
cases through the rule and through every translator.

- SQL (embedded SQLite): :func:`sql_visible` with :func:`sql_params`; ``acl`` is a JSON array column.
- Cypher (Neo4j): :func:`cypher_visible` with :func:`cypher_params`; ``acl`` is a list property.
- Weaviate: the tenant is the Weaviate tenant a query names (one per brain-graph tenant and
  generation), the rest is :func:`weaviate_visible` (a gRPC filter); candidates are re-checked with ``may_see``.
- numpy (the embedded store's in-memory vector matrices): :func:`numpy_visible`, a boolean mask over
  the cached ``secured`` column and an index of the rows naming each ACL entry.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, LiteralString

import numpy as np
import numpy.typing as npt

from brain_graph.core.security import AccessScope
from brain_graph.stores.codec import canonical_json

# -- SQL ---------------------------------------------------------------------------------------


def sql_visible(alias: LiteralString) -> LiteralString:
    """The predicate for table alias ``alias`` (columns ``tenant_id``, ``secured``, ``acl``), with the
    named parameters of :func:`sql_params`."""
    return (
        f"({alias}.tenant_id = :scope_tenant AND (NOT {alias}.secured OR :scope_all_secured"
        f" OR EXISTS (SELECT 1 FROM json_each({alias}.acl)"
        " WHERE value IN (SELECT value FROM json_each(:scope_identities)))))"
    )


def sql_params(scope: AccessScope) -> dict[str, Any]:
    """The parameters of :func:`sql_visible`."""
    return {
        "scope_tenant": scope.tenant_id,
        "scope_all_secured": int(scope.all_secured),
        "scope_identities": canonical_json(list(scope.sorted_identities)),
    }


# -- Cypher ------------------------------------------------------------------------------------


def cypher_visible(var: LiteralString) -> LiteralString:
    """The predicate for node (or map) variable ``var`` (properties ``tenantId``, ``secured``, ``acl``),
    with the parameters of :func:`cypher_params`."""
    return (
        f"({var}.tenantId = $tenantId AND (NOT {var}.secured OR $allSecured"
        f" OR any(entry IN {var}.acl WHERE entry IN $identities)))"
    )


def cypher_params(scope: AccessScope) -> dict[str, Any]:
    """The parameters of :func:`cypher_visible`."""
    return {
        "tenantId": scope.tenant_id,
        "allSecured": scope.all_secured,
        "identities": list(scope.sorted_identities),
    }


# -- Weaviate ----------------------------------------------------------------------------------


def weaviate_visible(scope: AccessScope) -> Any:
    """The gRPC filter (``weaviate.proto.v1.base_pb2.Filters`` on properties ``secured``, ``acl``)
    within the scope's Weaviate tenant, or None when everything there is visible (service-principal
    mode)."""
    from weaviate.proto.v1 import base_pb2

    if scope.all_secured:
        return None
    public = base_pb2.Filters(
        operator=base_pb2.Filters.OPERATOR_EQUAL,
        target=base_pb2.FilterTarget(property="secured"),
        value_boolean=False,
    )
    identities = list(scope.sorted_identities)
    if not identities:
        return public
    named = base_pb2.Filters(
        operator=base_pb2.Filters.OPERATOR_CONTAINS_ANY,
        target=base_pb2.FilterTarget(property="acl"),
        value_text_array=base_pb2.TextArray(values=identities),
    )
    return base_pb2.Filters(operator=base_pb2.Filters.OPERATOR_OR, filters=[public, named])


# -- numpy -------------------------------------------------------------------------------------


def numpy_visible(
    scope: AccessScope,
    tenant_id: str,
    secured: npt.NDArray[np.bool_],
    acl_index: Mapping[str, npt.NDArray[np.intp]],
) -> npt.NDArray[np.bool_]:
    """Which rows of tenant ``tenant_id`` are visible in ``scope``: ``secured`` holds each row's flag,
    ``acl_index`` maps each ACL entry to the rows whose ACL names it (a new array, one bool per row)."""
    if tenant_id != scope.tenant_id:
        return np.zeros(len(secured), dtype=np.bool_)
    if scope.all_secured:
        return np.ones(len(secured), dtype=np.bool_)
    visible = ~secured
    for identity in scope.sorted_identities:  # none without a principal (identities None or empty)
        rows = acl_index.get(identity)
        if rows is not None:
            visible[rows] = True
    return visible


def access_columns(rows: Sequence[Any]) -> tuple[npt.NDArray[np.bool_], dict[str, npt.NDArray[np.intp]]]:
    """The columns :func:`numpy_visible` reads, from rows holding ``secured`` and ``acl`` (a JSON list),
    in their order: each row's secured flag, and each ACL entry's rows (those of secured rows)."""
    secured = np.zeros(len(rows), dtype=np.bool_)
    acl_lists: dict[str, list[int]] = {}
    for index, row in enumerate(rows):
        if row["secured"]:
            secured[index] = True
            for entry in json.loads(row["acl"]):
                acl_lists.setdefault(entry, []).append(index)
    return secured, {entry: np.asarray(found, dtype=np.intp) for entry, found in acl_lists.items()}
