"""Requests shared by the platform tests, and the in-process reference result."""

from __future__ import annotations

import json
from typing import Any, cast

from brain_graph.auth.principals import as_principal
from brain_graph.core.contracts import BrainSearchResult
from brain_graph.graphs.search import BrainSearchGraph
from brain_graph.pipeline.state import BrainSearchContext, BrainSearchInput

ALICE: dict[str, Any] = {"principalId": "alice", "groups": ["security"]}
SECURED_POSTMORTEM = "acme:doc:postmortem-oauth-token-refresh-outage"
# A secured search (the default) and the start of the message it fails closed with, without a principal.
SECURED_WITHOUT_PRINCIPAL: dict[str, Any] = {"queryText": "token refresh postmortem", "filter": {"tenantId": "acme"}}
NO_PRINCIPAL = "filter.secured is true but the request has no principal; pass a principal in the runtime context"

# name -> (graph input, context principal or None)
SEARCHES: dict[str, tuple[dict[str, Any], dict[str, Any] | None]] = {
    "public": ({"queryText": "token refresh outage", "filter": {"tenantId": "acme", "secured": False}}, None),
    "project-and-options": (
        {
            "queryText": "duplicate card charges idempotency",
            "filter": {"tenantId": "acme", "projectKey": "PAY", "secured": False},
            "options": {"topK": 5, "expandDepth": 2, "maxEpisodes": 3},
        },
        None,
    ),
    "secured-with-principal": (
        {"queryText": "token refresh postmortem", "filter": {"tenantId": "acme", "secured": True}},
        ALICE,
    ),
    "other-tenant-code": (
        {
            "queryText": "token refresh",
            "filter": {"tenantId": "globex", "secured": False, "profileKindIn": ["code", "work"]},
            "options": {"includeSignals": False},
        },
        None,
    ),
    "empty": (
        {"queryText": "token refresh", "filter": {"tenantId": "acme", "projectKey": "NOPE", "secured": False}},
        None,
    ),
}

# name -> (graph input, context or None, field the error must name)
INVALID: dict[str, tuple[dict[str, Any], dict[str, Any] | None, str]] = {
    "missing-tenant": ({"queryText": "token refresh", "filter": {"secured": False}}, None, "filter.tenantId"),
    "top-k-too-large": (
        {"queryText": "token refresh", "filter": {"tenantId": "acme"}, "options": {"topK": 1000}},
        None,
        "options.topK",
    ),
    "top-k-zero": (
        {"queryText": "token refresh", "filter": {"tenantId": "acme"}, "options": {"topK": 0}},
        None,
        "options.topK",
    ),
    "depth-too-large": (
        {"queryText": "token refresh", "filter": {"tenantId": "acme"}, "options": {"expandDepth": 9}},
        None,
        "options.expandDepth",
    ),
    "blank-query": ({"queryText": "   ", "filter": {"tenantId": "acme", "secured": False}}, None, "queryText"),
    "bad-principal": (
        {"queryText": "token refresh", "filter": {"tenantId": "acme"}},
        {"principal": {"groups": ["security"]}},
        "context.principal.principalId",
    ),
}


def in_process(graph: BrainSearchGraph, request: dict[str, Any], principal: dict[str, Any] | None) -> dict[str, Any]:
    """The wire JSON of the same search run in this process."""
    output = graph.invoke(
        cast(BrainSearchInput, request), context=BrainSearchContext(principal=as_principal(principal))
    )
    return BrainSearchResult.model_validate(output).to_wire()


def canonical(value: Any) -> str:
    """JSON text with sorted keys, for byte-wise comparison of two JSON documents."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
