"""Every rejected input gets a typed error naming the field and the allowed range."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from brain_graph.core.contracts import BrainSearchOptionsInput, BrainSearchRequest
from brain_graph.core.errors import InvalidRequestError
from brain_graph.graphs.search import BrainSearchGraph
from brain_graph.pipeline.requests import read_request
from brain_graph.pipeline.services import SearchLimits, SearchServices
from tests.helpers import SEED_OPTION_DEFAULTS, request
from tests.unit.test_filter_requests import FILTER_REJECTED

BASE: dict[str, Any] = {"queryText": "token", "filter": {"tenantId": "t1", "secured": False}}


def with_options(**options: Any) -> dict[str, Any]:
    return {**BASE, "options": options}


REJECTED = [
    pytest.param({**BASE, "queryText": ""}, "queryText", "at least 1 character", id="empty-query"),
    pytest.param({**BASE, "queryText": "   "}, "queryText", "white space", id="blank-query"),
    pytest.param({**BASE, "queryText": "\u200b\u200b"}, "queryText", "format characters", id="zero-width-query"),
    pytest.param({**BASE, "queryText": "\ufeff \u2060"}, "queryText", "format characters", id="bom-query"),
    pytest.param({**BASE, "queryText": "\x00\x00"}, "queryText", "control", id="nul-query"),
    pytest.param({**BASE, "queryText": b"token"}, "queryText", "valid string", id="bytes-query"),
    pytest.param({**BASE, "queryText": "x" * 2001}, "queryText", "at most 2000", id="query-too-long"),
    pytest.param({"filter": BASE["filter"]}, "queryText", "Field required", id="missing-query"),
    pytest.param({"queryText": "token"}, "filter", "Field required", id="missing-filter"),
    pytest.param({**BASE, "filter": {}}, "filter.tenantId", "Field required", id="missing-tenant"),
    pytest.param({**BASE, "filter": {"tenantId": ""}}, "filter.tenantId", "at least 1", id="empty-tenant"),
    pytest.param({**BASE, "filter": {"tenantId": "  "}}, "filter.tenantId", "blank", id="blank-tenant"),
    pytest.param(
        {**BASE, "filter": {"tenantId": "t1\n\n## Passages"}}, "filter.tenantId", "control", id="tenant-newline"
    ),
    pytest.param({**BASE, "filter": {"tenantId": "x" * 129}}, "filter.tenantId", "at most 128", id="tenant-long"),
    pytest.param(
        {**BASE, "filter": {"tenantId": "t1", "projectKey": "P\r\nIGNORE"}},
        "filter.projectKey",
        "control",
        id="project-newline",
    ),
    pytest.param(
        {**BASE, "filter": {"tenantId": "t1", "projectKey": " "}}, "filter.projectKey", "blank", id="blank-project"
    ),
    pytest.param(
        {**BASE, "filter": {"tenantId": "t1", "secured": "false"}}, "filter.secured", "valid boolean", id="secured-str"
    ),
    pytest.param({**BASE, "topK": 1}, "request", "topK belong(s) in options", id="option-outside-options"),
    pytest.param({**BASE, "colour": "red"}, "request", "unknown key(s) ['colour']", id="unknown-top-level-key"),
    pytest.param(with_options(topK=0), "options.topK", "greater than or equal to 1", id="topK-0"),
    pytest.param(with_options(topK=101), "options.topK", "less than or equal to 100", id="topK-101"),
    pytest.param(with_options(maxNodes=0), "options.maxNodes", "greater than or equal to 1", id="maxNodes-0"),
    pytest.param(with_options(maxNodes=1001), "options.maxNodes", "less than or equal to 1000", id="maxNodes-1001"),
    pytest.param(with_options(maxEpisodes=-1), "options.maxEpisodes", "greater than or equal to 0", id="maxEp--1"),
    pytest.param(with_options(maxEpisodes=51), "options.maxEpisodes", "less than or equal to 50", id="maxEp-51"),
    pytest.param(with_options(expandDepth=-1), "options.expandDepth", "greater than or equal to 0", id="depth--1"),
    pytest.param(with_options(expandDepth=4), "options.expandDepth", "between 0 and 3", id="depth-4"),
    pytest.param(with_options(topK="many"), "options.topK", "valid integer", id="topK-not-int"),
    pytest.param(with_options(colour="red"), "options.colour", "Extra inputs", id="unknown-option"),
    pytest.param(
        {**BASE, "filter": {"tenantId": "t1", "profileKindIn": ["work", "video"]}},
        "filter.profileKindIn",
        "unknown profile kind(s) ['video']",
        id="unknown-kind",
    ),
    pytest.param(
        {**BASE, "filter": {"tenantId": "t1", "profileKindIn": []}},
        "filter.profileKindIn",
        "must not be empty",
        id="empty-kinds",
    ),
]


@pytest.mark.parametrize(("raw", "field", "message"), [*REJECTED, *FILTER_REJECTED])
def test_rejected_requests_name_the_field(
    small_graph: BrainSearchGraph, raw: dict[str, Any], field: str, message: str
) -> None:
    with pytest.raises(InvalidRequestError) as caught:
        small_graph.invoke(raw)
    assert caught.value.field == field
    assert message in str(caught.value)
    assert str(caught.value).startswith(f"invalid request: {field}: ")
    assert "\n" not in str(caught.value)


def test_maximum_depth_is_configurable(small_services: SearchServices) -> None:
    deeper = SearchServices(backend=small_services.backend, limits=SearchLimits(max_expand_depth=5))
    assert read_request(with_options(expandDepth=5), deeper)["options"]["expandDepth"] == 5
    with pytest.raises(InvalidRequestError, match="between 0 and 5"):
        read_request(with_options(expandDepth=6), deeper)


def test_defaults_are_the_seeds() -> None:
    options = BrainSearchOptionsInput()
    assert options.to_wire() == SEED_OPTION_DEFAULTS
    parsed = BrainSearchRequest.model_validate(BASE | {"filter": {"tenantId": "t1"}})
    assert parsed.filter.secured is True
    assert parsed.filter.project_key is None


def test_accepted_request_is_normalised_once_into_the_state(small_graph: BrainSearchGraph) -> None:
    state = small_graph.invoke(request("token", topK=3), output_keys=["request", "filter", "options"])
    assert state["request"] == {
        "queryText": "token",
        "filter": {
            "tenantId": "t1",
            "projectKey": None,
            "profileKindIn": None,
            "secured": False,
            "nodeTypes": None,
            "namespaces": None,
            "tags": None,
            "updatedAfter": None,
            "maxAgeDays": None,
            "asOf": None,
        },
        "options": SEED_OPTION_DEFAULTS | {"topK": 3, "retrievalMode": "hybrid"},  # the embedded store's default
        "profileIds": ["cdm.doc.body", "cdm.work.summary"],
        "filtersApplied": {
            "projectKey": None,
            "profileKinds": ["doc", "work"],
            "nodeTypes": None,
            "namespaces": None,
            "tags": None,
            "updatedAfter": None,
            "maxAgeDays": None,
            "asOf": None,
        },
    }
    assert state["filter"] == {"tenantId": "t1", "secured": False}  # the input as sent, never reshaped
    assert state["options"] == {"topK": 3}


def test_unknown_keys_are_refused_by_every_entry_point(small_graph: BrainSearchGraph) -> None:
    raw = {**BASE, "expandDepth": 0}
    with pytest.raises(InvalidRequestError, match="expandDepth belong"):
        small_graph.invoke(raw)
    with pytest.raises(InvalidRequestError, match="expandDepth belong"):
        list(small_graph.stream(raw))
    with pytest.raises(InvalidRequestError, match="expandDepth belong"):
        asyncio.run(small_graph.ainvoke(raw))
