"""Request filters: timestamps and namespaces parsed by one rule, node types choosing the profiles,
the recency cutoff resolved from updatedAfter, maxAgeDays and the request time, and every bad value
refused in one line naming the field."""

from __future__ import annotations

from typing import Any

import pytest

from brain_graph.core.contracts import BrainSearchFilterInput
from brain_graph.core.environment import read_settings
from brain_graph.core.errors import ConfigurationError, InvalidRequestError
from brain_graph.core.filters import MICROS_PER_DAY, SeedFilter, format_timestamp, parse_timestamp, path_namespace
from brain_graph.embedding.profiles import default_profiles
from brain_graph.pipeline.config import Settings
from brain_graph.pipeline.filters import deployment_clock, resolve_filters, searched_profiles, seed_filter
from brain_graph.pipeline.requests import read_request
from brain_graph.pipeline.services import SearchServices

BASE: dict[str, Any] = {"queryText": "token", "filter": {"tenantId": "t1", "secured": False}}


def with_filter(**fields: Any) -> dict[str, Any]:
    return {**BASE, "filter": {**BASE["filter"], **fields}}


def test_timestamps_have_one_canonical_form() -> None:
    assert parse_timestamp("1970-01-01") == 0
    assert parse_timestamp("1970-01-01T00:00:01Z") == 1_000_000
    assert parse_timestamp("1970-01-01T01:00:00+01:00") == 0
    assert parse_timestamp("1970-01-01T00:00:00") == 0  # no offset: UTC
    assert parse_timestamp("2024-09-01T00:00:00.5Z") == parse_timestamp("2024-09-01") + 500_000
    assert format_timestamp(parse_timestamp("2024-09-01T02:00:00+02:00")) == "2024-09-01T00:00:00Z"
    assert format_timestamp(parse_timestamp("2024-09-01T00:00:00.000001Z")) == "2024-09-01T00:00:00.000001Z"
    assert format_timestamp(parse_timestamp("1969-12-31T23:59:59Z")) == "1969-12-31T23:59:59Z"
    for bad in ("yesterday", "2024-13-01", "2024-09-01T25:00", "", "1" * 100):
        with pytest.raises(ValueError, match="ISO-8601"):
            parse_timestamp(bad)


def test_namespaces_are_top_level_directories() -> None:
    assert path_namespace("src/telemetry/ingest.py") == "telemetry"
    assert path_namespace("src/main.py") == "src"
    assert path_namespace("./Docs/design/cache.md") == "docs"
    assert path_namespace("/services/auth/keys.py") == "services"
    assert path_namespace("services\\auth\\keys.py") == "services"
    assert path_namespace("README.md") is None
    assert path_namespace("") is None


def test_node_types_choose_the_profiles_that_embed_them() -> None:
    registry = default_profiles()

    def ids(**fields: Any) -> list[str]:
        chosen = searched_profiles(BrainSearchFilterInput(tenant_id="t", **fields), registry)
        return [profile.profile_id for profile in chosen]

    assert ids() == ["cdm.doc.body", "cdm.work.summary"]  # the default kinds
    assert ids(node_types=["code.file"]) == ["code.file.summary"]  # code is searched without naming its kind
    assert ids(node_types=["cdm.doc", "code.file"]) == ["cdm.doc.body", "code.file.summary"]
    assert ids(node_types=["cdm.doc"], profile_kind_in=["doc", "work"]) == ["cdm.doc.body"]
    with pytest.raises(InvalidRequestError) as caught:
        ids(node_types=["code.file"], profile_kind_in=["work"])
    assert caught.value.field == "filter.nodeTypes"
    assert "no searched profile embeds ['code.file']" in str(caught.value)
    assert "['cdm.work_item']" in str(caught.value)


def test_the_recency_cutoff_is_the_later_of_updated_after_and_the_age() -> None:
    profiles = default_profiles().profiles

    def applied(clock: Any = None, **fields: Any) -> Any:
        return resolve_filters(BrainSearchFilterInput(tenant_id="t", **fields), profiles, clock)

    assert applied()["updatedAfter"] is None
    assert applied(updated_after="2026-01-01T00:00:00+01:00")["updatedAfter"] == "2025-12-31T23:00:00Z"
    by_age = applied(max_age_days=30, as_of="2026-03-31")
    assert (by_age["updatedAfter"], by_age["asOf"], by_age["maxAgeDays"]) == (
        "2026-03-01T00:00:00Z",
        "2026-03-31T00:00:00Z",
        30,
    )
    assert applied(max_age_days=30, as_of="2026-03-31", updated_after="2026-03-15")["updatedAfter"] == (
        "2026-03-15T00:00:00Z"
    )
    assert applied(max_age_days=30, as_of="2026-03-31", updated_after="2026-01-15")["updatedAfter"] == (
        "2026-03-01T00:00:00Z"
    )
    fixed = deployment_clock("2026-03-31")
    assert applied(fixed, max_age_days=1)["updatedAfter"] == "2026-03-30T00:00:00Z"
    assert (
        applied(fixed, max_age_days=1, as_of="2026-01-02")["updatedAfter"] == "2026-01-01T00:00:00Z"
    )  # the request wins
    with pytest.raises(InvalidRequestError) as caught:
        applied(max_age_days=1)
    assert caught.value.field == "filter.maxAgeDays"
    assert "filter.asOf" in str(caught.value)
    assert "BRAIN_GRAPH_CLOCK" in str(caught.value)


def test_the_system_clock_is_echoed_as_the_request_time() -> None:
    clock = deployment_clock("system")
    assert clock is not None
    profiles = default_profiles().profiles
    applied = resolve_filters(BrainSearchFilterInput(tenant_id="t", max_age_days=2), profiles, clock)
    assert applied["asOf"] is not None
    assert parse_timestamp(applied["updatedAfter"] or "") == parse_timestamp(applied["asOf"]) - 2 * MICROS_PER_DAY


def test_values_are_folded_and_become_the_store_filter() -> None:
    profiles = default_profiles().profiles
    applied = resolve_filters(
        BrainSearchFilterInput(
            tenant_id="t",
            project_key="P",
            node_types=["cdm.doc", "cdm.doc"],
            namespaces=["Docs", "docs", "ÉTÉ"],
            tags=["Payments", "SEV1"],
            updated_after="2026-01-01",
        ),
        profiles,
        None,
    )
    assert (applied["nodeTypes"], applied["namespaces"], applied["tags"]) == (
        ["cdm.doc"],
        ["docs", "été"],
        ["payments", "sev1"],
    )
    assert seed_filter(applied) == SeedFilter(
        project_key="P",
        node_types=("cdm.doc",),
        namespaces=("docs", "été"),
        tags=("payments", "sev1"),
        updated_after=parse_timestamp("2026-01-01"),
    )


def test_a_bad_clock_setting_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BRAIN_GRAPH_CLOCK", "yesterday")
    with pytest.raises(ConfigurationError, match="BRAIN_GRAPH_CLOCK: must be 'system' or an ISO-8601 time"):
        read_settings(Settings)


FILTER_REJECTED = [  # checked with the other refusals in tests/unit/test_requests.py
    pytest.param(with_filter(nodeTypes=["cdm.workitem"]), "filter.nodeTypes", "no searched profile", id="type"),
    pytest.param(with_filter(nodeTypes=[]), "filter.nodeTypes", "at least 1 item", id="no-types"),
    pytest.param(with_filter(nodeTypes="cdm.doc"), "filter.nodeTypes", "valid list", id="types-not-a-list"),
    pytest.param(with_filter(tags=["ok", " "]), "filter.tags", "must not be blank", id="blank-tag"),
    pytest.param(with_filter(tags=["a\nb"]), "filter.tags", "control", id="tag-newline"),
    pytest.param(with_filter(tags=["x" * 129]), "filter.tags", "at most 128", id="tag-long"),
    pytest.param(with_filter(tags=[f"t{n}" for n in range(51)]), "filter.tags", "at most 50 items", id="tags-51"),
    pytest.param(with_filter(namespaces=[1]), "filter.namespaces.0", "valid string", id="namespace-int"),
    pytest.param(with_filter(updatedAfter="last week"), "filter.updatedAfter", "ISO-8601", id="bad-date"),
    pytest.param(with_filter(updatedAfter="2024-02-30"), "filter.updatedAfter", "ISO-8601", id="no-such-day"),
    pytest.param(with_filter(maxAgeDays=-1), "filter.maxAgeDays", "greater than or equal to 1", id="negative-age"),
    pytest.param(with_filter(maxAgeDays=0), "filter.maxAgeDays", "greater than or equal to 1", id="zero-age"),
    pytest.param(with_filter(maxAgeDays=36_501), "filter.maxAgeDays", "less than or equal to 36500", id="age-big"),
    pytest.param(with_filter(maxAgeDays="7"), "filter.maxAgeDays", "valid integer", id="age-string"),
    pytest.param(with_filter(maxAgeDays=7), "filter.maxAgeDays", "needs filter.asOf", id="age-without-time"),
    pytest.param(with_filter(maxAgeDays=7, asOf="now"), "filter.asOf", "ISO-8601", id="bad-as-of"),
    pytest.param(with_filter(colour="red"), "filter.colour", "Extra inputs", id="unknown-filter"),
]


def test_the_request_carries_the_resolved_filter(small_services: SearchServices) -> None:
    request = read_request(with_filter(nodeTypes=["cdm.doc"], maxAgeDays=10, asOf="2026-01-11"), small_services)
    assert request["profileIds"] == ["cdm.doc.body"]
    assert request["filtersApplied"] == {
        "projectKey": None,
        "profileKinds": ["doc"],
        "nodeTypes": ["cdm.doc"],
        "namespaces": None,
        "tags": None,
        "updatedAfter": "2026-01-01T00:00:00Z",
        "maxAgeDays": 10,
        "asOf": "2026-01-11T00:00:00Z",
    }
