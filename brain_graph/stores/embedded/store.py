"""Reads of the embedded store: vector index, graph store, passage source and administration.

Design notes and measurements of the statements: docs/internals/embedded-store.md.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any, LiteralString, NamedTuple

from brain_graph.core.errors import BackendUnavailableError, ConfigurationError
from brain_graph.core.filters import SeedFilter
from brain_graph.core.passage_heads import HEADS_PREFIX, FieldHead, read_heads
from brain_graph.core.security import AccessScope
from brain_graph.core.vocabulary import CLUSTER, IN_CLUSTER
from brain_graph.stores.access import sql_params, sql_visible
from brain_graph.stores.base import (
    ChangeSet,
    ClusterMembership,
    EdgeRecord,
    LexicalQuery,
    Link,
    Neighborhood,
    NodeRecord,
    ProfileIndexInfo,
    TenantCounts,
    VectorHit,
    VectorQuery,
    VectorRecord,
    edge_sort_key,
)
from brain_graph.stores.embedded.connections import FileIdentity, ReadConnections, file_identity
from brain_graph.stores.embedded.index_files import IndexFiles
from brain_graph.stores.embedded.index_reads import EmbeddedIndexStore
from brain_graph.stores.embedded.schema import (
    META_COLUMNS,
    READ_DATA_VERSIONS,
    has_column,
    meta_columns,
    node_meta_values,
    read_nodes,
    stored_json,
)
from brain_graph.stores.embedded.snapshot import IndexSnapshot
from brain_graph.stores.embedded.vectors import (
    CacheKey,
    VectorCache,
    VectorMatrix,
    lexical_key,
    shared_cache,
    vector_files_enabled,
)
from brain_graph.stores.embedded.writes import check_store_path, delete_where, open_error, write_changes, write_load
from brain_graph.stores.identity import check_query_matches
from brain_graph.stores.readiness import Check
from brain_graph.stores.search_reads import ComposedSearchReads

BACKEND = "embedded store"

_NODES_WITH = (
    "SELECT {meta} FROM nodes n WHERE n.tenant_id = :scope_tenant"
    " AND n.node_id IN (SELECT value FROM json_each(:ids)) AND " + sql_visible("n")
)
NODES = _NODES_WITH.format(meta=meta_columns("n"))
OLDER_NODES = _NODES_WITH.format(meta=meta_columns("n", facets=False))  # a store of schema version 4 or older
# The visible nodes among :ids of the scope's tenant.
_VISIBLE_IDS = (
    " FROM nodes n WHERE n.tenant_id = :scope_tenant"
    " AND n.node_id IN (SELECT value FROM json_each(:ids)) AND " + sql_visible("n")
)
TEXTS = "SELECT n.node_id, n.text" + _VISIBLE_IDS
# The stored passage heads of a node when usable (of this encoding, and not ``:whole``), else its text.
_USABLE_HEADS = "n.heads IS NOT NULL AND NOT :whole AND substr(n.heads, 1, :prefix_chars) = :prefix"
PASSAGE_HEADS = (
    f"SELECT n.node_id, n.node_type, CASE WHEN {_USABLE_HEADS} THEN n.heads END AS heads,"
    f" CASE WHEN {_USABLE_HEADS} THEN NULL ELSE n.text END AS text" + _VISIBLE_IDS
)
PASSAGE_TEXTS = "SELECT n.node_id, n.node_type, NULL AS heads, n.text" + _VISIBLE_IDS  # a store without heads


# The links of each frontier node to visible nodes other than itself over the edge types, read in
# each direction up to ``:row_cap`` edges, (max_degree + 1) per edge type, as a JSON array of
# [edge_type, neighbor_id] per direction. A pair has at most one edge of each type per direction, so
# a direction cut at the cap already holds more than max_degree distinct neighbours: the node is a
# hub, whose edges are never all read; otherwise the arrays are all its links. Driven by the frontier
# (each direction's index named): the planner would otherwise scan every edge of the tenant and check
# visibility on each.
def _direction(near: LiteralString, far: LiteralString, index: LiteralString) -> LiteralString:
    """The [edge_type, neighbor_id] array of frontier node ``f``'s edges from column ``near`` to ``far``."""
    return (
        "(SELECT json_group_array(json_array(edge_type, neighbor_id)) FROM ("
        f"SELECT e.edge_type, e.{far} AS neighbor_id FROM edges e INDEXED BY {index}"
        f" JOIN nodes n ON n.tenant_id = :scope_tenant AND n.node_id = e.{far}"
        f" WHERE e.tenant_id = :scope_tenant AND e.{near} = f.node_id AND e.{far} != f.node_id"
        " AND e.edge_type IN (SELECT value FROM json_each(:edge_types)) AND " + sql_visible("n") + " LIMIT :row_cap))"
    )


# The frontier: its visible nodes (an invisible id is no frontier: its edges are never read).
LINKS = (
    "WITH f AS MATERIALIZED (SELECT DISTINCT fn.node_id FROM json_each(:frontier) fj"
    " CROSS JOIN nodes fn ON fn.tenant_id = :scope_tenant AND fn.node_id = fj.value WHERE " + sql_visible("fn") + ")"
    " SELECT f.node_id, "
    + _direction("from_node_id", "to_node_id", "sqlite_autoindex_edges_1")
    + " AS outgoing, "
    + _direction("to_node_id", "from_node_id", "edges_by_target")
    + " AS incoming FROM f"
)
# The edges among the visible nodes of ``ids`` (``v``): one index range per source node (the unary
# ``+`` keeps the type and target lists out of the index lookup: as index constraints they multiply
# into |ids| x |types| x |ids| probes), except for a source with at least ``:cap`` (|ids| x |types|)
# out-edges, an admitted hub: its edges are sought pair by pair, |types| x |ids| probes, so its
# out-edges are never all read. ``_HUB`` finds such a source by probing its ``:cap``-th out-edge.
_HUB = (
    "EXISTS (SELECT 1 FROM edges c WHERE c.tenant_id = :scope_tenant AND c.from_node_id = f.value"
    " LIMIT 1 OFFSET :cap - 1)"
)
EDGES_AMONG = (
    "WITH v AS MATERIALIZED (SELECT n.node_id AS value FROM json_each(:ids) j"
    " CROSS JOIN nodes n ON n.tenant_id = :scope_tenant AND n.node_id = j.value WHERE " + sql_visible("n") + ")"
    " SELECT edge_type, from_node_id, to_node_id, properties FROM edges"
    " WHERE tenant_id = :scope_tenant AND +edge_type IN (SELECT value FROM json_each(:edge_types))"
    f" AND from_node_id IN (SELECT f.value FROM v f WHERE NOT {_HUB})"
    " AND +to_node_id IN (SELECT value FROM v)"
    " UNION ALL"
    " SELECT e.edge_type, e.from_node_id, e.to_node_id, e.properties"
    " FROM v f CROSS JOIN json_each(:edge_types) t CROSS JOIN v g"
    " CROSS JOIN edges e ON e.tenant_id = :scope_tenant AND e.from_node_id = f.value"
    " AND e.edge_type = t.value AND e.to_node_id = g.value"
    f" WHERE {_HUB}"
)
# Visible clusters of the given visible members, each with its number of visible members (counted from the
# cluster through the index of incoming edges; the planner would otherwise scan the tenant's nodes).
_CLUSTER_MEMBERSHIPS_WITH = (
    "WITH m AS MATERIALIZED (SELECT e.from_node_id AS member_id, e.to_node_id AS cluster_id"
    " FROM edges e JOIN nodes c ON c.tenant_id = e.tenant_id AND c.node_id = e.to_node_id"
    " JOIN nodes mn ON mn.tenant_id = e.tenant_id AND mn.node_id = e.from_node_id"
    " WHERE e.tenant_id = :scope_tenant AND e.edge_type = :membership AND c.node_type = :cluster_type"
    " AND e.from_node_id IN (SELECT value FROM json_each(:ids)) AND "
    + sql_visible("c")
    + " AND "
    + sql_visible("mn")
    + "),"
    # each cluster's visible members counted once, not once per member asked about
    " s AS MATERIALIZED (SELECT d.cluster_id,"
    " (SELECT count(*) FROM edges me INDEXED BY edges_by_target CROSS JOIN nodes x"
    "   ON x.tenant_id = me.tenant_id AND x.node_id = me.from_node_id"
    "   WHERE me.tenant_id = :scope_tenant AND me.to_node_id = d.cluster_id AND me.edge_type = :membership AND "
    + sql_visible("x")
    + ") AS size FROM (SELECT DISTINCT cluster_id FROM m) d)"
    " SELECT m.member_id AS member_id, {meta}, s.size AS size"
    " FROM m JOIN s ON s.cluster_id = m.cluster_id"
    " JOIN nodes c ON c.tenant_id = :scope_tenant AND c.node_id = m.cluster_id"
)
CLUSTER_MEMBERSHIPS = _CLUSTER_MEMBERSHIPS_WITH.format(meta=meta_columns("c"))
OLDER_CLUSTER_MEMBERSHIPS = _CLUSTER_MEMBERSHIPS_WITH.format(meta=meta_columns("c", facets=False))


def _ids(values: Sequence[str]) -> str:
    return json.dumps(list(values))


class OneRowRead(NamedTuple):
    """A read whose rows come back as one row, and the statement that reads them one by one.

    ``one_row_sql`` returns a JSON array holding, per row of ``rows_sql``, the array of its columns.
    Python's ``sqlite3`` releases the GIL around every step of a statement, one per row, so concurrent
    searches in threads wait for the GIL once per row; one row per statement waits once.

    The columns brain-graph writes hold text, integers and NULL, which JSON gives back as they are (a
    REAL, which none of them holds, would keep 15 significant digits). Whatever the array cannot carry
    is read with ``rows_sql``: an array longer than SQLite's longest string, a BLOB, text that is not
    UTF-8, a number JSON cannot spell. The reads of texts and passage heads stay row by row (a few rows
    each, whose long strings JSON would escape twice)."""

    one_row_sql: str
    rows_sql: str
    json_columns: tuple[int, ...] = ()  # JSON values in ``one_row_sql``'s arrays, JSON text in ``rows_sql``


def one_row_read(sql: str, columns: Sequence[str], json_columns: tuple[int, ...] = ()) -> OneRowRead:
    """The :class:`OneRowRead` of ``sql``, whose result columns are named ``columns``; those at
    ``json_columns`` hold JSON text, nested as JSON values (``json()``: whether a JSON value keeps its
    type through a subquery depends on how SQLite plans it)."""
    values = ", ".join(f"json({column})" if index in json_columns else column for index, column in enumerate(columns))
    return OneRowRead(f"SELECT json_group_array(json_array({values})) FROM ({sql})", sql, json_columns)


def _row_by_row(error: Exception) -> bool:
    """Whether a failed :class:`OneRowRead` array is read again row by row (it could not carry the rows)."""
    if isinstance(error, ValueError):  # not JSON Python reads (a non-finite REAL)
        return True
    message = str(error)
    return (
        getattr(error, "sqlite_errorname", None) == "SQLITE_TOOBIG"
        or message.startswith("JSON cannot hold BLOB values")
        or message.startswith("Could not decode to UTF-8")
    )


# The reads of a search with more than a row or two.
_PROFILES = one_row_read(
    "SELECT profile_id, embedder_name, dimension FROM profiles", ("profile_id", "embedder_name", "dimension")
)
_NODES = one_row_read(NODES, META_COLUMNS)
_OLDER_NODES = one_row_read(OLDER_NODES, META_COLUMNS)
_LINKS = one_row_read(LINKS, ("node_id", "outgoing", "incoming"), json_columns=(1, 2))
_EDGES_AMONG = one_row_read(EDGES_AMONG, ("edge_type", "from_node_id", "to_node_id", "properties"))
_CLUSTER_MEMBERSHIPS = one_row_read(CLUSTER_MEMBERSHIPS, ("member_id", *META_COLUMNS, "size"))
_OLDER_CLUSTER_MEMBERSHIPS = one_row_read(OLDER_CLUSTER_MEMBERSHIPS, ("member_id", *META_COLUMNS, "size"))


class EmbeddedStore:
    """Vector index, graph store, passage source and administration over one SQLite file.

    A store that was never written reads as empty, unless ``explicit`` (the path was configured:
    ``--store``, ``BRAIN_GRAPH_STORE_PATH``): then a search of it is a :class:`ConfigurationError`
    saying how to fill it, so a mistyped path is not taken for a store without matches. A path that
    cannot be a store (a directory, a file that is not a SQLite database, a folder on its way that is
    a file) is a :class:`ConfigurationError` naming it, for searching and loading alike.
    """

    name = "embedded"
    supports_lexical = True
    vector_cache: VectorCache | None = None  # where vector matrices are kept; None: the process-wide one
    vector_files: bool | None = None  # whether indexes are shared through index files; None: the environment's

    def __init__(self, path: str | Path, *, explicit: bool = False) -> None:
        self.path = Path(path).expanduser()
        self.explicit = explicit
        self._connections = ReadConnections(self.path)  # reused between reads
        self._resolved: tuple[FileIdentity, str] | None = None  # the store file's identity and resolved path
        self._statements = 0
        self._lock = threading.Lock()

    @property
    def vector_index(self) -> EmbeddedStore:
        return self

    @property
    def graph_store(self) -> EmbeddedStore:
        return self

    @property
    def passage_source(self) -> EmbeddedStore:
        return self

    @property
    def search_reads(self) -> ComposedSearchReads:
        """A search's reads: the composition of this store's own reads (the same statements)."""
        return ComposedSearchReads(self, self, self)

    @property
    def admin(self) -> EmbeddedStore:
        return self

    @property
    def index_store(self) -> EmbeddedIndexStore:
        return EmbeddedIndexStore(partial(self._read, missing_ok=True), self._rows)

    @contextmanager
    def _read(self, *, missing_ok: bool = False) -> Iterator[sqlite3.Connection | None]:
        """A read-only connection, or None when no store has been written yet (an empty store; for an
        ``explicit`` path only if ``missing_ok``). A path naming a file (one ``stat``) is a store path:
        its folders exist, so :func:`~.writes.check_store_path` has nothing to say; any other is checked."""
        identity = file_identity(self.path)
        if identity is None:
            check_store_path(self.path)
            if not self.path.exists():
                if self.explicit and not missing_ok:
                    raise ConfigurationError(
                        f"embedded store {self.path} does not exist (--store or BRAIN_GRAPH_STORE_PATH names it); "
                        f"fill it first: brain-graph load PATH --store {self.path}"
                    )
                yield None
                return
        try:
            connection = self._connections.acquire(identity)
        except sqlite3.Error as error:
            raise open_error(self.path, error) or BackendUnavailableError(BACKEND, f"{self.path}: {error}") from error
        try:
            yield connection
        except sqlite3.OperationalError as error:
            if "no such table" in str(error):
                raise ConfigurationError(f"embedded store {self.path} is not a brain-graph store") from error
            raise BackendUnavailableError(BACKEND, f"{self.path}: {error}") from error
        except sqlite3.DatabaseError as error:
            raise open_error(self.path, error) or BackendUnavailableError(BACKEND, f"{self.path}: {error}") from error
        finally:
            self._connections.release(connection)

    def _rows(self, db: sqlite3.Connection, sql: str, params: Mapping[str, Any]) -> list[sqlite3.Row]:
        """One counted statement."""
        with self._lock:
            self._statements += 1
        return db.execute(sql, params).fetchall()

    def _rows_of(self, db: sqlite3.Connection, read: OneRowRead, params: Mapping[str, Any]) -> list[list[Any]]:
        """The rows of a :class:`OneRowRead`: one counted statement, or two when its array could not
        carry them and they are read one by one."""
        try:
            [(rows,)] = self._rows(db, read.one_row_sql, params)
            return json.loads(rows)  # type: ignore[no-any-return]
        except (sqlite3.DataError, sqlite3.OperationalError, ValueError) as error:
            if not _row_by_row(error):
                raise
        json_columns = read.json_columns
        return [
            [stored_json(value) if index in json_columns else value for index, value in enumerate(row)]
            for row in self._rows(db, read.rows_sql, params)
        ]

    # -- VectorIndex ---------------------------------------------------------------------------

    def query(
        self, queries: Sequence[VectorQuery], *, scope: AccessScope, seed_filter: SeedFilter, top_k: int
    ) -> list[VectorHit]:
        """Exact search over in-memory matrices of the tenant's vectors (:mod:`.vectors`), read from the
        file once per data version, narrowed by ``seed_filter`` over their cached facet columns
        (:mod:`.facets`); two statements when they are cached (profiles, data version)."""
        matrices = self._matrices(queries, scope)
        return [
            VectorHit(node_id, query.profile_id, score)
            for query in queries
            if query.profile_id in matrices
            for node_id, score in matrices[query.profile_id].search(
                query.vector, scope=scope, seed_filter=seed_filter, top_k=top_k
            )
        ]

    def similarity(
        self, queries: Sequence[VectorQuery], node_ids: Sequence[str], *, scope: AccessScope
    ) -> list[VectorHit]:
        """Exact scores of the named rows of the same in-memory matrices as :meth:`query`; a profile
        whose matrix is not cached (a cache budget smaller than the tenant needs) reads the named rows
        only, instead of all of the tenant's vectors for a few scores."""
        if not node_ids:
            return []
        matrices = self._matrices(queries, scope, named=node_ids)
        return [
            VectorHit(node_id, query.profile_id, score)
            for query in queries
            if query.profile_id in matrices
            for node_id, score in matrices[query.profile_id].scores_of(query.vector, node_ids, scope=scope)
        ]

    def untimed(self, profile_ids: Sequence[str], *, scope: AccessScope, seed_filter: SeedFilter) -> bool:
        """See :meth:`brain_graph.stores.base.VectorIndex.untimed`: from the facet columns of each
        profile's cached vector matrix, else of its facet table (:class:`.facets.FacetTable`, read once
        per data version into the same cache); one statement when cached (the data version), none
        without a recency part."""
        if seed_filter.updated_after is None or not profile_ids:
            return False
        with self._read() as db:
            if db is None:
                return False
            return self._snapshot(db, scope.tenant_id, profile_ids).untimed(profile_ids, scope, seed_filter)

    def lexical(
        self, queries: Sequence[LexicalQuery], *, scope: AccessScope, seed_filter: SeedFilter, top_k: int
    ) -> list[VectorHit]:
        """BM25 over in-memory postings of the tenant's lexical documents (:mod:`.lexical`), read from the
        file once per data version into the cache the vector matrices use, narrowed by ``seed_filter``
        as :meth:`query`; one statement when cached (the data version)."""
        wanted = [query for query in queries if query.terms]
        if not wanted:
            return []
        with self._read() as db:
            if db is None or not has_column(db, "vectors", "lexical"):
                return []
            snapshot = self._snapshot(db, scope.tenant_id, [query.profile_id for query in wanted])
            hits: list[VectorHit] = []
            in_use: list[CacheKey] = []
            for query in wanted:
                key = snapshot.key(query.profile_id, lexical_key(query.profile_id))
                load = partial(snapshot.lexical_index, query.profile_id)
                index = snapshot.cache.get_or_load(key, load, in_use=in_use)
                in_use.append(key)
                hits.extend(
                    VectorHit(node_id, query.profile_id, score)
                    for node_id, score in index.search(query.terms, scope=scope, seed_filter=seed_filter, top_k=top_k)
                )
            return hits

    def _matrices(
        self, queries: Sequence[VectorQuery], scope: AccessScope, *, named: Sequence[str] | None = None
    ) -> dict[str, VectorMatrix]:
        """The vector matrix of each query's profile, after checking each query's embedder against the
        profile's recorded one (one snapshot; the matrices come from the cache when the data is
        unchanged). With ``named``, a matrix not in the cache holds those nodes' rows only (not kept)."""
        with self._read() as db:
            if db is None or not queries:
                return {}
            db.execute("BEGIN")  # one snapshot for what follows (ended when the connection is given back)
            indexed = {
                profile_id: ProfileIndexInfo(profile_id, embedder_name, dimension)
                for profile_id, embedder_name, dimension in self._rows_of(db, _PROFILES, {})
            }
            for query in queries:
                check_query_matches(query, indexed.get(query.profile_id))
            vectors_by_profile = {query.profile_id: query.vector for query in queries}
            snapshot = self._snapshot(db, scope.tenant_id, list(vectors_by_profile), begun=True)
            matrices = {}
            in_use: list[CacheKey] = []  # this query's matrices: loading the next one does not evict them
            for profile_id, vector in vectors_by_profile.items():
                key = snapshot.key(profile_id)
                if named is None:
                    load = partial(snapshot.matrix, profile_id, len(vector))
                    matrices[profile_id] = snapshot.cache.get_or_load(key, load, in_use=in_use)
                    in_use.append(key)
                else:
                    held = snapshot.cache.get(key)
                    matrices[profile_id] = held if held is not None else snapshot.matrix(profile_id, len(vector), named)
            return matrices

    def _snapshot(
        self, db: sqlite3.Connection, tenant_id: str, profile_ids: Sequence[str], *, begun: bool = False
    ) -> IndexSnapshot:
        """Begin the read transaction of ``db`` (unless ``begun``), one snapshot for what follows (ended
        when the connection is given back), and read the data versions of it, of ``tenant_id`` and of
        the vectors of each of ``profile_ids`` (one statement), the keys of the cached indexes of that
        snapshot."""
        if not begun:
            db.execute("BEGIN")
        params = {"tenant": tenant_id, "profiles": json.dumps(list(dict.fromkeys(profile_ids)))}
        [(file_version, older_writer, tenant_version, profile_versions)] = self._rows(db, READ_DATA_VERSIONS, params)
        file_key = self._file_key()
        shares_files = self.vector_files if self.vector_files is not None else vector_files_enabled()
        return IndexSnapshot(
            db,
            self._rows,
            self.vector_cache if self.vector_cache is not None else shared_cache(),
            file_key,
            f"{file_version}/{older_writer}",  # a token of a writer keying data_version alone: all stale
            tenant_version,
            tenant_id,
            json.loads(profile_versions or "{}"),
            IndexFiles(Path(file_key)) if shares_files else None,
        )

    def _file_key(self) -> str:
        """The resolved path of the store file, the vector cache's key; resolved again only when the
        path names another file (its :func:`~.connections.file_identity` changed)."""
        identity = file_identity(self.path)
        known = self._resolved
        if identity is None or known is None or known[0] != identity:
            known = self._resolved = (identity, str(self.path.resolve()))
        return known[1]

    # -- GraphStore ----------------------------------------------------------------------------

    def get_nodes(self, node_ids: Sequence[str], *, scope: AccessScope) -> list[NodeRecord]:
        with self._read() as db:
            if db is None or not node_ids:
                return []
            params = {**sql_params(scope), "ids": _ids(node_ids)}
            rows = read_nodes(lambda read: self._rows_of(db, read, params), _NODES, _OLDER_NODES)
        return [node_meta_values(row) for row in rows]

    def links(
        self, frontier: Sequence[str], *, scope: AccessScope, edge_types: Sequence[str], max_degree: int
    ) -> Neighborhood:
        """One statement (:data:`LINKS`): each direction of each frontier node read no further than
        counting past ``max_degree`` needs."""
        unique = list(dict.fromkeys(frontier))
        with self._read() as db:
            if db is None or not unique or not edge_types:
                return Neighborhood(dict.fromkeys(unique, 0), [])
            row_cap = (max(max_degree, 0) + 1) * len(set(edge_types))
            params = {**sql_params(scope), "frontier": _ids(unique), "edge_types": _ids(edge_types), "row_cap": row_cap}
            rows = self._rows_of(db, _LINKS, params)
        degrees = dict.fromkeys(unique, 0)
        links: list[Link] = []
        for frontier_id, outgoing, incoming in rows:
            found = {neighbor_id for _, neighbor_id in outgoing} | {neighbor_id for _, neighbor_id in incoming}
            cut = len(outgoing) >= row_cap or len(incoming) >= row_cap  # then more than max_degree neighbours
            degrees[frontier_id] = max_degree + 1 if cut else min(len(found), max_degree + 1)
            if degrees[frontier_id] <= max_degree:
                links += [Link(frontier_id, edge_type, neighbor_id, True) for edge_type, neighbor_id in outgoing]
                links += [Link(frontier_id, edge_type, neighbor_id, False) for edge_type, neighbor_id in incoming]
        return Neighborhood(degrees, sorted(links))

    def edges_among(
        self, node_ids: Sequence[str], *, scope: AccessScope, edge_types: Sequence[str]
    ) -> list[EdgeRecord]:
        with self._read() as db:
            if db is None or not node_ids or not edge_types:
                return []
            unique, types = list(dict.fromkeys(node_ids)), sorted(set(edge_types))
            params = {
                **sql_params(scope),
                "edge_types": _ids(types),
                "ids": _ids(unique),
                "cap": len(unique) * len(types),
            }
            rows = self._rows_of(db, _EDGES_AMONG, params)
        edges = [
            EdgeRecord(
                scope.tenant_id,
                edge_type,
                from_node_id,
                to_node_id,
                {} if properties == "{}" else stored_json(properties),  # most edges have none
            )
            for edge_type, from_node_id, to_node_id, properties in rows
        ]
        return sorted(edges, key=edge_sort_key)

    def cluster_memberships(
        self, node_ids: Sequence[str], *, scope: AccessScope, known: Sequence[str] = ()
    ) -> list[ClusterMembership]:
        with self._read() as db:
            if db is None or not node_ids:
                return []
            params = {
                **sql_params(scope),
                "ids": _ids(node_ids),
                "membership": IN_CLUSTER,
                "cluster_type": CLUSTER,
            }
            rows = read_nodes(
                lambda read: self._rows_of(db, read, params), _CLUSTER_MEMBERSHIPS, _OLDER_CLUSTER_MEMBERSHIPS
            )
        skip = set(known)
        memberships = [
            ClusterMembership(member_id, meta[1], size, None if meta[1] in skip else node_meta_values(meta))
            for member_id, *meta, size in rows
        ]
        return sorted(memberships, key=lambda m: (m.cluster_id, m.member_id))

    # -- PassageSource -------------------------------------------------------------------------

    def get_texts(self, node_ids: Sequence[str], *, scope: AccessScope) -> dict[str, Mapping[str, str]]:
        with self._read() as db:
            if db is None or not node_ids:
                return {}
            rows = self._rows(db, TEXTS, {**sql_params(scope), "ids": _ids(node_ids)})
        return {row["node_id"]: stored_json(row["text"]) for row in rows}

    def get_passage_heads(
        self, node_ids: Sequence[str], *, scope: AccessScope, whole: bool = False
    ) -> dict[str, Mapping[str, FieldHead]]:
        with self._read() as db:
            if db is None or not node_ids:
                return {}
            query = PASSAGE_HEADS if has_column(db, "nodes", "heads") else PASSAGE_TEXTS
            params = {
                **sql_params(scope),
                "ids": _ids(node_ids),
                "whole": whole,
                "prefix": HEADS_PREFIX,
                "prefix_chars": len(HEADS_PREFIX),
            }
            rows = self._rows(db, query, params)
        return {row["node_id"]: read_heads(row["node_type"], row["heads"], row["text"], whole=whole) for row in rows}

    # -- loading and administration ------------------------------------------------------------

    def load(
        self,
        nodes: Sequence[NodeRecord],
        edges: Sequence[EdgeRecord],
        vectors: Sequence[VectorRecord],
        profiles: Sequence[ProfileIndexInfo],
        *,
        replace: bool,
    ) -> None:
        """See :func:`~brain_graph.stores.embedded.writes.write_load`."""
        write_load(self.path, nodes, edges, vectors, profiles, replace=replace)

    def load_streamed(
        self,
        nodes: Sequence[NodeRecord],
        edges: Sequence[EdgeRecord],
        vectors: Iterable[VectorRecord],
        profiles: Sequence[ProfileIndexInfo],
    ) -> None:
        """A replace-load whose vectors are written as ``vectors`` yields them, in the load's one
        transaction (:class:`~brain_graph.stores.base.StreamedLoad`)."""
        write_load(self.path, nodes, edges, vectors, profiles, replace=True)

    def apply(self, changes: ChangeSet) -> None:
        """See :func:`~brain_graph.stores.embedded.writes.write_changes`: one SQLite transaction."""
        write_changes(self.path, changes)

    def drop_tenants(self, tenant_ids: Sequence[str]) -> None:
        if self.path.exists() and tenant_ids:
            delete_where(self.path, ("nodes", "edges", "vectors"), "tenant_id", tenant_ids)

    def drop_profiles(self, profile_ids: Sequence[str]) -> None:
        if self.path.exists() and profile_ids:
            delete_where(self.path, ("vectors", "profiles"), "profile_id", profile_ids)

    def count(self, tenant_id: str) -> TenantCounts:
        with self._read(missing_ok=True) as db:
            if db is None:
                return TenantCounts(0, 0, {})
            params = {"tenant": tenant_id}
            nodes = self._rows(db, "SELECT count(*) FROM nodes WHERE tenant_id = :tenant", params)[0][0]
            edges = self._rows(db, "SELECT count(*) FROM edges WHERE tenant_id = :tenant", params)[0][0]
            vectors = self._rows(
                db,
                "SELECT profile_id, count(*) FROM vectors WHERE tenant_id = :tenant GROUP BY profile_id"
                " ORDER BY profile_id",
                params,
            )
        return TenantCounts(int(nodes), int(edges), {row[0]: int(row[1]) for row in vectors})

    def round_trips(self) -> dict[str, int]:
        """Statements executed by reads so far: ``{"sqlite": statements}``."""
        with self._lock:
            return {"sqlite": self._statements}

    def readiness_checks(self) -> dict[str, Check]:
        """The store file reads (:meth:`check_readable`; see :mod:`brain_graph.stores.readiness`)."""
        return {self.name: self.check_readable}

    def check_readable(self) -> None:
        """Returns when a search could read the store now: the file opens as a brain-graph store and its
        nodes table reads (not counted in :meth:`round_trips`); a store never written reads as empty,
        unless ``explicit``. Otherwise raises the error a search would get."""
        with self._read() as db:
            if db is not None:
                db.execute("SELECT 1 FROM nodes LIMIT 1").fetchall()

    def close(self) -> None:
        """Close the idle read connections (a later read opens a new one)."""
        self._connections.close()
