"""The embedded store's in-memory vector search (:mod:`brain_graph.stores.embedded.vectors`): exact
results equal to the reference formula row for row, the access rule as a mask, and the cache
(invalidation by a load from another store object or process, isolation, memory bound).

No timing here: speed is measured by ``benchmarks/search_latency.py``."""

from __future__ import annotations

import math
import random
import sqlite3
import subprocess
import sys
import textwrap
from array import array
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from brain_graph.core import bm25
from brain_graph.core.filters import NO_FILTER, NodeFacets, SeedFilter
from brain_graph.core.scoring import cosine, similarity_from_cosine
from brain_graph.core.security import AccessScope, Principal
from brain_graph.stores.base import ChangeSet, LexicalQuery, NodeRecord, ProfileIndexInfo, VectorQuery, VectorRecord
from brain_graph.stores.embedded import EmbeddedStore
from brain_graph.stores.embedded.vectors import (
    EXACT_BELOW,
    VectorCache,
    candidate_margin,
    exact_cosines,
    load_matrix,
    sums_of_squares,
)

DIM = 16
WORK = "work"
DOC = "doc"
EMBEDDER = "test-embedder"
PROFILES = [ProfileIndexInfo(WORK, EMBEDDER, DIM), ProfileIndexInfo(DOC, EMBEDDER, DIM)]
ACL_CHOICES = [(), ("user:alice",), ("group:security",), ("user:bob", "group:ops"), ("user:alice", "group:sre")]
SCOPES = {
    "public": AccessScope("t1"),
    "empty-identities": AccessScope("t1", identities=frozenset()),
    "alice": AccessScope("t1", identities=Principal("alice").identities),
    "carol-security": AccessScope("t1", identities=Principal("carol", ("security", "ops")).identities),
    "service": AccessScope("t1", all_secured=True),
    "other-tenant": AccessScope("t2", identities=Principal("alice").identities),
    "unknown-tenant": AccessScope("t9", all_secured=True),
}


def reference(
    vectors: Sequence[VectorRecord],
    query: Sequence[float],
    *,
    profile: str,
    scope: AccessScope,
    project_key: str | None,
    top_k: int,
) -> list[tuple[str, float]]:
    """The search as the store protocol defines it: every visible row scored with the reference formula
    over the stored float32 values, ordered by score then node id."""
    hits = [
        (v.node_id, similarity_from_cosine(cosine(query, array("f", v.vector))))
        for v in vectors
        if v.profile_id == profile
        and scope.may_see(v.tenant_id, v.secured, v.acl)
        and (project_key is None or v.project_key == project_key)
    ]
    return sorted(hits, key=lambda hit: (-hit[1], hit[0]))[:top_k]


def searched(store: EmbeddedStore, query: Sequence[float], **kwargs: object) -> list[tuple[str, float]]:
    profile = str(kwargs.pop("profile", WORK))
    scope = kwargs.pop("scope", SCOPES["public"])
    assert isinstance(scope, AccessScope)
    project = kwargs.pop("project_key", None)
    assert project is None or isinstance(project, str)
    seed_filter = kwargs.pop("seed_filter", None) or SeedFilter(project_key=project)
    assert isinstance(seed_filter, SeedFilter)
    hits = store.query(
        [VectorQuery(profile, list(query), EMBEDDER)],
        scope=scope,
        seed_filter=seed_filter,
        **kwargs,
    )  # type: ignore[arg-type]
    assert all(hit.profile_id == profile for hit in hits)
    return [(hit.node_id, hit.score) for hit in hits]


def statements(
    store: EmbeddedStore, queries: Sequence[VectorQuery], scope: AccessScope, seed_filter: SeedFilter = NO_FILTER
) -> int:
    """SQLite statements one vector query of ``store`` sends (top 5, no filter unless ``seed_filter``)."""
    before = store.round_trips()["sqlite"]
    store.query(queries, scope=scope, seed_filter=seed_filter, top_k=5)
    return store.round_trips()["sqlite"] - before


def records(vectors: Sequence[VectorRecord]) -> list[NodeRecord]:
    seen: dict[tuple[str, str], NodeRecord] = {}
    for v in vectors:
        seen.setdefault(
            (v.tenant_id, v.node_id),
            NodeRecord(v.tenant_id, v.node_id, "cdm.work_item", v.project_key, v.node_id, None, v.secured, v.acl),
        )
    return list(seen.values())


def load(store: EmbeddedStore, vectors: Sequence[VectorRecord], *, replace: bool = True) -> None:
    store.load(records(vectors), [], vectors, PROFILES, replace=replace)


def tricky_table(rng: random.Random, tenant: str = "t1", rows: int = 400, profile: str = WORK) -> list[VectorRecord]:
    """Rows around a few directions (near-ties, exact duplicates, one-ulp neighbours), opposite and
    orthogonal rows, zero, tiny and huge vectors; mixed projects (and none), secured rows with ACLs."""
    bases = [[rng.gauss(0, 1) for _ in range(DIM)] for _ in range(4)]
    out: list[VectorRecord] = []
    for i in range(rows):
        kind = i % 10
        base = bases[i % len(bases)]
        if kind in (0, 1):  # exact duplicates of a base
            vector = list(base)
        elif kind == 2:  # one float32 ulp away from a base, somewhere
            vector = list(base)
            j = rng.randrange(DIM)
            vector[j] = float(np.nextafter(np.float32(vector[j]), np.float32(np.inf)))
        elif kind == 3:  # scaled copies: the same cosine up to rounding
            vector = [x * rng.choice((0.5, 3.0, 1e-3, 7.25)) for x in base]
        elif kind == 4:
            vector = [-x for x in base]
        elif kind == 5:  # near-ties: tiny noise
            vector = [x + rng.gauss(0, 1e-6) for x in base]
        elif kind == 6 and i % 40 == 6:  # rows the approximate pass leaves to the exact one
            vector = rng.choice(([0.0] * DIM, [x * 1e-20 for x in base], [x * 1e20 for x in base]))
        else:
            vector = [rng.gauss(0, 1) for _ in range(DIM)]
        secured = rng.random() < 0.3
        acl = rng.choice(ACL_CHOICES) if secured else ()
        project = rng.choice(("P", "Q", "R", None))
        out.append(VectorRecord(tenant, f"n{rng.randrange(10**6):06d}-{i:04d}", profile, project, secured, acl, vector))
    return out


def test_exact_cosines_are_bit_identical_to_the_reference() -> None:
    rng = random.Random(3)
    for dimension in (1, 3, 16, 512):
        rows = [array("f", [rng.gauss(0, 1) * 10 ** rng.randint(-8, 8) for _ in range(dimension)]) for _ in range(40)]
        rows += [array("f", [0.0] * dimension)]
        matrix = np.asarray(rows, dtype=np.float32).reshape(len(rows), dimension)
        for _ in range(20):
            query = [rng.gauss(0, 1) * 10 ** rng.randint(-8, 8) for _ in range(dimension)]
            q = np.asarray(query)
            got = exact_cosines(q, matrix, float(np.add.accumulate(q * q)[-1]), sums_of_squares(matrix))
            assert got == [cosine(query, row) for row in rows]
        zero = np.zeros(dimension)
        assert exact_cosines(zero, matrix, 0.0, sums_of_squares(matrix)) == [0.0] * len(rows)


def test_the_candidate_margin_covers_float32_error_and_score_rounding() -> None:
    assert candidate_margin(512) > 2 * 512 * 2.0**-24 + 2e-6
    assert candidate_margin(512) < 1e-4  # a window, not a full scan


def test_search_equals_the_reference_row_for_row(tmp_path: Path) -> None:
    rng = random.Random(11)
    vectors = tricky_table(rng) + tricky_table(rng, "t2", 100) + tricky_table(rng, profile=DOC, rows=120)
    store = EmbeddedStore(tmp_path / "store.sqlite3")
    store.vector_cache = VectorCache(64 * 2**20)
    load(store, vectors)
    base_rows = [v.vector for v in vectors[:4]]
    queries = [*base_rows, [-x for x in base_rows[0]], [1.0] + [0.0] * (DIM - 1), [0.0] * DIM]
    queries += [[x * 1e-25 for x in base_rows[1]], [rng.gauss(0, 1) for _ in range(DIM)]]
    for query in queries:
        for scope in SCOPES.values():
            for project_key in (None, "P", "R", "missing"):
                for top_k in (1, 5, 20, 300):
                    for profile in (WORK, DOC):
                        args = {"profile": profile, "scope": scope, "project_key": project_key, "top_k": top_k}
                        assert searched(store, query, **args) == reference(vectors, query, **args), args


def test_exact_ties_beyond_any_window_break_by_node_id(tmp_path: Path) -> None:
    rng = random.Random(5)
    tied = [f"tie{i:03d}" for i in rng.sample(range(300), 300)]

    def row(node_id: str, *head: float) -> VectorRecord:
        return VectorRecord("t1", node_id, WORK, "P", False, (), [*head] + [0.0] * (DIM - len(head)))

    vectors = [row(node_id, 2.0, 2.0) for node_id in tied]
    vectors += [row(f"best{i}", 3.0, 0.1 * i) for i in (0, 1)]
    vectors += [row(f"low{i:02d}", 0.0, 1.0, 1.0) for i in range(80)]
    store = EmbeddedStore(tmp_path / "store.sqlite3")
    store.vector_cache = VectorCache(2**20)
    load(store, vectors)
    query = [1.0] + [0.0] * (DIM - 1)
    for top_k in (3, 5, 150, 302, 400):
        got = searched(store, query, project_key=None, top_k=top_k)
        assert got == reference(vectors, query, profile=WORK, scope=SCOPES["public"], project_key=None, top_k=top_k)
    assert [node for node, _ in searched(store, query, project_key="P", top_k=5)] == [
        "best0",
        "best1",
        "tie000",
        "tie001",
        "tie002",
    ]
    assert len(vectors) > 5 + EXACT_BELOW  # the approximate pass ran


def test_the_mask_is_the_access_rule_row_by_row(tmp_path: Path) -> None:
    rng = random.Random(8)
    vectors = tricky_table(rng, "t1", 300) + tricky_table(rng, "t2", 50)
    store = EmbeddedStore(tmp_path / "store.sqlite3")
    load(store, vectors)
    by_id = {(v.tenant_id, v.node_id): v for v in vectors}
    scopes = [*SCOPES.values(), AccessScope("t1", identities=frozenset({"user:bob", "group:sre", "group:none"}))]
    with store._read() as db:
        assert db is not None
        for tenant in ("t1", "t2", "t9"):
            matrix = load_matrix(lambda sql, params: db.execute(sql, params).fetchall(), tenant, WORK, DIM)
            rows = [by_id[(tenant, node_id)] for node_id in matrix.node_ids]
            assert len(rows) == sum(v.tenant_id == tenant for v in vectors)
            for scope in scopes:
                expected = [scope.may_see(row.tenant_id, row.secured, row.acl) for row in rows]
                assert matrix.visible(scope).tolist() == expected


def test_a_load_by_another_store_object_is_seen(tmp_path: Path) -> None:
    path = tmp_path / "store.sqlite3"
    reader, writer = EmbeddedStore(path), EmbeddedStore(path)
    reader.vector_cache = VectorCache(2**20)  # a private cache: only the data version can tell
    rng = random.Random(1)
    first = tricky_table(rng, rows=120)
    load(writer, first)
    query = first[0].vector
    args = {"profile": WORK, "scope": SCOPES["service"], "project_key": None, "top_k": 10}
    assert searched(reader, query, **args) == reference(first, query, **args)
    assert len(reader.vector_cache) == 1
    second = tricky_table(rng, rows=150)
    load(writer, second)
    assert searched(reader, query, **args) == reference(second, query, **args)
    assert len(reader.vector_cache) == 1  # the matrix of the previous data version is gone
    writer.drop_tenants(["t1"])
    assert searched(reader, query, **args) == []


def test_a_load_by_another_process_is_seen(tmp_path: Path) -> None:
    path = tmp_path / "store.sqlite3"
    store = EmbeddedStore(path)
    store.vector_cache = VectorCache(2**20)
    before = [VectorRecord("t1", "a", WORK, "P", False, (), [1.0] + [0.0] * (DIM - 1))]
    load(store, before)
    query = [1.0] + [0.0] * (DIM - 1)
    assert searched(store, query, project_key=None, top_k=5) == [("a", 1.0)]
    script = textwrap.dedent(
        f"""
        from brain_graph.stores.base import NodeRecord, ProfileIndexInfo, VectorRecord
        from brain_graph.stores.embedded import EmbeddedStore
        node = NodeRecord("t1", "b", "cdm.work_item", "P", "b", None)
        vector = VectorRecord("t1", "b", {WORK!r}, "P", False, (), [1.0] + [0.0] * {DIM - 1})
        profiles = [ProfileIndexInfo({WORK!r}, {EMBEDDER!r}, {DIM}), ProfileIndexInfo({DOC!r}, {EMBEDDER!r}, {DIM})]
        EmbeddedStore({str(path)!r}).load([node], [], [vector], profiles, replace=False)
        """
    )
    subprocess.run([sys.executable, "-c", script], check=True, cwd=Path(__file__).parent.parent)
    assert searched(store, query, project_key=None, top_k=5) == [("a", 1.0), ("b", 1.0)]


def test_tenants_and_profiles_are_isolated_in_one_cache(tmp_path: Path) -> None:
    one = [1.0] + [0.0] * (DIM - 1)
    two = [0.0, 1.0] + [0.0] * (DIM - 2)
    vectors = [
        VectorRecord("t1", "same", WORK, "P", False, (), one),
        VectorRecord("t2", "same", WORK, "P", False, (), two),
        VectorRecord("t1", "same", DOC, "P", False, (), two),
        VectorRecord("t1", "other", DOC, "P", False, (), one),
    ]
    store = EmbeddedStore(tmp_path / "store.sqlite3")
    store.vector_cache = VectorCache(2**20)
    load(store, vectors)
    for tenant, profile in (("t1", WORK), ("t2", WORK), ("t1", DOC), ("t2", DOC), ("t1", WORK)):
        scope = AccessScope(tenant)
        args = {"profile": profile, "scope": scope, "project_key": None, "top_k": 5}
        assert searched(store, one, **args) == reference(vectors, one, **args)
    assert len(store.vector_cache) == 4
    both = store.query(
        [VectorQuery(DOC, one, EMBEDDER), VectorQuery(WORK, one, EMBEDDER)],
        scope=AccessScope("t1"),
        seed_filter=SeedFilter(),
        top_k=1,
    )
    assert [(hit.profile_id, hit.node_id, hit.score) for hit in both] == [(DOC, "other", 1.0), (WORK, "same", 1.0)]


def test_a_profile_with_no_visible_rows(tmp_path: Path) -> None:
    rng = random.Random(2)
    secured = [
        VectorRecord("t1", f"s{i:03d}", WORK, "P", True, ("user:bob",), [rng.gauss(0, 1) for _ in range(DIM)])
        for i in range(100)
    ]
    store = EmbeddedStore(tmp_path / "store.sqlite3")
    store.vector_cache = VectorCache(2**20)
    load(store, secured)
    query = secured[0].vector
    for scope in ("public", "alice", "empty-identities", "other-tenant"):
        assert searched(store, query, scope=SCOPES[scope], project_key=None, top_k=10) == []
    assert searched(store, query, profile=DOC, scope=SCOPES["service"], project_key=None, top_k=10) == []
    bob = AccessScope("t1", identities=Principal("bob").identities)
    assert len(searched(store, query, scope=bob, project_key="P", top_k=10)) == 10
    assert searched(store, query, scope=bob, project_key="Q", top_k=10) == []


def test_memory_stays_within_the_budget(tmp_path: Path) -> None:
    rng = random.Random(4)
    vectors = tricky_table(rng, "t1", 200) + tricky_table(rng, "t2", 200)
    store = EmbeddedStore(tmp_path / "store.sqlite3")
    load(store, vectors)
    query = vectors[0].vector
    probe = VectorCache(2**30)
    store.vector_cache = probe
    searched(store, query, scope=SCOPES["public"], project_key=None, top_k=3)
    one_matrix = probe.nbytes
    assert 200 * 4 * DIM <= one_matrix < 200 * (4 * DIM + 200)

    store.vector_cache = VectorCache(one_matrix + one_matrix // 2)  # room for one matrix only
    for tenant in ("t1", "t2", "t1"):
        scope = AccessScope(tenant)
        args = {"profile": WORK, "scope": scope, "project_key": None, "top_k": 7}
        assert searched(store, query, **args) == reference(vectors, query, **args)
        assert len(store.vector_cache) == 1
        assert store.vector_cache.nbytes <= store.vector_cache.max_bytes

    store.vector_cache = VectorCache(0)  # nothing kept: every query reads its vectors, same results
    args = {"profile": WORK, "scope": SCOPES["alice"], "project_key": "P", "top_k": 7}
    assert searched(store, query, **args) == reference(vectors, query, **args)
    assert len(store.vector_cache) == 0


def test_a_cached_search_sends_two_statements(tmp_path: Path) -> None:
    rng = random.Random(6)
    store = EmbeddedStore(tmp_path / "store.sqlite3")
    store.vector_cache = VectorCache(2**20)
    vectors = tricky_table(rng, rows=80)
    load(store, vectors)
    queries = [VectorQuery(WORK, vectors[0].vector, EMBEDDER), VectorQuery(DOC, vectors[0].vector, EMBEDDER)]

    assert statements(store, queries, SCOPES["public"]) == 4  # profiles, data version, one read per profile
    assert statements(store, queries, SCOPES["public"]) == 2  # profiles, data version


def test_scores_match_the_reference_at_the_default_dimension(tmp_path: Path) -> None:
    """512 dimensions (the bundled embedder's), where float32 error is largest."""
    rng = random.Random(9)
    dimension = 512
    profiles = [ProfileIndexInfo(WORK, EMBEDDER, dimension)]
    base = [rng.gauss(0, 1) for _ in range(dimension)]
    vectors = [
        VectorRecord(
            "t1",
            f"n{i:04d}",
            WORK,
            None,
            False,
            (),
            [x + rng.gauss(0, 1e-4 if i % 3 else 1.0) for x in base],
        )
        for i in range(300)
    ]
    store = EmbeddedStore(tmp_path / "store.sqlite3")
    store.vector_cache = VectorCache(2**24)
    store.load(records(vectors), [], vectors, profiles, replace=True)
    for query in (base, vectors[5].vector, [rng.gauss(0, 1) for _ in range(dimension)]):
        for top_k in (1, 20, 150):
            args = {"profile": WORK, "scope": SCOPES["public"], "project_key": None, "top_k": top_k}
            assert searched(store, query, **args) == reference(vectors, query, **args)
    assert math.isfinite(candidate_margin(dimension))


def test_a_store_file_created_again_is_read_afresh(tmp_path: Path) -> None:
    path = tmp_path / "store.sqlite3"
    store = EmbeddedStore(path)
    query = [1.0] + [0.0] * (DIM - 1)
    load(store, [VectorRecord("t1", "a", WORK, "P", False, (), query)])
    assert searched(store, query, project_key=None, top_k=5) == [("a", 1.0)]
    assert [node.node_id for node in store.get_nodes(["a", "b"], scope=SCOPES["public"])] == ["a"]
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    load(EmbeddedStore(path), [VectorRecord("t1", "b", WORK, "P", False, (), query)])
    assert searched(store, query, project_key=None, top_k=5) == [("b", 1.0)]
    assert [node.node_id for node in store.get_nodes(["a", "b"], scope=SCOPES["public"])] == ["b"]
    store.close()
    assert searched(store, query, project_key=None, top_k=5) == [("b", 1.0)]


def test_concurrent_searches_return_what_one_at_a_time_does(tmp_path: Path) -> None:
    rng = random.Random(12)
    vectors = tricky_table(rng, "t1", 300) + tricky_table(rng, "t2", 200)
    load(EmbeddedStore(tmp_path / "store.sqlite3"), vectors)
    cases = [
        (vectors[i].vector, scope, project, top_k)
        for i in range(0, 40, 4)
        for scope in (SCOPES["public"], SCOPES["alice"], SCOPES["other-tenant"])
        for project, top_k in ((None, 20), ("Q", 3))
    ]
    expected = [
        reference(vectors, query, profile=WORK, scope=scope, project_key=project, top_k=top_k)
        for query, scope, project, top_k in cases
    ]
    store = EmbeddedStore(tmp_path / "store.sqlite3")
    store.vector_cache = VectorCache(2**22)  # cold: the threads race to load the same matrices
    with ThreadPoolExecutor(max_workers=6) as pool:
        got = list(
            pool.map(lambda case: searched(store, case[0], scope=case[1], project_key=case[2], top_k=case[3]), cases)
        )
    assert got == expected
    assert len(store.vector_cache) == 2


def test_a_write_to_one_tenant_keeps_the_other_tenants_matrices(tmp_path: Path) -> None:
    """Data versions are kept per tenant: a write to t1 (a load, a change, a drop) makes t1's next
    search read its vectors again and leaves t2's matrices cached; a newly recorded profile makes
    every search read again."""
    path = tmp_path / "store.sqlite3"
    reader, writer = EmbeddedStore(path), EmbeddedStore(path)
    reader.vector_cache = VectorCache(2**22)
    rng = random.Random(17)
    first, other = tricky_table(rng, "t1", 60), tricky_table(rng, "t2", 60)
    load(writer, first + other)
    query = first[0].vector
    scopes = {tenant: AccessScope(tenant, all_secured=True) for tenant in ("t1", "t2")}
    queries = [VectorQuery(WORK, list(query), EMBEDDER)]

    def read(tenant: str) -> int:
        return statements(reader, queries, scopes[tenant])

    assert (read("t1"), read("t2")) == (3, 3)  # profiles, versions, vectors
    assert (read("t1"), read("t2")) == (2, 2)  # cached
    changed = VectorRecord("t1", first[1].node_id, WORK, first[1].project_key, False, (), [-x for x in query])
    writer.apply(ChangeSet(upsert_nodes=records([changed]), upsert_vectors=[changed], profiles=PROFILES))
    assert (read("t2"), read("t1")) == (2, 3)  # only t1 is read again
    args = {"profile": WORK, "scope": scopes["t1"], "project_key": None, "top_k": 300}
    assert searched(reader, query, **args) == reference(
        [*(v for v in first if v.node_id != changed.node_id), changed], query, **args
    )
    load(writer, tricky_table(rng, "t1", 30), replace=True)
    assert (read("t2"), read("t1")) == (2, 3)
    writer.drop_tenants(["t1"])
    assert (read("t2"), read("t1")) == (2, 3)
    new_profile = [ProfileIndexInfo("code", EMBEDDER, DIM)]
    writer.apply(ChangeSet(upsert_nodes=records(first[:1]), profiles=new_profile))
    assert (read("t2"), read("t1")) == (3, 3)  # a recorded profile: every tenant read again


def test_similarity_without_a_cached_matrix_reads_the_named_rows_only(tmp_path: Path) -> None:
    """With a cache budget too small to keep the tenant's matrices (0 here), scoring a few named nodes
    reads those nodes' vectors, not the tenant's (each hop of a search did, twice per profile), and
    scores them as the cached matrices do."""
    rng = random.Random(29)
    vectors = tricky_table(rng, rows=300) + tricky_table(rng, profile=DOC, rows=120)
    cached, uncached = EmbeddedStore(tmp_path / "store.sqlite3"), EmbeddedStore(tmp_path / "store.sqlite3")
    cached.vector_cache, uncached.vector_cache = VectorCache(2**22), VectorCache(0)
    load(cached, vectors)
    named = [*sorted({v.node_id for v in vectors[::7]})[:25], "missing"]
    queries = [VectorQuery(WORK, vectors[3].vector, EMBEDDER), VectorQuery(DOC, vectors[3].vector, EMBEDDER)]
    read: list[tuple[str, int]] = []
    original = uncached._rows

    def spied(db: sqlite3.Connection, sql: str, params: Mapping[str, Any]) -> list[sqlite3.Row]:
        rows = original(db, sql, params)
        read.append((sql, len(rows)))
        return rows

    uncached._rows = spied  # type: ignore[method-assign]
    for scope in (SCOPES["public"], SCOPES["carol-security"], SCOPES["service"]):
        read.clear()
        expected = cached.similarity(queries, named, scope=scope)
        assert uncached.similarity(queries, named, scope=scope) == expected
        assert expected
        vector_reads = [count for sql, count in read if "FROM vectors" in sql]
        assert len(vector_reads) == 2  # one per profile
        assert all(count <= len(named) for count in vector_reads)


def test_a_query_needing_more_than_the_budget_keeps_its_first_matrices(tmp_path: Path) -> None:
    """A budget that holds one of the tenant's two matrices but not both: the query keeps the first and
    builds the second for itself, so each later query reads one matrix, not both."""
    rng = random.Random(31)
    vectors = tricky_table(rng, rows=200) + tricky_table(rng, profile=DOC, rows=200)
    store = EmbeddedStore(tmp_path / "store.sqlite3")
    load(store, vectors)
    sizes = [load_matrix(lambda sql, params: store_rows(store, sql, params), "t1", p, DIM).nbytes for p in (WORK, DOC)]
    store.vector_cache = VectorCache(max(sizes) + min(sizes) // 2)
    store.vector_files = False  # with vector files, the second is mapped again instead (tests/test_vector_files.py)
    queries = [VectorQuery(WORK, vectors[0].vector, EMBEDDER), VectorQuery(DOC, vectors[0].vector, EMBEDDER)]

    assert statements(store, queries, SCOPES["public"]) == 4  # profiles, versions, both matrices
    read = [statements(store, queries, SCOPES["public"]) for _ in range(3)]
    assert read == [3, 3, 3]  # the first is kept, the second read again
    assert store.vector_cache.nbytes <= store.vector_cache.max_bytes


def store_rows(store: EmbeddedStore, sql: str, params: Mapping[str, Any]) -> list[sqlite3.Row]:
    """Rows of ``sql`` read from the store's file."""
    connection = sqlite3.connect(store.path)
    connection.row_factory = sqlite3.Row
    try:
        return connection.execute(sql, dict(params)).fetchall()
    finally:
        connection.close()


def test_readers_and_writers_of_older_versions_see_every_write(tmp_path: Path) -> None:
    """Readers and writers without per-tenant tokens key their cache on meta.data_version alone: every
    write stores a new one (so their readers never keep stale rows, ACLs included), and a data_version
    no writer of per-tenant tokens stored makes this store's readers read every tenant again."""
    path = tmp_path / "store.sqlite3"
    reader, writer = EmbeddedStore(path), EmbeddedStore(path)
    reader.vector_cache = VectorCache(2**22)
    rng = random.Random(37)
    first, other = tricky_table(rng, "t1", 40), tricky_table(rng, "t2", 40)
    load(writer, first + other)

    def older_readers_token() -> str:
        with sqlite3.connect(path) as connection:
            return str(connection.execute("SELECT value FROM meta WHERE key = 'data_version'").fetchone()[0])

    queries = [VectorQuery(WORK, list(first[0].vector), EMBEDDER)]

    def read(tenant: str) -> int:
        return statements(reader, queries, AccessScope(tenant, all_secured=True))

    assert (read("t1"), read("t2")) == (3, 3)
    token = older_readers_token()
    changed = VectorRecord("t1", first[1].node_id, WORK, first[1].project_key, True, ("user:alice",), first[1].vector)
    writer.apply(ChangeSet(upsert_nodes=records([changed]), upsert_vectors=[changed], profiles=PROFILES))
    assert older_readers_token() != token  # a tenant-scoped write still tells older readers
    assert (read("t2"), read("t1")) == (2, 3)
    with sqlite3.connect(path) as connection:  # what an older writer does on each write
        connection.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('data_version', 'older-writer')")
    assert (read("t2"), read("t1")) == (3, 3)  # every tenant read again
    assert (read("t2"), read("t1")) == (2, 2)


NODE_TYPES = ("cdm.work_item", "cdm.doc", "code.file")
NAMESPACES = (None, "billing", "auth", "docs")
TAGS = ("payments", "sev1", "auth", "ops", "été")
TIMES = (None, -5, 0, 1_700_000_000_000_000, 1_700_000_000_000_001, 1_800_000_000_000_000)
WORDS = ("token", "refresh", "billing", "ledger", "outage", "payment")


def with_facets(rng: random.Random, vectors: Sequence[VectorRecord]) -> list[VectorRecord]:
    """The vectors with random facets from small pools (so every filter part matches some rows, and
    rows without a namespace, tags or update time), and a lexical document of a few words."""
    out = []
    for v in vectors:
        tags = tuple(sorted(rng.sample(TAGS, rng.randint(0, 3))))
        facets = NodeFacets(rng.choice(NODE_TYPES), rng.choice(NAMESPACES), tags, rng.choice(TIMES))
        text = " ".join(rng.choices(WORDS, k=rng.randint(1, 6)))
        out.append(replace(v, facets=facets, lexical=bm25.lexical_document(v.node_id, text)))
    return out


def random_filter(rng: random.Random) -> SeedFilter:
    """Any mix of filter parts, values unknown to the rows included."""

    def some(pool: Sequence[str]) -> tuple[str, ...]:
        return tuple(rng.sample(pool, rng.randint(1, 2))) if rng.random() < 0.4 else ()

    cutoffs = [moment for moment in TIMES if moment is not None] + [2**70, -(2**70)]
    return SeedFilter(
        project_key=rng.choice((None, None, "P", "R", "missing")),
        node_types=some((*NODE_TYPES, "cdm.other")),
        namespaces=some(("billing", "auth", "docs", "nowhere")),
        tags=some((*TAGS, "unknown")),
        updated_after=rng.choice((None, None, *cutoffs)),
    )


def test_filtered_search_is_the_reference_rule_before_the_top_k(tmp_path: Path) -> None:
    rng = random.Random(21)
    vectors = with_facets(rng, tricky_table(rng, rows=500) + tricky_table(rng, "t2", 60))
    store = EmbeddedStore(tmp_path / "store.sqlite3")
    store.vector_cache = VectorCache(64 * 2**20)
    load(store, vectors)
    base_rows = [v.vector for v in vectors[:4]]
    queries = [base_rows[0], base_rows[3], [rng.gauss(0, 1) for _ in range(DIM)], [0.0] * DIM]
    scopes = [SCOPES[name] for name in ("public", "alice", "service", "other-tenant")]
    windows = 0  # searches whose matching rows were enough for the approximate pass
    for query in queries:
        scored = [(v, similarity_from_cosine(cosine(query, array("f", v.vector)))) for v in vectors]
        for _ in range(40):
            seed_filter = random_filter(rng)
            for scope in scopes:
                admitted = [
                    (v.node_id, score)
                    for v, score in scored
                    if scope.may_see(v.tenant_id, v.secured, v.acl) and seed_filter.matches(v.project_key, v.facets)
                ]
                admitted.sort(key=lambda hit: (-hit[1], hit[0]))
                for top_k in (1, 10, 1000):
                    got = searched(store, query, scope=scope, seed_filter=seed_filter, top_k=top_k)
                    assert got == admitted[:top_k], (seed_filter, scope, top_k)
                windows += len(admitted) >= 10 + EXACT_BELOW
    assert windows > 50


def test_untimed_is_the_reference_rule_with_or_without_a_cached_matrix(tmp_path: Path) -> None:
    rng = random.Random(22)
    vectors = with_facets(rng, tricky_table(rng, rows=300) + tricky_table(rng, profile=DOC, rows=40))
    path = tmp_path / "store.sqlite3"
    load(EmbeddedStore(path), vectors)
    cached, uncached = EmbeddedStore(path), EmbeddedStore(path)
    cached.vector_cache, uncached.vector_cache = VectorCache(2**24), VectorCache(2**24)
    for profile in (WORK, DOC):
        searched(cached, vectors[0].vector, profile=profile, top_k=1)  # its matrices cached; none in uncached's cache
    seen = set()
    for _ in range(150):
        seed_filter = random_filter(rng)
        for scope in SCOPES.values():
            for profiles in ([WORK], [DOC], [WORK, DOC]):
                expected = any(
                    v.profile_id in profiles
                    and scope.may_see(v.tenant_id, v.secured, v.acl)
                    and seed_filter.untimed(v.project_key, v.facets)
                    for v in vectors
                )
                for store in (cached, uncached):
                    assert store.untimed(profiles, scope=scope, seed_filter=seed_filter) == expected, seed_filter
                seen.add(expected)
    assert seen == {True, False}
    assert all(key[-1].startswith(" facets ") for key in uncached.vector_cache._entries)


def test_filtered_lexical_search_is_the_reference_rule_before_the_top_k(tmp_path: Path) -> None:
    rng = random.Random(23)
    vectors = with_facets(rng, tricky_table(rng, rows=400) + tricky_table(rng, "t2", 60))
    store = EmbeddedStore(tmp_path / "store.sqlite3")
    store.vector_cache = VectorCache(2**24)
    load(store, vectors)
    facets = {v.node_id: (v.project_key, v.facets) for v in vectors if v.tenant_id == "t1"}
    for words in ("token", "billing outage", "payment ledger refresh"):
        query = [LexicalQuery(WORK, bm25.query_terms(words))]
        for scope in (SCOPES["public"], SCOPES["alice"], SCOPES["service"]):
            every = store.lexical(query, scope=scope, seed_filter=NO_FILTER, top_k=10_000)  # a filter changes no score
            assert len(every) > 50
            for _ in range(30):
                seed_filter = random_filter(rng)
                admitted = [(hit.node_id, hit.score) for hit in every if seed_filter.matches(*facets[hit.node_id])]
                for top_k in (1, 5, 1000):
                    hits = store.lexical(query, scope=scope, seed_filter=seed_filter, top_k=top_k)
                    assert [(hit.node_id, hit.score) for hit in hits] == admitted[:top_k], seed_filter


def test_a_filtered_search_sends_the_statements_of_an_unfiltered_one(tmp_path: Path) -> None:
    rng = random.Random(24)
    store = EmbeddedStore(tmp_path / "store.sqlite3")
    store.vector_cache = VectorCache(2**22)
    load(store, with_facets(rng, tricky_table(rng, rows=80) + tricky_table(rng, profile=DOC, rows=20)))
    queries = [VectorQuery(WORK, [1.0] * DIM, EMBEDDER), VectorQuery(DOC, [1.0] * DIM, EMBEDDER)]
    scope = SCOPES["public"]
    recent = SeedFilter(tags=("unknown",), updated_after=0)  # no row: every profile is looked at

    def untimed_statements(seed_filter: SeedFilter) -> int:
        before = store.round_trips()["sqlite"]
        store.untimed([WORK, DOC], scope=scope, seed_filter=seed_filter)
        return store.round_trips()["sqlite"] - before

    assert untimed_statements(recent) == 3  # data version, a facet table per profile (no matrix cached)
    assert untimed_statements(recent) == 1  # data version
    assert statements(store, queries, scope, recent) == 4  # profiles, data version, one read per profile
    assert statements(store, queries, scope, recent) == 2  # as without a filter
    assert statements(store, queries, scope) == 2
    assert untimed_statements(recent) == 1  # data version: the matrices' columns
    assert untimed_statements(SeedFilter(tags=("ops",))) == 0  # no recency part
