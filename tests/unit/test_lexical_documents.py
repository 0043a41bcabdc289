"""The lexical documents the indexer stores: each vector's own node id and embedded text, so that a
lexical search finds a node by its own words; a vector stored without one is re-embedded once."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from brain_graph.core import bm25
from brain_graph.core.filters import SeedFilter
from brain_graph.core.security import AccessScope
from brain_graph.embedding.profiles import profile_text
from brain_graph.indexing.changes import vector_changes
from brain_graph.indexing.dataset import Dataset
from brain_graph.indexing.report import IndexReport
from brain_graph.stores.base import LexicalQuery, NodeRecord, VectorState, node_facets
from tests.helpers import SMALL_GRAPH, make_store


def stored_documents(path: Path) -> dict[tuple[str, str, str], str]:
    with sqlite3.connect(path) as db:
        rows = db.execute("SELECT tenant_id, profile_id, node_id, lexical FROM vectors").fetchall()
    return {(tenant, profile, node): lexical for tenant, profile, node, lexical in rows}


def test_each_vector_stores_its_own_node_id_and_embedded_text(tmp_path: Path) -> None:
    services = make_store(tmp_path, SMALL_GRAPH)
    records = {(n.tenant_id, n.node_id): n for n in Dataset.model_validate(SMALL_GRAPH).node_records()}
    documents = stored_documents(tmp_path / "store.sqlite3")
    assert len(documents) > 3
    for (tenant, profile_id, node_id), document in documents.items():
        text, _ = profile_text(records[(tenant, node_id)], services.profiles.get(profile_id))
        assert document == bm25.lexical_document(node_id, text)


def test_a_lexical_search_finds_a_node_by_its_own_words(tmp_path: Path) -> None:
    services = make_store(tmp_path, SMALL_GRAPH)
    scope = AccessScope("t1")
    query = LexicalQuery("cdm.work.summary", bm25.query_terms("invoices CSV"))
    hits = services.backend.vector_index.lexical([query], scope=scope, seed_filter=SeedFilter(), top_k=3)
    assert [hit.node_id for hit in hits] == ["w3"]


def node(node_id: str, text: str) -> NodeRecord:
    return NodeRecord("t1", node_id, "cdm.work_item", "P", None, None, text={"summary": text})


def test_a_vector_without_a_lexical_document_is_embedded_again(tmp_path: Path) -> None:
    services = make_store(tmp_path, {"nodes": [], "edges": []})
    registry = services.profiles
    profile = registry.get("cdm.work.summary")
    nodes = [node("a1", "alpha words"), node("b1", "beta words")]
    first = vector_changes(nodes, profile, registry, {}, full=False, report=IndexReport())
    hashes = {record.node_id: record.content_hash for record in first.upsert_vectors}
    facets = node_facets(nodes[0])  # both nodes' (same type, no namespace, tags or time)
    states = {
        "a1": VectorState("a1", hashes["a1"], "P", False, (), lexical=True, facets=facets),
        "b1": VectorState("b1", hashes["b1"], "P", False, (), lexical=False, facets=facets),
    }
    report = IndexReport()
    again = vector_changes(nodes, profile, registry, states, full=False, report=report)
    assert [record.node_id for record in again.upsert_vectors] == ["b1"]
    assert again.upsert_vectors[0].lexical == bm25.lexical_document("b1", "beta words")
    assert (report.unchanged, report.embedded) == (1, 1)


def test_a_text_without_terms_is_current_without_a_lexical_document(tmp_path: Path) -> None:
    services = make_store(tmp_path, {"nodes": [], "edges": []})
    registry = services.profiles
    profile = registry.get("cdm.work.summary")
    nodes = [NodeRecord("t1", "--", "cdm.work_item", "P", None, None, text={"summary": "!!!"})]
    first = vector_changes(nodes, profile, registry, {}, full=False, report=IndexReport())
    assert [record.lexical for record in first.upsert_vectors] == [""]
    state = VectorState(
        "--", first.upsert_vectors[0].content_hash, "P", False, (), lexical=False, facets=node_facets(nodes[0])
    )
    report = IndexReport()
    again = vector_changes(nodes, profile, registry, {"--": state}, full=False, report=report)
    assert not again.upsert_vectors
    assert report.unchanged == 1
