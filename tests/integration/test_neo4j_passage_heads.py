"""Neo4j sends the passage heads of a long text, not the text (docs/internals/passage-heads.md);
nodes without heads, or with heads of another encoding, are read from their text."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from brain_graph.core.passage_heads import HEAD_CHARS, field_heads
from brain_graph.core.security import AccessScope
from brain_graph.core.vocabulary import DOC
from brain_graph.stores.access import cypher_params
from brain_graph.stores.base import NodeRecord
from brain_graph.stores.neo4j_weaviate.backend import Neo4jWeaviateBackend
from brain_graph.stores.neo4j_weaviate.neo4j import cypher
from brain_graph.stores.neo4j_weaviate.neo4j.graph import heads_params
from tests.integration.servers import connect, unique_prefix

pytestmark = pytest.mark.integration

LONG = {"body": "refresh  token\n" * HEAD_CHARS}


@pytest.fixture
def loaded() -> Iterator[tuple[Neo4jWeaviateBackend, str]]:
    backend = connect()
    tenant = unique_prefix("heads") + "t"
    nodes = [
        NodeRecord(tenant, "long", DOC, None, "long", None, text=LONG),
        NodeRecord(tenant, "short", DOC, None, "short", None, text={"body": "a  b"}),
    ]
    backend.load(nodes, [], [], [], replace=True)
    try:
        yield backend, tenant
    finally:
        backend.drop_tenants([tenant])
        backend.close()


def sources(backend: Neo4jWeaviateBackend, tenant: str, *, whole: bool) -> dict[str, list[object]]:
    params = {**cypher_params(AccessScope(tenant)), "nodeIds": ["long", "short"], **heads_params(whole)}
    return {row["source"][0]: row["source"] for row in backend.neo4j.read(cypher.GET_PASSAGE_HEADS, params)}


def test_the_heads_of_a_long_text_are_sent_instead_of_it(loaded: tuple[Neo4jWeaviateBackend, str]) -> None:
    backend, tenant = loaded
    sent = sources(backend, tenant, whole=False)
    _, _, heads, text = sent["long"]
    assert text is None
    assert isinstance(heads, str)
    assert len(heads) < 2 * HEAD_CHARS < len(LONG["body"])
    assert sent["short"][2] is None  # a short text is its own head
    assert sent["short"][3] is not None
    _, _, heads, text = sources(backend, tenant, whole=True)["long"]
    assert heads is None
    assert text is not None


def test_nodes_without_heads_or_with_heads_of_another_encoding_are_read_from_the_text(
    loaded: tuple[Neo4jWeaviateBackend, str],
) -> None:
    backend, tenant = loaded
    scope = AccessScope(tenant)
    expected = {"long": field_heads(DOC, LONG), "short": field_heads(DOC, {"body": "a  b"})}
    assert backend.graph_store.get_passage_heads(["long", "short"], scope=scope) == expected
    for change in ("REMOVE n.heads", "SET n.heads = 'heads0:{}'"):  # no heads; another encoding
        backend.neo4j.write(
            lambda session, change=change: backend.neo4j.commit(
                session,
                "MATCH (n:BrainNode {tenantId: $tenantId, nodeId: 'long'}) " + change,
                {"tenantId": tenant},
            )
        )
        assert backend.graph_store.get_passage_heads(["long", "short"], scope=scope) == expected
