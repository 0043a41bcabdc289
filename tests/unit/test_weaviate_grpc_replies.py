"""Decoding Weaviate gRPC replies (:mod:`brain_graph.stores.neo4j_weaviate.weaviate.grpc_search`) without a server:
the properties a search reads, the distance and the raw vector, as the server encodes them."""

from __future__ import annotations

import numpy as np
from weaviate.proto.v1 import base_pb2, properties_pb2, search_get_pb2

from brain_graph.core.filters import NO_FILTER, NodeFacets, SeedFilter
from brain_graph.core.security import AccessScope
from brain_graph.stores.base import VectorQuery
from brain_graph.stores.exact import exact_scores
from brain_graph.stores.neo4j_weaviate.weaviate.grpc_search import FLOAT32, found_objects, vector_matrix
from brain_graph.stores.neo4j_weaviate.weaviate.search import returned, score


def text(value: str) -> properties_pb2.Value:
    return properties_pb2.Value(text_value=value)


def result(node_id: str, vector: list[float], *, project: str | None, acl: list[str], named: bool = True) -> object:
    fields = {
        "nodeId": text(node_id),
        "tenantId": text("t1"),
        "secured": properties_pb2.Value(bool_value=bool(acl)),
        "acl": properties_pb2.Value(
            list_value=properties_pb2.ListValue(text_values=properties_pb2.TextValues(values=acl))
        ),
        "projectKey": text(project) if project is not None else properties_pb2.Value(null_value=0),
    }
    raw = np.asarray(vector, dtype=FLOAT32).tobytes()
    metadata = (
        search_get_pb2.MetadataResult(
            distance=0.25, distance_present=True, vectors=[base_pb2.Vectors(name="default", vector_bytes=raw)]
        )
        if named
        else search_get_pb2.MetadataResult(vector_bytes=raw)
    )
    return search_get_pb2.SearchResult(
        properties=search_get_pb2.PropertiesResult(non_ref_props=properties_pb2.Properties(fields=fields)),
        metadata=metadata,
    )


def test_properties_distance_and_vectors_are_decoded() -> None:
    reply = search_get_pb2.SearchReply(
        results=[
            result("a", [0.5, -0.25, 1.0], project="P1", acl=["user:alice", "group:ops"]),
            result("b", [0.1, 0.2, 0.3], project=None, acl=[], named=False),
        ]
    )
    first, second = found_objects(reply)
    assert (first.node_id, first.tenant_id, first.project_key, first.secured, first.acl) == (
        "a",
        "t1",
        "P1",
        True,
        ("user:alice", "group:ops"),
    )
    assert first.distance == 0.25
    assert (second.project_key, second.secured, second.acl, second.distance) == (None, False, (), None)
    matrix = vector_matrix([first, second], 3)
    assert matrix is not None
    assert matrix.dtype == np.float32
    assert matrix.shape == (2, 3)
    assert matrix[1].tolist() == np.asarray([0.1, 0.2, 0.3], dtype=np.float32).tolist()


def test_scores_equal_the_reference_over_the_same_float32_values() -> None:
    reply = search_get_pb2.SearchReply(
        results=[result(f"n{i}", [float(i), 1.0 / (i + 1), -0.5], project=None, acl=[]) for i in range(4)]
    )
    objects = found_objects(reply)
    query = VectorQuery("p", [0.3, -0.7, 0.2], "e")
    as_floats = [[float(x) for x in np.asarray([float(i), 1.0 / (i + 1), -0.5], dtype=np.float32)] for i in range(4)]
    assert [hit.score for hit in score(query, objects)] == exact_scores(query.vector, as_floats)


def test_another_dimension_is_not_a_matrix() -> None:
    objects = found_objects(search_get_pb2.SearchReply(results=[result("a", [1.0, 2.0], project=None, acl=[])]))
    assert vector_matrix(objects, 3) is None


def test_a_read_returns_the_acl_only_when_the_scope_reads_it() -> None:
    # The access rule is re-checked on the returned objects: wherever it reads the ACL, the ACL is
    # returned, and the project key with a project filter.
    public = AccessScope("t1")
    reader = AccessScope("t1", identities=frozenset({"user:alice"}))
    service = AccessScope("t1", all_secured=True)
    assert returned(public, NO_FILTER) == ["tenantId", "nodeId", "secured"]
    assert returned(reader, NO_FILTER) == ["tenantId", "nodeId", "secured", "acl"]
    assert returned(service, SeedFilter("P1")) == ["tenantId", "nodeId", "secured", "projectKey"]
    for scope in (public, reader, service):
        without_acl = "acl" not in returned(scope, NO_FILTER)
        for acl in ((), ("user:alice",), ("user:bob",)):
            seen = scope.may_see("t1", True, acl)
            assert not without_acl or seen == scope.may_see("t1", True, ())


def test_a_read_returns_the_facets_each_set_part_re_checks() -> None:
    public = AccessScope("t1")
    base = ["tenantId", "nodeId", "secured"]
    assert returned(public, SeedFilter(node_types=("cdm.doc",))) == [*base, "nodeType"]
    assert returned(public, SeedFilter(namespaces=("api",), tags=("ops",))) == [*base, "namespace", "tags"]
    assert returned(public, SeedFilter(updated_after=0)) == [*base, "updatedAtExact"]


def test_facets_are_decoded_as_stored_and_unset_when_not_returned() -> None:
    faceted = result("a", [1.0], project=None, acl=[])
    fields = faceted.properties.non_ref_props.fields  # type: ignore[attr-defined]
    fields["nodeType"].text_value = "cdm.doc"
    fields["namespace"].null_value = 0
    fields["tags"].list_value.text_values.values.extend(["ops", "\u00e9t\u00e9"])
    fields["updatedAtExact"].text_value = "253402300799999999"  # beyond what a float64 holds exactly
    plain = result("b", [1.0], project=None, acl=[])
    first, second = found_objects(search_get_pb2.SearchReply(results=[faceted, plain]))
    assert first.facets == NodeFacets("cdm.doc", None, ("ops", "\u00e9t\u00e9"), 253402300799999999)
    assert second.facets == NodeFacets()
