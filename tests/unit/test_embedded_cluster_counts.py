"""A cluster's visible members are counted once per read, not once per member asked about (20 hits in
one cluster: one count, not 20). Measured in SQLite virtual machine steps, not time."""

from __future__ import annotations

import json
from pathlib import Path

from brain_graph.core.security import AccessScope
from brain_graph.core.vocabulary import CLUSTER, IN_CLUSTER
from brain_graph.stores.access import sql_params
from brain_graph.stores.base import EdgeRecord, NodeRecord
from brain_graph.stores.embedded import EmbeddedStore
from brain_graph.stores.embedded.store import CLUSTER_MEMBERSHIPS
from tests.helpers import sqlite_steps

MEMBERS = 2_000


def _store(path: Path) -> EmbeddedStore:
    """Tenant t: cluster ``big`` of :data:`MEMBERS` members (every tenth secured, for ``group:ops``) and
    cluster ``small`` of members 0 and 1."""
    store = EmbeddedStore(path)
    nodes = [NodeRecord("t", "big", CLUSTER, None, "big", None), NodeRecord("t", "small", CLUSTER, None, "small", None)]
    nodes += [
        NodeRecord(
            "t", f"m{index:05d}", "cdm.doc", None, "m", None, index % 10 == 0, ("group:ops",) * (index % 10 == 0)
        )
        for index in range(MEMBERS)
    ]
    edges = [EdgeRecord("t", IN_CLUSTER, f"m{index:05d}", "big") for index in range(MEMBERS)]
    edges += [EdgeRecord("t", IN_CLUSTER, f"m{index:05d}", "small") for index in range(2)]
    store.load(nodes, edges, [], [], replace=True)
    return store


def _steps(path: Path, members: list[str]) -> int:
    """SQLite virtual machine steps (in hundreds) of :data:`CLUSTER_MEMBERSHIPS` for ``members``."""
    params = {
        **sql_params(AccessScope("t")),
        "ids": json.dumps(members),
        "membership": IN_CLUSTER,
        "cluster_type": CLUSTER,
    }
    steps, rows = sqlite_steps(path, CLUSTER_MEMBERSHIPS, params)
    visible = [member for member in members if int(member[1:]) % 10]  # every tenth is secured
    assert len(rows) == len(visible) + ("m00001" in members)  # each visible member of big, and m00001 of small
    return steps


def test_each_cluster_is_counted_once(tmp_path: Path) -> None:
    store = _store(tmp_path / "store.sqlite3")
    one = _steps(store.path, ["m00001"])
    twenty = _steps(store.path, [f"m{index:05d}" for index in range(1, 21)])
    assert one > 0
    assert twenty < 2 * one  # not twenty counts of the cluster


def test_sizes_count_the_visible_members(tmp_path: Path) -> None:
    store = _store(tmp_path / "store.sqlite3")
    ids = ["m00000", "m00001", "m00002"]
    public = store.cluster_memberships(ids, scope=AccessScope("t"))
    assert [(m.cluster_id, m.member_id, m.cluster_size) for m in public] == [
        ("big", "m00001", MEMBERS - MEMBERS // 10),
        ("big", "m00002", MEMBERS - MEMBERS // 10),
        ("small", "m00001", 1),
    ]  # m00000 is secured: its clusters are not read for a scope that cannot see it
    ops = store.cluster_memberships(ids, scope=AccessScope("t", identities=frozenset({"group:ops"})))
    assert {(m.cluster_id, m.cluster_size) for m in ops} == {("big", MEMBERS), ("small", 2)}
    assert all(m.cluster is not None for m in ops)
