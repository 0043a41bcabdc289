"""Attack class: malformed and oversized requests. Huge or multi-line keys and values, lone surrogates,
non-object inputs, coercible option values, tenant ids and project keys that print like others, run
contexts with unknown keys: each is one typed, bounded line naming the field, never a stack trace, a
coerced default or a poisoned pack."""

from __future__ import annotations

from typing import Any

import pytest

from brain_graph import BrainGraphError, InvalidRequestError, SearchServices, build_graph
from tests.probes.support import request, search

MAX_MESSAGE = 600


def _error(services: SearchServices, raw: Any) -> BrainGraphError:
    with pytest.raises(BrainGraphError) as caught:
        search(services, raw)
    return caught.value


@pytest.mark.parametrize(
    "raw",
    [
        {"queryText": "token", "filter": {"tenantId": "t1", "secured": False}, "options": {"evil\n\n## key": 1}},
        {"queryText": "token", "filter": {"tenantId": "t1", "secured": False, "x" * 100_000: 1}},
        {"queryText": "token", "filter": {"tenantId": "t1", "secured": False}, "options": {"k\u2028" * 20_000: 1}},
        {"queryText": "token", "filter": {"tenantId": "t1", "secured": False, "profileKindIn": ["x\n" * 10_000] * 200}},
        {"queryText": "token", "filter": {"tenantId": "t1" * 100_000, "secured": False}},
        {"queryText": "token\n" * 10_000, "filter": {"tenantId": "t1", "secured": False}},
        {"queryText": "token", "filter": {"tenantId": "t1", "secured": False}, "x\n" * 1_000: 1},
    ],
    ids=[
        "option-key-newline",
        "filter-key-huge",
        "option-key-ls",
        "kinds-huge",
        "tenant-huge",
        "query-huge",
        "top-key",
    ],
)
def test_request_errors_are_one_bounded_line(small_services: SearchServices, raw: dict[str, Any]) -> None:
    message = str(_error(small_services, raw))
    assert "\n" not in message, repr(message[:200])
    assert "\r" not in message, repr(message[:200])
    assert "\u2028" not in message, repr(message[:200])
    assert len(message) <= MAX_MESSAGE, f"{len(message)} characters: {message[:200]!r}"


@pytest.mark.parametrize("query", ["token \ud800 refresh", "\udcff", "token \udfff"])
def test_query_with_lone_surrogate_is_refused(small_services: SearchServices, query: str) -> None:
    """Identifiers refused lone surrogates; the query did not, and the pack then carried text that
    cannot be encoded (the CLI and any UTF-8 JSON encoder failed on it)."""
    with pytest.raises(InvalidRequestError, match="queryText"):
        search(small_services, request(query))


@pytest.mark.parametrize("raw", ["token refresh", ["token"], 42])
def test_non_object_input_is_a_typed_error(small_services: SearchServices, raw: Any) -> None:
    with pytest.raises(InvalidRequestError, match="must be an object"):
        search(small_services, raw)


@pytest.mark.parametrize(
    ("options", "field"),
    [
        ({"topK": True}, "options.topK"),
        ({"includeEpisodes": "false"}, "options.includeEpisodes"),
        ({"maxNodes": "5"}, "options.maxNodes"),
    ],
)
def test_options_are_not_coerced(small_services: SearchServices, options: dict[str, Any], field: str) -> None:
    """``filter.secured`` refused ``"false"``; options coerced ``"false"`` to False and ``true`` to 1."""
    with pytest.raises(InvalidRequestError, match=field.replace(".", r"\.")):
        search(small_services, request("token") | {"options": options})


@pytest.mark.parametrize("secured", [0, [], "true", None])
def test_secured_is_a_strict_boolean(small_services: SearchServices, secured: Any) -> None:
    with pytest.raises(InvalidRequestError, match="secured"):
        search(small_services, {"queryText": "token", "filter": {"tenantId": "t1", "secured": secured}})


@pytest.mark.parametrize("field", ["tenantId", "projectKey"])
@pytest.mark.parametrize("value", ["t1 ", " t1", "t1\u00a0", "t1\u200b", "\u202et1", "t1\ufeff", "t\u00ad1"])
def test_tenant_ids_and_project_keys_that_print_like_another_are_refused(
    small_services: SearchServices, field: str, value: str
) -> None:
    """``t1 `` / ``t1\\u200b`` print as ``t1`` in the pack's scope line and in logs, but name another
    (empty) tenant or project: refused like principal names are, and like the loader refuses them."""
    raw = request("token")
    raw["filter"][field] = value
    with pytest.raises(InvalidRequestError, match=rf"filter\.{field}: must not"):
        search(small_services, raw)


@pytest.mark.parametrize(
    "context",
    [{"principle": {"principalId": "alice"}}, {"principal": {"principalId": "bob"}, "tenantId": "t2"}],
    ids=["typo", "extra-key"],
)
def test_unknown_context_keys_are_a_typed_error(small_services: SearchServices, context: dict[str, Any]) -> None:
    """A JSON run context (as sent over HTTP) with a typo or an extra key raised a raw TypeError from
    the context dataclass; it is an InvalidRequestError naming the key (``context.principle``)."""
    with pytest.raises(InvalidRequestError, match="context"):
        build_graph(small_services).invoke(request("token", secured=True), context=context)  # type: ignore[arg-type]
