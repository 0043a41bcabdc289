"""One access rule, one table: every case runs through ``AccessScope.may_see`` (the rule) and through
each backend's translator (:mod:`brain_graph.stores.access`): the SQL predicate on an in-memory
SQLite, the numpy mask of the embedded store's vector matrices, the Cypher predicate on the Neo4j
server, the Weaviate filter on the Weaviate server (its tenant part being the Weaviate tenant a query
names)."""

from __future__ import annotations

import json
import sqlite3
import uuid
from collections.abc import Iterator
from typing import cast

import numpy as np
import pytest
from weaviate.proto.v1 import search_get_pb2

from brain_graph.core.security import AccessScope, Principal
from brain_graph.stores.access import (
    cypher_params,
    cypher_visible,
    numpy_visible,
    sql_params,
    sql_visible,
    weaviate_visible,
)
from brain_graph.stores.base import StorageBackend
from brain_graph.stores.neo4j_weaviate.backend import Neo4jWeaviateBackend
from brain_graph.stores.neo4j_weaviate.weaviate.grpc_search import found_objects, search_request
from brain_graph.stores.neo4j_weaviate.weaviate.naming import collection_name, tenant_name
from tests.conformance.conftest import WORK, Harness

# node id: (tenant, secured, acl)
NODES: dict[str, tuple[str, bool, tuple[str, ...]]] = {
    "pub": ("t1", False, ()),
    "pub-with-acl": ("t1", False, ("user:bob",)),
    "alice": ("t1", True, ("user:alice",)),
    "group-security": ("t1", True, ("group:security",)),
    "user-security": ("t1", True, ("user:security",)),
    "alice-or-ops": ("t1", True, ("group:ops", "user:alice")),
    "no-acl": ("t1", True, ()),
    "t2-pub": ("t2", False, ()),
    "t2-alice": ("t2", True, ("user:alice",)),
}
T1 = {node for node, (tenant, _, _) in NODES.items() if tenant == "t1"}
# Loading refuses an acl on a node that is not secured; stores loaded before it did may hold one, so the
# rule and the SQL and Cypher translators keep the case, and only the nodes a load accepts are stored.
LOADABLE = {node for node, (_, secured, acl) in NODES.items() if secured or not acl}
PUBLIC = {"pub", "pub-with-acl"}
ALICE = Principal("alice").identities
# scope name: (tenant, identities, all_secured, the nodes it sees)
SCOPES: dict[str, tuple[str, frozenset[str] | None, bool, set[str]]] = {
    "no-principal": ("t1", None, False, PUBLIC),
    "empty-identities": ("t1", frozenset(), False, PUBLIC),
    "alice": ("t1", ALICE, False, PUBLIC | {"alice", "alice-or-ops"}),
    "group-security": ("t1", Principal("carol", ("security",)).identities, False, PUBLIC | {"group-security"}),
    "user-security-in-ops": (
        "t1",
        Principal("security", ("ops",)).identities,
        False,
        PUBLIC | {"user-security", "alice-or-ops"},
    ),
    "unknown-identity": ("t1", Principal("nobody", ("nowhere",)).identities, False, PUBLIC),
    "service-principal": ("t1", None, True, T1),
    "service-principal-alice": ("t1", ALICE, True, T1),
    "other-tenant-alice": ("t2", ALICE, False, {"t2-pub", "t2-alice"}),
    "other-tenant-public": ("t2", None, False, {"t2-pub"}),
    "unknown-tenant": ("t3", None, True, set()),
}
CASES = [
    pytest.param(scope, node, node in SCOPES[scope][3], id=f"{scope}:{node}") for scope in SCOPES for node in NODES
]


def scope_of(name: str, tenant_prefix: str = "") -> AccessScope:
    tenant, identities, all_secured, _ = SCOPES[name]
    return AccessScope(tenant_prefix + tenant, identities=identities, all_secured=all_secured)


@pytest.mark.parametrize(("scope", "node", "visible"), CASES)
def test_the_rule(scope: str, node: str, visible: bool) -> None:
    tenant, secured, acl = NODES[node]
    assert scope_of(scope).may_see(tenant, secured, acl) is visible


@pytest.mark.parametrize("scope", list(SCOPES))
def test_sql_translator(scope: str) -> None:
    db = sqlite3.connect(":memory:")
    db.execute("CREATE TABLE nodes (node_id TEXT, tenant_id TEXT, secured INTEGER, acl TEXT)")
    db.executemany(
        "INSERT INTO nodes VALUES (?, ?, ?, ?)",
        [(node, tenant, int(secured), json.dumps(list(acl))) for node, (tenant, secured, acl) in NODES.items()],
    )
    rows = db.execute(f"SELECT node_id FROM nodes n WHERE {sql_visible('n')}", sql_params(scope_of(scope)))
    assert {row[0] for row in rows} == SCOPES[scope][3]


@pytest.mark.parametrize("scope", list(SCOPES))
def test_numpy_translator(scope: str) -> None:
    """The mask over each tenant's rows (the embedded store's in-memory vectors: a secured column and
    the rows naming each ACL entry)."""
    seen: set[str] = set()
    for tenant in sorted({tenant for tenant, _, _ in NODES.values()}):
        ids = [node for node, (node_tenant, _, _) in NODES.items() if node_tenant == tenant]
        secured = np.array([NODES[node][1] for node in ids], dtype=np.bool_)
        acl_index: dict[str, list[int]] = {}
        for row, node in enumerate(ids):
            for entry in NODES[node][2]:
                acl_index.setdefault(entry, []).append(row)
        index = {entry: np.array(rows, dtype=np.intp) for entry, rows in acl_index.items()}
        mask = numpy_visible(scope_of(scope), tenant, secured, index)
        seen |= {node for node, visible in zip(ids, mask.tolist(), strict=True) if visible}
    assert seen == SCOPES[scope][3]


@pytest.fixture(scope="module")
def servers(server_backend: StorageBackend) -> Iterator[tuple[Neo4jWeaviateBackend, Harness]]:
    """The table's nodes loaded once on the servers (each with a vector, in the tenant it names)."""
    backend = cast(Neo4jWeaviateBackend, server_backend)
    harness = Harness(backend, prefix=f"acc{uuid.uuid4().hex[:8]}-")
    nodes = [
        harness.node(tenant, node, secured=secured, acl=acl)
        for node, (tenant, secured, acl) in NODES.items()
        if node in LOADABLE
    ]
    harness.load(nodes, vectors=[harness.vector(node, [1.0, 0.0, 0.0, 0.0]) for node in nodes])
    try:
        yield backend, harness
    finally:
        backend.admin.drop_tenants(sorted(harness.tenants))


@pytest.mark.integration
@pytest.mark.parametrize("scope", list(SCOPES))
def test_cypher_translator(scope: str, servers: tuple[Neo4jWeaviateBackend, Harness]) -> None:
    """The predicate evaluated by Neo4j on the node attributes as maps (nothing is stored)."""
    backend, _ = servers
    rows = [
        {"nodeId": node, "tenantId": tenant, "secured": secured, "acl": list(acl)}
        for node, (tenant, secured, acl) in NODES.items()
    ]
    query = "UNWIND $rows AS n WITH n WHERE " + cypher_visible("n") + " RETURN n.nodeId AS nodeId"
    found = backend.neo4j.read(query, {**cypher_params(scope_of(scope)), "rows": rows})
    assert {record["nodeId"] for record in found} == SCOPES[scope][3]


@pytest.mark.integration
@pytest.mark.parametrize("scope", list(SCOPES))
def test_weaviate_translator(scope: str, servers: tuple[Neo4jWeaviateBackend, Harness]) -> None:
    """The filter evaluated by Weaviate in the scope's Weaviate tenant, without the re-check."""
    backend, harness = servers
    access = scope_of(scope, harness.prefix)
    generation = backend.generations.current_generation(access.tenant_id)
    found: set[str] = set()
    if generation is not None:
        where = weaviate_visible(access)
        request = search_request(
            collection=collection_name(WORK),
            tenant=tenant_name(access.tenant_id, generation),
            limit=100,
            properties=search_get_pb2.PropertiesRequest(non_ref_properties=["nodeId"]),
            **({} if where is None else {"filters": where}),
        )
        (reply,) = backend.weaviate.grpc_search.search([request])
        found = {obj.node_id for obj in found_objects(reply)}
    assert found == SCOPES[scope][3] & LOADABLE
