"""Seed filters on Weaviate without a server: the facet filters (:mod:`.weaviate.facets`), the untimed
check's gRPC requests, read back from their wire bytes (every value the one the filter holds), and its
re-check of decoded replies (:mod:`.weaviate.untimed`), sent in the search's one gRPC batch."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from types import SimpleNamespace
from typing import Any

from weaviate.proto.v1 import base_pb2, properties_pb2, search_get_pb2

from brain_graph.core.filters import NodeFacets, SeedFilter
from brain_graph.core.security import AccessScope
from brain_graph.stores.base import LexicalQuery, VectorQuery
from brain_graph.stores.neo4j_weaviate.weaviate.facets import (
    exact_values,
    facet_parts,
    facet_properties,
    stored_facets,
)
from brain_graph.stores.neo4j_weaviate.weaviate.naming import collection_name
from brain_graph.stores.neo4j_weaviate.weaviate.schema import FACETS, ProfileCache
from brain_graph.stores.neo4j_weaviate.weaviate.search import WeaviateSearch
from brain_graph.stores.neo4j_weaviate.weaviate.untimed import untimed_found, untimed_request, untimed_targets

NEW, OLD = "p.new", "p.old"
FAR = 253_402_300_799_999_999  # 9999-12-31T23:59:59.999999Z: beyond what a float64 holds exactly


def cache() -> ProfileCache:
    """A collection with the facet properties (NEW) and one created before them (OLD)."""
    return ProfileCache(
        {}, {collection_name(NEW), collection_name(OLD)}, time.monotonic(), {collection_name(OLD): set(FACETS)}
    )


def test_facets_are_written_and_read_back_unchanged() -> None:
    for facets in (
        NodeFacets(),
        NodeFacets("cdm.doc", "billing", ("ops", "\u00e9t\u00e9"), FAR),
        NodeFacets("code.file", None, (), -62_135_596_800_000_000),
    ):
        written = facet_properties(facets)
        assert written["timed"] is (facets.updated_at is not None)
        assert stored_facets(written) == facets
    assert stored_facets({"nodeId": "n", "acl": []}) == NodeFacets()  # written before the facet properties


def test_filter_values_are_those_a_stored_facet_can_equal() -> None:
    assert exact_values(["ops", "", " ops", "ops ", "ops", "a b"]) == ["ops", "a b"]
    assert facet_parts(SeedFilter(tags=(" ops", ""))) is None  # nothing can match
    assert facet_parts(SeedFilter()) == []
    assert facet_parts(SeedFilter(project_key="P")) == []  # the project is a part of its own


def test_the_recency_part_compares_the_cutoff_as_weaviate_keeps_it() -> None:
    (part,) = facet_parts(SeedFilter(updated_after=FAR)) or []
    assert part.operator == base_pb2.Filters.OPERATOR_GREATER_THAN_EQUAL
    assert part.value_int == int(float(FAR)) != FAR
    assert int(float(FAR - 1)) >= part.value_int  # an object just before the cutoff may pass: re-checked
    (small,) = facet_parts(SeedFilter(updated_after=1_767_225_600_000_001)) or []
    assert small.value_int == 1_767_225_600_000_001  # exact within 2**53
    assert facet_parts(SeedFilter(updated_after=FAR), recency=False) == []


AND, OR = base_pb2.Filters.OPERATOR_AND, base_pb2.Filters.OPERATOR_OR
EQUAL, NOT_EQUAL = base_pb2.Filters.OPERATOR_EQUAL, base_pb2.Filters.OPERATOR_NOT_EQUAL
CONTAINS_ANY = base_pb2.Filters.OPERATOR_CONTAINS_ANY
# Values a request can carry (tags and namespaces cannot hold a newline, identities and projects can
# hold anything): quotes, backslashes, escapes and GraphQL or JSON that would change a rendered query.
HOSTILE = [
    'a"b',
    "back\\slash\\",
    '\\"',
    "\\u0022",
    '"}) { injected }',
    "} } { Get { Other { x } } }",
    '{"operator": "Or"}',
    "\u00e9t\u00e9 \U0001f600",
    "\u2028",
]


def wire(request: Any) -> Any:
    """``request`` as the server reads it: serialized and parsed back."""
    return search_get_pb2.SearchRequest.FromString(request.SerializeToString())


def leaves(where: Any) -> dict[str, tuple[int, Any]]:
    """The comparisons of a filter (And and Or flattened) by property: operator and value."""
    if where.operator in (AND, OR):
        return {name: leaf for part in where.filters for name, leaf in leaves(part).items()}
    kind = where.WhichOneof("test_value")
    value = getattr(where, kind)
    return {where.target.property: (where.operator, list(value.values) if kind == "value_text_array" else value)}


def test_the_untimed_requests_carry_every_value_exactly() -> None:
    identities = frozenset({'user:a"lice\\', *HOSTILE})
    scope = AccessScope("t", identities=identities)
    seed_filter = SeedFilter(
        project_key='P"} \\n' + HOSTILE[4],
        node_types=("cdm.doc",),
        namespaces=('ns"\\',),
        tags=tuple(HOSTILE),
        updated_after=0,
    )
    (target,) = untimed_targets([NEW], cache(), scope, seed_filter)
    sent = wire(untimed_request(target, 'tenant "x"\\'))
    assert sent.filters == target.where
    assert sent.filters.operator == AND
    assert leaves(sent.filters) == {
        "projectKey": (EQUAL, 'P"} \\n"}) { injected }'),
        "nodeType": (CONTAINS_ANY, ["cdm.doc"]),
        "namespace": (CONTAINS_ANY, ['ns"\\']),
        "tags": (CONTAINS_ANY, HOSTILE[:-1]),  # "\u2028" is white space: no stored tag equals it
        "timed": (NOT_EQUAL, True),  # no recency part: objects without an update time
        "secured": (EQUAL, False),
        "acl": (CONTAINS_ANY, sorted(identities)),
    }
    (access,) = [part for part in sent.filters.filters if part.operator == OR]
    assert set(leaves(access)) == {"secured", "acl"}
    assert (sent.collection, sent.tenant, sent.limit) == (collection_name(NEW), 'tenant "x"\\', 1)
    assert not sent.HasField("near_vector")
    assert not sent.HasField("bm25_search")
    assert list(sent.properties.non_ref_properties) == list(target.fields)
    assert not sent.metadata.vector
    assert sent.uses_127_api


def test_the_untimed_requests_ask_one_object_per_collection() -> None:
    targets = untimed_targets([NEW, OLD, NEW, "p.missing"], cache(), AccessScope("t"), SeedFilter(updated_after=5))
    assert [target.collection for target in targets] == [collection_name(NEW), collection_name(OLD)]
    new, old = (wire(untimed_request(target, "t_g1")) for target in targets)
    assert leaves(new.filters) == {"timed": (NOT_EQUAL, True), "secured": (EQUAL, False)}
    assert leaves(old.filters) == {"secured": (EQUAL, False)}  # objects without facets: no update time
    assert list(old.properties.non_ref_properties) == ["tenantId", "secured", "acl", "projectKey"]
    assert {"nodeType", "namespace", "tags", "updatedAtExact"} <= set(new.properties.non_ref_properties)
    (everything,) = untimed_targets([OLD], cache(), AccessScope("t", all_secured=True), SeedFilter(updated_after=5))
    assert everything.where is None
    assert not wire(untimed_request(everything, "t_g1")).HasField("filters")


def test_without_a_recency_part_or_with_a_facet_part_old_collections_are_not_asked() -> None:
    assert untimed_targets([NEW], cache(), AccessScope("t"), SeedFilter(tags=("ops",))) == []
    faceted = untimed_targets([NEW, OLD], cache(), AccessScope("t"), SeedFilter(tags=("ops",), updated_after=5))
    assert [target.collection for target in faceted] == [collection_name(NEW)]


def value(item: Any) -> Any:
    """A property value as a gRPC reply encodes it."""
    if item is None:
        return properties_pb2.Value(null_value=0)
    if isinstance(item, bool):
        return properties_pb2.Value(bool_value=item)
    if isinstance(item, list):
        return properties_pb2.Value(
            list_value=properties_pb2.ListValue(text_values=properties_pb2.TextValues(values=item))
        )
    return properties_pb2.Value(text_value=item)


def reply(*objects: dict[str, Any]) -> Any:
    """A ``SearchReply`` of objects with these properties, as the client receives it (parsed from bytes)."""
    results = [
        search_get_pb2.SearchResult(
            properties=search_get_pb2.PropertiesResult(
                non_ref_props=properties_pb2.Properties(fields={name: value(item) for name, item in obj.items()})
            )
        )
        for obj in objects
    ]
    return search_get_pb2.SearchReply.FromString(search_get_pb2.SearchReply(results=results).SerializeToString())


def found(objects: list[dict[str, Any]], seed_filter: SeedFilter, scope: AccessScope | None = None) -> bool:
    return untimed_found([reply(*objects)], scope or AccessScope("t"), seed_filter)


UNTIMED = {"tenantId": "t", "secured": False, "acl": [], "projectKey": "P", "nodeType": "cdm.doc", "namespace": None}


def test_an_untimed_object_is_re_checked_in_python() -> None:
    recency = SeedFilter(updated_after=5)
    assert found([UNTIMED], recency)
    assert found([{"tenantId": "t", "secured": False}], recency)  # written before facets: NodeFacets()
    assert not found([{**UNTIMED, "tenantId": "other"}], recency)
    assert not found([{**UNTIMED, "secured": True, "acl": ["user:a"]}], recency)
    assert found([{**UNTIMED, "secured": True, "acl": ["user:a"]}], recency, AccessScope("t", frozenset({"user:a"})))
    assert not found([{**UNTIMED, "updatedAtExact": "7"}], recency)
    assert not found([UNTIMED], SeedFilter(project_key="Q", updated_after=5))
    assert found([UNTIMED], SeedFilter(project_key="P", updated_after=5))
    assert not found([UNTIMED], SeedFilter(node_types=("cdm.page",), updated_after=5))
    assert not found([{**UNTIMED, "tags": ['a"b']}], SeedFilter(tags=("a",), updated_after=5))
    assert found([{**UNTIMED, "tags": ['a"b']}], SeedFilter(tags=('a"b',), updated_after=5))
    assert not found([], recency)


def test_a_missing_tenant_or_collection_has_no_objects() -> None:
    recency, scope = SeedFilter(updated_after=5), AccessScope("t")
    assert not untimed_found([None, None], scope, recency)
    assert untimed_found([None, reply(UNTIMED)], scope, recency)
    assert not untimed_found([], scope, recency)


A, B = "p.a", "p.b"


def kind(request: Any) -> str:
    if request.HasField("near_vector"):
        return "vector"
    return "bm25" if request.HasField("bm25_search") else "untimed"


class FakeGrpc:
    """Replies to every batch: the untimed requests ``untimed``, the others an untimed-looking visible
    object (an untimed check that read their replies would find it)."""

    def __init__(self, untimed: Any) -> None:
        self.untimed = untimed
        self.batches: list[list[Any]] = []

    def search(self, requests: Sequence[Any]) -> list[Any | None]:
        self.batches.append([wire(request) for request in requests])
        return [self.untimed if kind(request) == "untimed" else reply(UNTIMED) for request in requests]


class FakeConnection:
    """Counts requests; runs GraphQL documents on a client that records them (no statistics)."""

    def __init__(self) -> None:
        self.round_trips = 0
        self.documents: list[str] = []

    def tick(self, requests: int = 1) -> None:
        self.round_trips += requests

    def call(self, op: Any, timeout: float | None) -> Any:
        async def graphql_raw_query(document: str) -> Any:
            self.documents.append(document)
            return SimpleNamespace(aggregate={}, errors=None)

        return asyncio.run(op(SimpleNamespace(graphql_raw_query=graphql_raw_query)))


class FakeSchema:
    def __init__(self) -> None:
        self.cache = ProfileCache({}, {collection_name(A), collection_name(B)}, time.monotonic())

    def fresh(self, *args: Any, **kwargs: Any) -> ProfileCache:
        return self.cache

    def invalidate(self) -> None:
        raise AssertionError("the cache is current")


def searched(untimed: Any, **kwargs: Any) -> tuple[bool, list[list[Any]], FakeConnection]:
    grpc, connection = FakeGrpc(untimed), FakeConnection()
    search = WeaviateSearch(connection, FakeSchema(), grpc)  # type: ignore[arg-type]
    queries = [VectorQuery(profile, [1.0, 0.0], "e") for profile in (A, B)]
    lexical = [LexicalQuery(profile, ("ops",)) for profile in (A, B)]
    found = search.search(queries, lexical, AccessScope("t"), SeedFilter(updated_after=5), 5, 1, untimed=[A, B, A])
    return found.untimed, grpc.batches, connection


def test_the_untimed_check_is_sent_in_the_search_s_one_grpc_batch() -> None:
    for untimed_reply, expected in (
        (reply(), False),
        (None, False),
        (reply(UNTIMED), True),
        (reply({**UNTIMED, "tenantId": "other"}), False),
    ):
        untimed, batches, connection = searched(untimed_reply)
        assert untimed is expected
        (batch,) = batches
        assert [kind(request) for request in batch] == ["vector"] * 2 + ["bm25"] * 2 + ["untimed"] * 2
        assert [request.collection for request in batch[4:]] == [collection_name(A), collection_name(B)]
        assert [request.limit for request in batch[4:]] == [1, 1]
        (statistics,) = connection.documents  # the untimed check is no GraphQL
        assert statistics.startswith("{ Aggregate ")
        assert connection.round_trips == 7


def test_the_untimed_check_alone_is_one_grpc_batch() -> None:
    connection = FakeConnection()
    grpc = FakeGrpc(reply(UNTIMED))
    search = WeaviateSearch(connection, FakeSchema(), grpc)  # type: ignore[arg-type]
    assert search.untimed([A, B], AccessScope("t"), SeedFilter(updated_after=5), 1)
    (batch,) = grpc.batches
    assert [kind(request) for request in batch] == ["untimed", "untimed"]
    assert connection.documents == []
    assert connection.round_trips == 2
    assert not search.untimed([A, B], AccessScope("t"), SeedFilter(tags=("ops",)), 1)  # no recency part
    assert not search.untimed([A, B], AccessScope("t"), SeedFilter(updated_after=5), None)  # no generation
    assert len(grpc.batches) == 1
    assert connection.round_trips == 2
