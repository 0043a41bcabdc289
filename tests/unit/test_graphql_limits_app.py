"""Bounds of one /graphql request on the ASGI app: body size, document tokens, aliases and selected
fields are refused as GraphQL errors before anything runs; non-JSON bodies are GraphQL errors too;
credential refusals from the resolver answer 401 / 403."""

from __future__ import annotations

from typing import Any

import pytest
from graphql import get_introspection_query
from starlette.testclient import TestClient

from brain_graph.auth import Gate, JwtVerifier, TokenIssuer
from brain_graph.core.errors import AuthorizationError, ForbiddenError
from brain_graph.serving.graphql import create_graphql_app
from brain_graph.serving.graphql.limits import MAX_ALIASES, MAX_BODY_BYTES, MAX_FIELDS, MAX_TOKENS
from tests.platform.graphql_queries import BRAIN_SEARCH

SECRET = "unit-test-secret-of-at-least-32-chars"
NOW = 1_700_000_000  # the gate verifies tokens at this time, whenever the tests run
BEARER = TokenIssuer(SECRET).mint("alice", ["acme"], now=NOW)
SEARCH = 'brainSearch(queryText: "x", filter: {tenantId: "acme"})'
VARIABLES = {"queryText": "x", "filter": {"tenantId": "acme"}}


class StubGraph:
    """Records calls; answers a fixed result or raises ``error``."""

    def __init__(self, error: Exception | None = None) -> None:
        self.calls = 0
        self.error = error

    async def ainvoke(self, request: dict[str, Any], *, context: Any) -> dict[str, Any]:
        self.calls += 1
        if self.error is not None:
            raise self.error
        return {"hits": [], "promptPack": {"contextMarkdown": "# context", "citations": []}}


def client(graph: StubGraph, *, insecure: bool = False) -> TestClient:
    gate = Gate(JwtVerifier(SECRET, clock=lambda: NOW), None, insecure=insecure)
    return TestClient(create_graphql_app(lambda: graph, lambda: gate))


def post(graph: StubGraph, query: str, **kwargs: Any) -> Any:
    headers = {"Authorization": f"Bearer {BEARER}"}
    return client(graph).post("/", json={"query": query, **kwargs}, headers=headers)


def only_error(response: Any) -> dict[str, Any]:
    errors = response.json()["errors"]
    assert len(errors) == 1, errors
    assert "\n" not in errors[0]["message"]
    return dict(errors[0])


def test_the_seed_query_and_graphiqls_introspection_stay_within_the_limits() -> None:
    graph = StubGraph()
    assert post(graph, BRAIN_SEARCH, variables=VARIABLES).json()["errors"][0]["path"] == ["brainSearch", "episodes"]
    assert graph.calls == 1  # ran: only the stub's partial result is an error
    full = get_introspection_query(
        descriptions=True,
        specified_by_url=True,
        directive_is_repeatable=True,
        schema_description=True,
        input_value_deprecation=True,
    )
    response = post(graph, full)
    assert response.status_code == 200, response.text
    assert response.json()["data"]["__schema"]["queryType"]["name"] == "Query"


def test_aliases_cannot_multiply_the_response() -> None:
    graph = StubGraph()
    copies = " ".join(f"a{i}: promptPack {{ contextMarkdown }}" for i in range(MAX_ALIASES + 1))
    response = post(graph, f"{{ {SEARCH} {{ {copies} }} }}")
    assert response.status_code == 400
    error = only_error(response)
    assert error["extensions"]["code"] == "BAD_USER_INPUT"
    assert f"at most {MAX_ALIASES} aliases" in error["message"]
    assert graph.calls == 0


def test_fragments_reused_under_aliases_count_every_field() -> None:
    graph = StubGraph()
    packs = " ".join(f"p{i}: promptPack {{ ...M }}" for i in range(8))
    markdown = " ".join(f"m{i}: contextMarkdown" for i in range(8))
    query = f"{{ {SEARCH} {{ {packs} }} }} fragment M on BrainPromptPack {{ {markdown} }}"
    assert post(graph, query).status_code == 200  # 16 aliases, 8 + 8 x 8 fields: within the limits
    candidates = " ".join(f"c{i}: candidates {{ scoringBreakdown {{ ...S }} }}" for i in range(12))
    support = " ".join(f"s{i}: support {{ ...L }}" for i in range(12))
    leaves = " ".join(f"l{i}: contribution" for i in range(12))  # 36 aliases, 12^3 leaves
    query = f"{{ {SEARCH} {{ {candidates} }} }} fragment S on BrainScoringBreakdown {{ {support} }} "
    query += f"fragment L on BrainCandidateSupport {{ {leaves} }}"
    error = only_error(post(graph, query))
    assert error["extensions"]["code"] == "BAD_USER_INPUT"
    assert f"at most {MAX_FIELDS} fields" in error["message"]
    assert graph.calls == 1


def test_cyclic_fragments_are_a_document_error() -> None:
    query = f"{{ {SEARCH} {{ ...A }} }} fragment A on BrainSearchResult {{ hits {{ nodeId }} ...B }} "
    query += "fragment B on BrainSearchResult { ...A }"
    assert only_error(post(StubGraph(), query))["extensions"]["code"] == "BAD_USER_INPUT"


def test_a_document_over_the_token_limit_is_refused_before_it_is_parsed_whole() -> None:
    """The parser stops at the limit (its message says so), so the work does not grow with the document."""
    graph = StubGraph()
    query = "{ " + " ".join(f"a{i}: __typename" for i in range(MAX_TOKENS)) + " }"
    assert len(query.encode()) < MAX_BODY_BYTES
    response = post(graph, query)
    assert response.status_code == 400
    error = only_error(response)
    assert error["extensions"]["code"] == "BAD_USER_INPUT"
    assert f"more than {MAX_TOKENS} tokens" in error["message"]
    assert "Parsing aborted" in error["message"]
    assert graph.calls == 0


def test_repeated_unaliased_fields_are_bounded() -> None:
    query = "{ " + " ".join("__typename" for _ in range(MAX_FIELDS + 1)) + " }"
    assert f"at most {MAX_FIELDS} fields" in only_error(post(StubGraph(), query))["message"]


def test_a_body_over_the_size_limit_is_413() -> None:
    graph = StubGraph()
    query = "{ " + " ".join(f"a{i}: __typename" for i in range(50_000)) + " }"
    response = post(graph, query)
    assert response.status_code == 413
    error = only_error(response)
    assert error["extensions"]["code"] == "BAD_USER_INPUT"
    assert str(MAX_BODY_BYTES) in error["message"]
    declared = client(graph).post(
        "/",
        content=b"{}",
        headers={"Authorization": f"Bearer {BEARER}", "content-type": "application/json", "content-length": "9999999"},
    )
    assert declared.status_code == 413


MULTIPART = (
    b'--xx\r\nContent-Disposition: form-data; name="operations"\r\n\r\n{"query":"{__typename}"}\r\n'
    b'--xx\r\nContent-Disposition: form-data; name="map"\r\n\r\n{}\r\n--xx--\r\n'
)


@pytest.mark.parametrize(
    ("content_type", "body", "status"),
    [
        ("multipart/form-data; boundary=xx", MULTIPART, 415),
        ("text/plain", b'{"query":"{__typename}"}', 415),
        ("application/json", b"{{{", 400),
        ("application/json", b"[" * 60_000 + b"]" * 60_000, 400),
        ("application/json", b"\xff\xfe", 400),
    ],
    ids=["multipart", "text-plain", "bad-json", "deep-json", "not-utf8"],
)
def test_bodies_that_are_not_json_are_graphql_errors(content_type: str, body: bytes, status: int) -> None:
    graph = StubGraph()
    headers = {"Authorization": f"Bearer {BEARER}", "content-type": content_type}
    response = client(graph).post("/", content=body, headers=headers)
    assert response.status_code == status
    error = only_error(response)
    assert error["extensions"]["code"] == "BAD_USER_INPUT"
    assert "multipart" not in error["message"]
    assert graph.calls == 0


def test_a_forbidden_search_is_403() -> None:
    graph = StubGraph(ForbiddenError("alice may not read tenant 'globex'"))
    response = post(graph, f"{{ {SEARCH} {{ hits {{ nodeId }} }} }}")
    assert response.status_code == 403
    assert only_error(response)["extensions"]["code"] == "FORBIDDEN"


def test_a_token_without_the_reader_scope_is_403() -> None:
    graph = StubGraph()
    bearer = TokenIssuer(SECRET).mint("alice", ["acme"], scopes=(), now=NOW)
    query = f"{{ {SEARCH} {{ hits {{ nodeId }} }} }}"
    response = client(graph).post("/", json={"query": query}, headers={"Authorization": f"Bearer {bearer}"})
    assert response.status_code == 403
    assert only_error(response)["extensions"]["code"] == "FORBIDDEN"
    assert graph.calls == 0


def test_a_search_without_a_principal_is_401_in_insecure_mode() -> None:
    graph = StubGraph(AuthorizationError("a secured search needs a principal; no principal was given"))
    response = client(graph, insecure=True).post("/", json={"query": f"{{ {SEARCH} {{ hits {{ nodeId }} }} }}"})
    assert response.status_code == 401
    assert response.headers["WWW-Authenticate"] == "Bearer"
    assert only_error(response)["extensions"]["code"] == "UNAUTHENTICATED"
