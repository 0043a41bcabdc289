"""Indexes shared between processes through files (:mod:`brain_graph.stores.embedded.index_files`):
the same results as matrices read from SQLite, a new process's first search reading no vectors from
SQLite, writes invalidating only the (tenant, profile) they touched, and damaged or half-written files
never changing a result."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import textwrap
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from brain_graph.core import bm25
from brain_graph.core.filters import SeedFilter
from brain_graph.core.security import AccessScope, Principal
from brain_graph.stores.base import ChangeSet, LexicalQuery, VectorQuery, VectorRecord
from brain_graph.stores.embedded import EmbeddedStore
from brain_graph.stores.embedded.index_codecs import MATRIX, matrix_from_parts
from brain_graph.stores.embedded.index_files import (
    STALE_TEMPORARY_S,
    TEMPORARY_PREFIX,
    IndexFiles,
    folder_of,
    is_mapped,
)
from brain_graph.stores.embedded.lexical import LexicalIndex
from brain_graph.stores.embedded.vectors import VectorCache, VectorMatrix
from tests.test_embedded_vectors import (
    DIM,
    DOC,
    EMBEDDER,
    PROFILES,
    WORK,
    load,
    random_filter,
    records,
    reference,
    searched,
    statements,
    tricky_table,
    with_facets,
)

ROOT = Path(__file__).parent.parent
SCOPES = [
    AccessScope("t1"),
    AccessScope("t1", identities=Principal("alice").identities),
    AccessScope("t1", identities=Principal("carol", ("security", "ops")).identities),
    AccessScope("t1", all_secured=True),
    AccessScope("t2", all_secured=True),
]


def private_store(path: Path, *, files: bool = True) -> EmbeddedStore:
    """A store object with a cache of its own, so that only the file and its vector files are shared."""
    store = EmbeddedStore(path)
    store.vector_cache = VectorCache(2**24)
    store.vector_files = files
    return store


def versions_of(path: Path) -> dict[str, set[str]]:
    """The published version folders under each (tenant, profile) folder of the store at ``path``."""
    root = folder_of(path)
    if not root.is_dir():
        return {}
    return {pair.name: {version.name for version in pair.iterdir()} for pair in root.iterdir()}


def test_published_files_give_the_results_of_sqlite(tmp_path: Path) -> None:
    rng = random.Random(31)
    path = tmp_path / "store.sqlite3"
    vectors = with_facets(rng, tricky_table(rng, "t1", 300) + tricky_table(rng, "t1", 200, profile=DOC))
    load(private_store(path), vectors)
    publisher, mapped, from_sqlite = private_store(path), private_store(path), private_store(path, files=False)
    query = vectors[0].vector
    searched(publisher, query, top_k=5)  # publishes the WORK matrix
    searched(publisher, query, profile=DOC, top_k=5)
    assert len(versions_of(path)) == 2
    for trial in range(60):
        seed_filter = random_filter(rng) if trial % 2 else SeedFilter()
        scope = SCOPES[trial % len(SCOPES)]
        profile = (WORK, DOC)[trial % 2]
        probe = vectors[rng.randrange(len(vectors))].vector if trial % 3 else [rng.gauss(0, 1) for _ in range(DIM)]
        args = {"profile": profile, "scope": scope, "seed_filter": seed_filter, "top_k": rng.choice((1, 5, 40))}
        assert searched(mapped, probe, **args) == searched(from_sqlite, probe, **args)
    plain = {"profile": WORK, "scope": SCOPES[3], "project_key": None, "top_k": 50}
    assert searched(mapped, query, **plain) == reference(vectors, query, **plain)
    held = mapped.vector_cache.get(next(key for key in mapped.vector_cache._entries if key[3:] == ("t1", WORK)))
    assert isinstance(held, VectorMatrix)
    assert is_mapped(held.vectors)


def test_a_new_process_reads_no_vectors_from_sqlite(tmp_path: Path) -> None:
    rng = random.Random(32)
    path = tmp_path / "store.sqlite3"
    vectors = tricky_table(rng, "t1", 200)
    load(private_store(path), vectors)
    query = vectors[3].vector
    queries = [VectorQuery(WORK, list(query), EMBEDDER)]
    first = private_store(path)
    assert statements(first, queries, SCOPES[3]) == 3  # profiles, versions, vectors: then published
    script = textwrap.dedent(
        f"""
        import json
        from brain_graph.core.filters import SeedFilter
        from brain_graph.core.security import AccessScope
        from brain_graph.stores.base import VectorQuery
        from brain_graph.stores.embedded import EmbeddedStore
        from brain_graph.stores.embedded.index_files import is_mapped
        from brain_graph.stores.embedded.vectors import VectorCache

        store = EmbeddedStore({str(path)!r})
        store.vector_cache = VectorCache(2**24)
        query = [VectorQuery({WORK!r}, {list(query)!r}, {EMBEDDER!r})]
        hits = store.query(query, scope=AccessScope("t1", all_secured=True), seed_filter=SeedFilter(), top_k=20)
        [matrix] = [store.vector_cache.get(key) for key in list(store.vector_cache._entries)]
        print(json.dumps({{
            "statements": store.round_trips()["sqlite"],
            "hits": [[hit.node_id, hit.score] for hit in hits],
            "mapped": is_mapped(matrix.vectors),
        }}))
        """
    )
    done = subprocess.run([sys.executable, "-c", script], check=True, cwd=ROOT, capture_output=True, text=True)
    answer = json.loads(done.stdout)
    args = {"profile": WORK, "scope": SCOPES[3], "project_key": None, "top_k": 20}
    assert answer == {
        "statements": 2,  # profiles, versions: the vectors come from the published files
        "hits": [list(hit) for hit in reference(vectors, query, **args)],
        "mapped": True,
    }


def test_a_write_to_one_profile_keeps_the_other_profiles_matrix_and_files(tmp_path: Path) -> None:
    rng = random.Random(33)
    path = tmp_path / "store.sqlite3"
    work, doc = tricky_table(rng, "t1", 80), tricky_table(rng, "t1", 80, profile=DOC)
    writer, reader = private_store(path), private_store(path)
    load(writer, work + doc)
    query = work[0].vector
    scope = AccessScope("t1", all_secured=True)

    def read(profile: str) -> int:
        return statements(reader, [VectorQuery(profile, list(query), EMBEDDER)], scope)

    assert (read(WORK), read(DOC)) == (3, 3)
    published = versions_of(path)
    changed = VectorRecord("t1", work[1].node_id, WORK, work[1].project_key, False, (), [-x for x in query])
    writer.apply(ChangeSet(upsert_vectors=[changed], profiles=PROFILES))
    assert (read(DOC), read(WORK)) == (2, 3)  # only the written profile is read again
    now = versions_of(path)
    unchanged = [pair for pair in published if now[pair] == published[pair]]
    replaced = [pair for pair in published if now[pair] != published[pair]]
    assert len(unchanged) == 1
    assert len(replaced) == 1
    assert len(now[replaced[0]]) == 1  # the superseded version was removed when the new one was published
    args = {"profile": WORK, "scope": scope, "project_key": None, "top_k": 100}
    expected = reference([*(v for v in work if v.node_id != changed.node_id), changed], query, **args)
    assert searched(private_store(path), query, **args) == expected


def test_a_node_change_invalidates_the_profiles_holding_its_vectors(tmp_path: Path) -> None:
    """A node's secured flag and ACL are copied to its vectors of every profile: securing a node makes
    each profile's files stale, so no process keeps finding it in a public search."""
    path = tmp_path / "store.sqlite3"
    vector = [1.0] + [0.0] * (DIM - 1)
    rows = [VectorRecord("t1", "n", profile, "P", False, (), vector) for profile in (WORK, DOC)]
    writer = private_store(path)
    load(writer, rows)
    public = AccessScope("t1")
    for profile in (WORK, DOC):
        assert searched(private_store(path), vector, profile=profile, scope=public, top_k=5) == [("n", 1.0)]
    [node] = records(rows)
    secured = type(node)(**{**node.__dict__, "secured": True, "acl": ("user:alice",)})
    writer.apply(ChangeSet(upsert_nodes=[secured], profiles=PROFILES))
    for profile in (WORK, DOC):
        assert searched(private_store(path), vector, profile=profile, scope=public, top_k=5) == []


@pytest.mark.parametrize("damage", ["meta", "truncated", "dtype", "format"])
def test_damaged_files_are_read_again_from_sqlite_and_replaced(tmp_path: Path, damage: str) -> None:
    rng = random.Random(34)
    path = tmp_path / "store.sqlite3"
    vectors = tricky_table(rng, "t1", 120)
    load(private_store(path), vectors)
    query = vectors[5].vector
    args = {"profile": WORK, "scope": SCOPES[3], "project_key": None, "top_k": 30}
    expected = reference(vectors, query, **args)
    assert searched(private_store(path), query, **args) == expected
    [(pair, [version])] = [(pair, sorted(found)) for pair, found in versions_of(path).items()]
    folder = folder_of(path) / pair / version
    if damage == "meta":
        (folder / "meta.json").write_text("{not json", encoding="utf-8")
    elif damage == "truncated":
        data = (folder / "arrays.bin").read_bytes()
        (folder / "arrays.bin").write_bytes(data[: len(data) // 2])
    elif damage == "dtype":
        meta = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
        meta["arrays"]["norms_sq"][0] = "<f4"
        (folder / "meta.json").write_text(json.dumps(meta), encoding="utf-8")
    else:
        meta = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
        (folder / "meta.json").write_text(json.dumps({**meta, "format": 999}), encoding="utf-8")
    reader = private_store(path)
    assert statements(reader, [VectorQuery(WORK, list(query), EMBEDDER)], SCOPES[3]) == 3  # read from SQLite
    assert searched(reader, query, **args) == expected
    assert searched(private_store(path), query, **args) == expected
    assert statements(private_store(path), [VectorQuery(WORK, list(query), EMBEDDER)], SCOPES[3]) == 2  # replaced


def test_a_killed_publisher_leaves_nothing_a_search_reads(tmp_path: Path) -> None:
    rng = random.Random(35)
    path = tmp_path / "store.sqlite3"
    vectors = tricky_table(rng, "t1", 100)
    load(private_store(path), vectors)
    query = vectors[2].vector
    args = {"profile": WORK, "scope": SCOPES[0], "project_key": None, "top_k": 10}
    searched(private_store(path), query, **args)
    [pair] = versions_of(path)
    old = folder_of(path) / pair / f"{TEMPORARY_PREFIX}1-dead"
    fresh = folder_of(path) / pair / f"{TEMPORARY_PREFIX}2-busy"
    for left in (old, fresh):
        left.mkdir()
        (left / "arrays.bin").write_bytes(b"half written")
    long_ago = os.stat(old).st_mtime - 2 * STALE_TEMPORARY_S
    os.utime(old, (long_ago, long_ago))
    writer = private_store(path)
    changed = VectorRecord("t1", vectors[0].node_id, WORK, vectors[0].project_key, False, (), [-x for x in query])
    writer.apply(ChangeSet(upsert_vectors=[changed], profiles=PROFILES))
    expected = reference([changed, *(v for v in vectors if v.node_id != changed.node_id)], query, **args)
    assert searched(private_store(path), query, **args) == expected
    left = versions_of(path)[pair]
    assert old.name not in left
    assert fresh.name in left
    assert len([name for name in left if not name.startswith(TEMPORARY_PREFIX)]) == 1


def test_concurrent_publishers_of_one_version_leave_one_usable_folder(tmp_path: Path) -> None:
    rng = random.Random(36)
    path = tmp_path / "store.sqlite3"
    vectors = tricky_table(rng, "t1", 150)
    load(private_store(path), vectors, replace=True)
    query = vectors[1].vector
    args = {"profile": WORK, "scope": SCOPES[3], "project_key": None, "top_k": 15}
    expected = reference(vectors, query, **args)
    with ThreadPoolExecutor(max_workers=6) as pool:
        results = list(pool.map(lambda _: searched(private_store(path), query, **args), range(12)))
    assert all(result == expected for result in results)
    [(_pair, found)] = versions_of(path).items()
    assert len(found) == 1
    assert not any(name.startswith(TEMPORARY_PREFIX) for name in found)


def test_vector_files_can_be_turned_off(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import brain_graph.stores.embedded.vectors as vectors_module

    monkeypatch.setenv("BRAIN_GRAPH_VECTOR_FILES", "false")
    monkeypatch.setattr(vectors_module, "_files_enabled", None)
    path = tmp_path / "store.sqlite3"
    rows = tricky_table(random.Random(37), "t1", 50)
    store = EmbeddedStore(path)
    store.vector_cache = VectorCache(2**22)
    load(store, rows)
    args = {"profile": WORK, "scope": SCOPES[3], "project_key": None, "top_k": 5}
    assert searched(store, rows[0].vector, **args) == reference(rows, rows[0].vector, **args)
    assert not folder_of(path).exists()
    monkeypatch.setattr(vectors_module, "_files_enabled", None)


def test_files_of_another_tenant_or_dimension_are_not_used(tmp_path: Path) -> None:
    rng = random.Random(38)
    path = tmp_path / "store.sqlite3"
    vectors = tricky_table(rng, "t1", 60)
    load(private_store(path), vectors)
    store = private_store(path)
    searched(store, vectors[0].vector, scope=SCOPES[3], top_k=3)
    [key] = list(store.vector_cache._entries)
    files = IndexFiles(path)
    parts = files.open(key, MATRIX)
    assert parts is not None
    assert matrix_from_parts(*parts, DIM) is not None
    assert matrix_from_parts(*parts, DIM + 1) is None
    assert files.open(key, "lexical-index") is None
    assert files.open((key[0], key[1], key[2], "t2", key[4]), MATRIX) is None


def test_a_matrix_outside_the_budget_is_mapped_again_not_read_from_sqlite(tmp_path: Path) -> None:
    rng = random.Random(39)
    path = tmp_path / "store.sqlite3"
    vectors = tricky_table(rng, "t1", 200) + tricky_table(rng, "t1", 200, profile=DOC)
    load(private_store(path), vectors)
    store = private_store(path)
    queries = [VectorQuery(WORK, vectors[0].vector, EMBEDDER), VectorQuery(DOC, vectors[0].vector, EMBEDDER)]
    assert statements(store, queries, SCOPES[0]) == 4  # profiles, versions, both matrices (then published)
    one_matrix = max(entry.nbytes for entry in store.vector_cache._entries.values())
    store.vector_cache = VectorCache(one_matrix + one_matrix // 4)
    assert [statements(store, queries, SCOPES[0]) for _ in range(3)] == [2, 2, 2]
    hits = store.query(queries, scope=SCOPES[3], seed_filter=SeedFilter(), top_k=7)
    for profile in (WORK, DOC):
        args = {"profile": profile, "scope": SCOPES[3], "project_key": None, "top_k": 7}
        assert [(hit.node_id, hit.score) for hit in hits if hit.profile_id == profile] == reference(
            vectors, vectors[0].vector, **args
        )


def test_lexical_indexes_are_shared_like_the_matrices(tmp_path: Path) -> None:
    """A new store object (another process's view) gets the lexical index from its files: the same hits
    under every scope and filter as the index read from SQLite, and no lexical documents read."""
    rng = random.Random(40)
    path = tmp_path / "store.sqlite3"
    vectors = with_facets(rng, tricky_table(rng, "t1", 300) + tricky_table(rng, "t2", 40))
    load(private_store(path), vectors)

    def lexical_statements(store: EmbeddedStore, query: list[LexicalQuery]) -> int:
        before = store.round_trips()["sqlite"]
        store.lexical(query, scope=SCOPES[0], seed_filter=SeedFilter(), top_k=5)
        return store.round_trips()["sqlite"] - before

    words = [LexicalQuery(WORK, bm25.query_terms("billing outage token"))]
    assert lexical_statements(private_store(path), words) == 2  # versions, documents: then published
    mapped, from_sqlite = private_store(path), private_store(path, files=False)
    assert lexical_statements(mapped, words) == 1  # versions only
    for trial in range(40):
        terms = bm25.query_terms(" ".join(rng.sample(("token", "billing", "outage", "payment", "ledger"), 2)))
        query = [LexicalQuery(WORK, terms)]
        scope, seed_filter = SCOPES[trial % len(SCOPES)], random_filter(rng) if trial % 2 else SeedFilter()
        top_k = rng.choice((1, 5, 1000))
        got = mapped.lexical(query, scope=scope, seed_filter=seed_filter, top_k=top_k)
        assert got == from_sqlite.lexical(query, scope=scope, seed_filter=seed_filter, top_k=top_k)
    held = [entry for entry in mapped.vector_cache._entries.values() if isinstance(entry, LexicalIndex)]
    assert held
    assert all(is_mapped(entry.posting_rows) for entry in held)


def test_an_open_index_holds_one_file_descriptor(tmp_path: Path) -> None:
    """Every array of an index is a view of one mapping: a process holding many indexes stays far from
    its descriptor limit (and from select()'s 1024)."""
    if not Path("/proc/self/fd").is_dir():
        pytest.skip("counts descriptors through /proc")
    rng = random.Random(41)
    path = tmp_path / "store.sqlite3"
    vectors = with_facets(rng, tricky_table(rng, "t1", 100))
    load(private_store(path), vectors)
    store = private_store(path)
    searched(store, vectors[0].vector, scope=SCOPES[3], top_k=3)
    [key] = list(store.vector_cache._entries)
    files = IndexFiles(path)
    before = len(os.listdir("/proc/self/fd"))
    held = [files.open(key, MATRIX) for _ in range(40)]
    assert all(parts is not None for parts in held)
    assert len(os.listdir("/proc/self/fd")) - before <= 40
    del held


def test_a_store_whose_index_folder_cannot_be_made_searches_from_sqlite(tmp_path: Path) -> None:
    """Publishing fails (here ``<store>.indexes`` is a file, so no folder can be made under it): every
    search reads its vectors from SQLite and gives the same results, and nothing is written."""
    rng = random.Random(42)
    path = tmp_path / "store.sqlite3"
    vectors = tricky_table(rng, "t1", 120)
    load(private_store(path), vectors)
    folder_of(path).write_text("not a folder", encoding="utf-8")
    query = vectors[4].vector
    queries = [VectorQuery(WORK, list(query), EMBEDDER)]
    args = {"profile": WORK, "scope": SCOPES[3], "project_key": None, "top_k": 25}
    for _ in range(2):
        store = private_store(path)
        assert statements(store, queries, SCOPES[3]) == 3  # the vectors read from SQLite each time
        assert searched(store, query, **args) == reference(vectors, query, **args)
    assert folder_of(path).read_text(encoding="utf-8") == "not a folder"
