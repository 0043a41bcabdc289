"""``check_load`` refuses, before any write, what a backend could refuse or store wrongly."""

from __future__ import annotations

import re

import pytest

from brain_graph.core.errors import DatasetError
from brain_graph.core.filters import NodeFacets
from brain_graph.stores.base import NodeRecord, ProfileIndexInfo, VectorRecord
from brain_graph.stores.write_checks import check_load

PROFILE = ProfileIndexInfo("p", "embedder", 2)
NODE = NodeRecord("t", "n", "cdm.doc", None, "title", None)


def vector(values: list[float], **changes: object) -> VectorRecord:
    fields: dict[str, object] = {
        "tenant_id": "t",
        "node_id": "n",
        "profile_id": "p",
        "project_key": None,
        "secured": False,
        "acl": (),
        "vector": values,
    }
    return VectorRecord(**(fields | changes))  # type: ignore[arg-type]


def test_a_valid_load_passes() -> None:
    check_load([NODE], [], [vector([0.5, 1e38])], [PROFILE])
    facets = NodeFacets("cdm.doc", "docs", ("a", "b"), -(10**15))
    check_load([NODE], [], [vector([0.5, 1.0], facets=facets)], [PROFILE])


@pytest.mark.parametrize(
    ("vectors", "profiles", "message"),
    [
        ([vector([1e39, 0.0])], [PROFILE], "not a finite float32"),
        ([vector([float("nan"), 0.0])], [PROFILE], "not a finite float32"),
        ([vector([1.0])], [PROFILE], "dimension 1"),
        ([vector([1.0, 0.0], acl=("alice",))], [PROFILE], "acl"),
        ([vector([1.0, 0.0], tenant_id="t\n")], [PROFILE], "tenantId"),
        ([vector([1.0, 0.0], profile_id="q")], [PROFILE], "without profile metadata"),
        ([vector([1.0, 0.0], facets=NodeFacets(updated_at=10**20))], [PROFILE], "facets must be a time"),
        ([vector([1.0, 0.0], facets=NodeFacets(tags=("a\nb",)))], [PROFILE], "entry 'a.nb' must not contain"),
        ([vector([1.0, 0.0], facets=NodeFacets(namespace=" "))], [PROFILE], "facets must not be blank"),
        ([vector([1.0, 0.0], facets=NodeFacets(node_type="x\u200b"))], [PROFILE], "facets"),
        ([], [PROFILE, PROFILE], "given twice"),
        ([], [ProfileIndexInfo("p", "embedder", 0)], "must be a positive integer"),
        ([], [ProfileIndexInfo("p", "embedder", 2.0)], r"dimension 2\.0; it must be a positive integer"),  # type: ignore[arg-type]
        ([], [ProfileIndexInfo("p", "embedder", float("inf"))], "dimension inf"),  # type: ignore[arg-type]
        ([], [ProfileIndexInfo("p", "embedder", True)], "dimension True"),
        ([], [ProfileIndexInfo("p", b"embedder", 2)], "embedder name must be a string"),  # type: ignore[arg-type]
        ([], [ProfileIndexInfo("p", "", 2)], "embedder name is empty"),
    ],
)
def test_refused_before_writing(vectors: list[VectorRecord], profiles: list[ProfileIndexInfo], message: str) -> None:
    with pytest.raises(DatasetError, match=message):
        check_load([NODE], [], vectors, profiles)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"title": b"a title"}, "title must be a string (got bytes)"),
        ({"url": b"https://example.test/"}, "url must be a string (got bytes)"),
        ({"node_id": b"n"}, "id must be a string (got bytes)"),
        ({"tenant_id": 7}, "tenantId must be a string (got int)"),
        ({"node_type": None}, "nodeType must be a string (got NoneType)"),
        ({"project_key": b"P"}, "projectKey must be a string (got bytes)"),
        ({"secured": "no"}, "secured must be true or false (got str)"),
        ({"secured": 1}, "secured must be true or false (got int)"),
    ],
)
def test_a_field_that_is_not_a_string_is_refused(changes: dict[str, object], message: str) -> None:
    """``bytes`` would be stored as a BLOB (ASCII bytes passed the Unicode check before)."""
    node = NodeRecord(
        **(
            {"tenant_id": "t", "node_id": "n", "node_type": "cdm.doc", "project_key": None, "title": "t", "url": None}
            | changes
        )
    )  # type: ignore[arg-type]
    with pytest.raises(DatasetError, match=re.escape(message)):
        check_load([node], [], [], [])


def test_an_edge_type_or_vector_flag_of_another_type_is_refused() -> None:
    from brain_graph.stores.base import EdgeRecord

    nodes = [NODE, NodeRecord("t", "m", "cdm.doc", None, "title", None)]
    with pytest.raises(DatasetError, match=re.escape("edgeType must be a string (got bytes)")):
        check_load(nodes, [EdgeRecord("t", b"REFERENCES", "n", "m")], [], [])  # type: ignore[arg-type]
    with pytest.raises(DatasetError, match=re.escape("secured must be true or false (got int)")):
        check_load(nodes, [], [vector([1.0, 0.0], secured=0)], [PROFILE])


def test_a_change_is_checked_like_a_load_plus_its_deletes() -> None:
    from brain_graph.stores.base import ChangeSet, EdgeRecord, NodeKey
    from brain_graph.stores.write_checks import check_changes

    check_changes(ChangeSet(upsert_nodes=[NODE], delete_nodes=[NodeKey("t", "other")]))
    with pytest.raises(DatasetError, match="both written and deleted"):
        check_changes(ChangeSet(upsert_nodes=[NODE], delete_nodes=[NodeKey("t", "n")]))
    with pytest.raises(DatasetError, match="deleted edge"):
        check_changes(ChangeSet(delete_edges=[EdgeRecord("t", "not-a-type", "a", "b")]))
    with pytest.raises(DatasetError, match="deleted node"):
        check_changes(ChangeSet(delete_nodes=[NodeKey("t", "bad\nid")]))


def test_each_distinct_acl_entry_is_parsed_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Nodes sharing ACL entries are checked without parsing the same entry again."""
    from brain_graph.stores import write_checks

    parsed: list[object] = []
    original = write_checks.parse_acl_entry

    def counting(entry: object) -> object:
        parsed.append(entry)
        return original(entry)

    monkeypatch.setattr(write_checks, "parse_acl_entry", counting)
    write_checks._cached_entry_problem.cache_clear()
    acl = tuple(f"group:g{index}" for index in range(50))
    nodes = [NodeRecord("t", f"n{index}", "cdm.doc", None, "title", None, True, acl) for index in range(40)]
    check_load(nodes, [], [], [])
    assert sorted(parsed) == sorted(acl)


@pytest.mark.parametrize(
    ("acl", "problem"),
    [
        (("group:ok", "alice"), "acl: ACL entry 'alice' is neither 'user:<id>' nor 'group:<name>'"),
        (("group:ok", 7), "acl: ACL entry '7' is neither 'user:<id>' nor 'group:<name>'"),
        (("group:ok", ["group:x"]), "acl: ACL entry \"['group:x']\" is neither 'user:<id>' nor 'group:<name>'"),
    ],
)
def test_a_bad_acl_entry_is_refused_cached_or_not(acl: tuple[object, ...], problem: str) -> None:
    node = NodeRecord("t", "n", "cdm.doc", None, "title", None, True, acl)  # type: ignore[arg-type]
    for _ in range(2):  # the second time from the cache
        with pytest.raises(DatasetError, match=problem.replace("[", r"\[").replace("]", r"\]")):
            check_load([node], [], [], [])
