"""PassageSource.get_passage_heads and SearchReads.context read what passages need of long texts, and
give what the whole texts give (brain_graph.core.passage_heads), on every backend."""

from __future__ import annotations

from brain_graph.core.passage_heads import HEAD_CHARS, field_heads
from brain_graph.core.vocabulary import CODE_FILE, DOC, WORK_ITEM
from brain_graph.stores.base import ContextRequest
from tests.conformance.conftest import Harness

LONG = "word  refresh\n\n\n" * HEAD_CHARS  # normalised shorter than raw, still longer than a head


def test_passage_heads_are_the_heads_of_the_texts(harness: Harness) -> None:
    nodes = [
        harness.node("t1", "doc", DOC, text={"body": LONG, "summary": "not a doc's field"}),
        harness.node("t1", "item", WORK_ITEM, text={"summary": LONG, "description": "short  one"}),
        harness.node("t1", "code", CODE_FILE, text={"summary": "s", "body": "    ```x```\n" * HEAD_CHARS}),
        harness.node("t1", "short", WORK_ITEM, text={"summary": "a  b\n\n\n\nc"}),
        harness.node("t1", "none", WORK_ITEM),
        harness.node("t1", "hidden", DOC, secured=True, acl=["user:x"], text={"body": LONG}),
    ]
    harness.load(nodes)
    scope = harness.scope("t1")
    ids = ["doc", "item", "code", "short", "none", "hidden", "missing"]
    source = harness.backend.passage_source
    expected = {node.node_id: field_heads(node.node_type, node.text) for node in nodes if node.node_id != "hidden"}
    assert source.get_passage_heads(ids, scope=scope) == expected
    assert len(expected["doc"]["body"].text) == HEAD_CHARS < expected["doc"]["body"].chars
    whole = {node.node_id: field_heads(node.node_type, node.text, head_chars=None) for node in nodes[:5]}
    assert source.get_passage_heads(ids, scope=scope, whole=True) == whole

    request = ContextRequest(known=[], new=ids, records=[], edge_types=[], members=[], ranked=ids, passages=4)
    context = harness.backend.search_reads.context(request, scope=scope)
    assert context.cited == ["doc", "item", "code", "short"]
    assert context.texts == {node_id: expected[node_id] for node_id in context.cited}
    whole_request = ContextRequest(
        known=[], new=ids, records=[], edge_types=[], members=[], ranked=ids, passages=4, whole_texts=True
    )
    assert harness.backend.search_reads.context(whole_request, scope=scope).texts == {
        node_id: whole[node_id] for node_id in context.cited
    }
