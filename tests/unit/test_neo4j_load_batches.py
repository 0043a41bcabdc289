"""A load's statements are bounded in rows and in characters, so rows with large values (1,000-entry
ACLs, vector copies) stay within the Neo4j server's transaction memory
(docs/internals/neo4j-weaviate-backend.md, "Load batches")."""

from __future__ import annotations

from brain_graph.stores.base import EdgeRecord, NodeRecord, VectorRecord
from brain_graph.stores.neo4j_weaviate.neo4j.generations import (
    LOAD_BATCH,
    LOAD_BATCH_CHARS,
    copy_lanes,
    edge_lanes,
    load_batches,
    node_lanes,
    row_chars,
)
from brain_graph.stores.neo4j_weaviate.neo4j.vector_copies import copy_properties, latest, merged


def test_batches_keep_the_order_and_both_bounds() -> None:
    sizes = [3, 3, 3, 9, 1, 1, 1, 1, 20, 2]
    batches = list(load_batches(list(range(len(sizes))), sizes.__getitem__, max_rows=3, max_chars=10))
    assert [item for batch in batches for item in batch] == list(range(len(sizes)))
    assert batches == [[0, 1, 2], [3, 4], [5, 6, 7], [8], [9]]  # [8] alone: one row larger than the bound
    assert list(load_batches([], len)) == []


def test_row_chars_counts_strings_lists_bytes_and_maps() -> None:
    assert row_chars(["abc", None, True, ["xy", "z"], 7]) == 3 + 8 + 8 + (2 + 1 + 8) + 8
    assert row_chars([b"\x00" * 2048, {"vector:p": b"\x00" * 4, "acl:p": ["a"], "secured:p": None}]) == (
        2048 + (8 + 8 + 4) + (5 + 8 + 1 + 8) + (9 + 8 + 8)
    )


def _node(index: int, acl_entries: int) -> NodeRecord:
    acl = tuple(f"group:g{entry:04d}" for entry in range(acl_entries))
    return NodeRecord("t", f"n{index:05d}", "cdm.doc", None, f"title {index}", None, secured=bool(acl), acl=acl)


def test_nodes_with_long_acls_are_written_in_several_statements() -> None:
    nodes = [_node(index, 1_000) for index in range(1_200)]  # about 12 MB of ACL entries
    statements = [statement for lane in node_lanes(nodes, {"t": 3}, fresh={"t"}) for statement in lane]
    assert len(statements) > 1
    written = [row[0] for _, params in statements for row in params["rows"]]
    assert written == [node.node_id for node in nodes]
    for _, params in statements:
        assert params["generation"] == 3
        assert sum(row_chars(row) for row in params["rows"]) <= LOAD_BATCH_CHARS


def test_small_nodes_and_edges_keep_the_row_batches() -> None:
    nodes = [_node(index, 0) for index in range(LOAD_BATCH + 10)]
    lanes = [list(lane) for lane in node_lanes(nodes, {"t": 1}, fresh=set())]
    assert [len(params["rows"]) for lane in lanes for _, params in lane] == [LOAD_BATCH, 10]
    edges = [EdgeRecord("t", "REFERENCES", f"n{index:05d}", "n00000") for index in range(1, LOAD_BATCH + 2)]
    edge_statements = [statement for lane in edge_lanes(edges, {"t": 1}, fresh=set()) for statement in lane]
    assert [len(params["rows"]) for _, params in edge_statements] == [LOAD_BATCH, 1]


def _vector(node_id: str, profile_id: str, value: float) -> VectorRecord:
    return VectorRecord("t", node_id, profile_id, None, False, (), [value] * 512)


def test_the_copies_of_a_loaded_node_are_written_with_it_and_count_in_the_bound() -> None:
    nodes = [_node(index, 0) for index in range(6_000)]
    vectors = [_vector(node.node_id, "p", 0.5) for node in nodes] + [_vector("n00001", "q", 0.25)]
    copies = latest(vectors)
    statements = [statement for lane in node_lanes(nodes, {"t": 2}, {"t"}, copies) for statement in lane]
    rows = [row for _, params in statements for row in params["rows"]]
    assert [row[0] for row in rows] == [node.node_id for node in nodes]
    assert rows[1][-1] == {**merged([vectors[1]]), **merged([vectors[-1]])}  # both profiles
    assert set(rows[1][-1]) == {*copy_properties("p"), *copy_properties("q")}
    assert all(row[-1] == merged([vector]) for row, vector in zip(rows[2:], vectors[2:], strict=False))
    for _, params in statements:  # 2 KB of float32 bytes per node: cut by characters, not at 5,000 rows
        assert sum(row_chars(row) for row in params["rows"]) <= LOAD_BATCH_CHARS
    assert len(statements) == 2
    assert len(statements[0][1]["rows"]) < LOAD_BATCH


def test_only_vectors_of_nodes_not_in_the_load_get_a_statement_of_their_own() -> None:
    nodes = [_node(0, 0)]
    vectors = [_vector("n00000", "p", 0.5), _vector("stored", "p", 0.25)]
    copies = latest(vectors)
    rows = [row for lane in node_lanes(nodes, {"t": 1}, set(), copies) for _, params in lane for row in params["rows"]]
    assert rows[0][-1] == merged([vectors[0]])
    other = [row for lane in node_lanes([_node(7, 0)], {"t": 1}, set(), copies) for _, p in lane for row in p["rows"]]
    assert [row[-1] for row in other] == [{}]  # no vector: no copy
    written = {(node.tenant_id, node.node_id) for node in nodes}
    left = {key: found for key, found in copies.items() if key not in written}
    statements = [statement for lane in copy_lanes(left, {"t": 1}) for statement in lane]
    assert [row[0] for _, params in statements for row in params["rows"]] == ["stored"]
    assert statements[0][1]["rows"][0][1] == merged([vectors[1]])
