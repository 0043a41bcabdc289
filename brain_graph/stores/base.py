"""Store protocols every backend implements, and the records they exchange.

Every read takes many ids at once and an :class:`~brain_graph.core.security.AccessScope`; a search calls
each method at most once per pipeline step (once per hop for expansion), never once per hit, and
reads each record once: node metadata (:meth:`GraphStore.get_nodes`), passage texts
(:meth:`PassageSource.get_texts`) and cluster records (:meth:`GraphStore.cluster_memberships`, which
skips the clusters the caller already read) are separate reads. A search goes through
:class:`SearchReads`, which combines them (the vector search with the hits' metadata and first
hop; what the steps after the expansion need, in one read) so a server backend answers in few
round trips. Backends must return exactly what is
visible in the scope (tenant and ACL, :mod:`brain_graph.stores.access`), in the documented order.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from brain_graph.core.filters import NodeFacets, SeedFilter, folded_set, path_namespace
from brain_graph.core.passage_heads import FieldHead
from brain_graph.core.security import AccessScope
from brain_graph.core.vocabulary import CODE_FILE

VectorValues = Sequence[float] | npt.NDArray[np.floating[Any]]  # a list of floats or a numpy row


@dataclass(frozen=True)
class VectorQuery:
    """One query vector for one embedding profile, with the embedder that produced it (checked
    against what the index was built with)."""

    profile_id: str
    vector: Sequence[float]
    embedder_name: str


@dataclass(frozen=True)
class LexicalQuery:
    """One lexical query for one embedding profile: its distinct terms, sorted
    (:func:`brain_graph.core.bm25.query_terms`)."""

    profile_id: str
    terms: tuple[str, ...]


@dataclass(frozen=True)
class ProfileIndexInfo:
    """What an index records about a profile: the embedder and dimension of its vectors."""

    profile_id: str
    embedder_name: str
    dimension: int


@dataclass(frozen=True)
class VectorHit:
    """A vector match. Ordered by ``score`` descending, then ``node_id``, then ``profile_id``."""

    node_id: str
    profile_id: str
    score: float


@dataclass(frozen=True)
class VectorRecord:
    """A vector to write, with the metadata the index filters on. ``vector`` may be a list or a
    float32 numpy row; ``content_hash`` is what it was made from
    (:func:`brain_graph.indexing.hashing.content_hash`; "" when unknown)."""

    tenant_id: str
    node_id: str
    profile_id: str
    project_key: str | None
    secured: bool
    acl: tuple[str, ...]
    vector: VectorValues = field(compare=False)  # a numpy row has no truth value for ==
    content_hash: str = ""
    lexical: str = ""  # the lexical document (brain_graph.core.bm25.lexical_document); "": none
    facets: NodeFacets = field(default_factory=NodeFacets)  # what seed filters match (node_facets of the node)


@dataclass(frozen=True)
class VectorState:
    """A stored vector seen by the indexer: the hash of what it was made from ("" for a vector stored
    without one) and the filter metadata it carries (compared with the node's).

    ``searchable`` False: the vector is stored but searches do not see it as stored (a vector index
    that cannot reach it, or a copy of it that differs, both left by an interrupted write); the
    indexer writes such a vector anew, deleting it first (:func:`brain_graph.indexing.changes.vector_changes`)."""

    node_id: str
    content_hash: str
    project_key: str | None
    secured: bool
    acl: tuple[str, ...]
    searchable: bool = True
    lexical: bool = True  # stored with a lexical document
    facets: NodeFacets = field(default_factory=NodeFacets)  # as stored with the vector


@dataclass(frozen=True, order=True)
class NodeKey:
    """A node of a tenant."""

    tenant_id: str
    node_id: str


@dataclass(frozen=True, order=True)
class VectorKey:
    """A node's vector in one profile."""

    tenant_id: str
    profile_id: str
    node_id: str


@dataclass(frozen=True)
class ChangeSet:
    """Writes applied together by :meth:`StorageBackend.apply`, all or nothing, in this order:
    ``delete_edges`` (matched by tenant, type and ends; properties ignored), ``delete_nodes`` (each
    with its edges and its vectors in every profile), ``upsert_nodes`` (a node's fields are replaced
    as a whole), ``upsert_edges`` (both ends must exist once the nodes are written, else the whole
    change is refused with a :class:`~brain_graph.core.errors.DatasetError`), ``delete_vectors``,
    ``upsert_vectors`` (their profiles' identities in ``profiles``, under the embedder-identity rule
    of :mod:`brain_graph.stores.identity`: a change never replaces a recorded identity)."""

    upsert_nodes: Sequence[NodeRecord] = ()
    upsert_edges: Sequence[EdgeRecord] = ()
    delete_edges: Sequence[EdgeRecord] = ()
    delete_nodes: Sequence[NodeKey] = ()
    upsert_vectors: Sequence[VectorRecord] = ()
    delete_vectors: Sequence[VectorKey] = ()
    profiles: Sequence[ProfileIndexInfo] = ()

    def __bool__(self) -> bool:
        return any(
            (
                self.upsert_nodes,
                self.upsert_edges,
                self.delete_edges,
                self.delete_nodes,
                self.upsert_vectors,
                self.delete_vectors,
            )
        )


@dataclass(frozen=True)
class NodeRecord:
    """A graph node. ``text`` holds passage fields (summary, description, body) when written; reads
    of metadata (:meth:`GraphStore.get_nodes`) leave it empty."""

    tenant_id: str
    node_id: str
    node_type: str
    project_key: str | None
    title: str | None
    url: str | None
    secured: bool = False
    acl: tuple[str, ...] = ()
    text: Mapping[str, str] = field(default_factory=dict)
    properties: Mapping[str, Any] = field(default_factory=dict)
    namespace: str | None = None  # as given; None: derived from the node's path (node_facets)
    tags: tuple[str, ...] = ()  # as given, sorted and unique
    updated_at: int | None = None  # microseconds since the Unix epoch, UTC


def node_path(node: NodeRecord) -> str | None:
    """The path a node's namespace is derived from: its ``path`` property when a string, else the
    title of a code file (its path)."""
    path = node.properties.get("path")
    if isinstance(path, str):
        return path
    return node.title if node.node_type == CODE_FILE else None


def node_facets(node: NodeRecord) -> NodeFacets:
    """What seed filters match of a node: its type, namespace (its ``namespace`` field, else
    :func:`~brain_graph.core.filters.path_namespace` of :func:`node_path`), tags and update time,
    normalised as :mod:`brain_graph.core.filters` says."""
    if node.namespace is not None:
        namespace = folded_set([node.namespace])
    else:
        path = node_path(node)
        derived = path_namespace(path) if path is not None else None
        namespace = (derived,) if derived else ()
    return NodeFacets(node.node_type, namespace[0] if namespace else None, folded_set(node.tags), node.updated_at)


@dataclass(frozen=True)
class EdgeRecord:
    """A directed, typed edge between two nodes of one tenant."""

    tenant_id: str
    edge_type: str
    from_node_id: str
    to_node_id: str
    properties: Mapping[str, Any] = field(default_factory=dict)


class Link(NamedTuple):
    """An allowlisted edge between a frontier node and a visible neighbour, seen from the frontier:
    ``outgoing`` when the edge points from ``frontier_id`` to ``neighbor_id``. The tuple order
    (frontier_id, edge_type, neighbor_id, outgoing) is the total order of :attr:`Neighborhood.links`."""

    frontier_id: str
    edge_type: str
    neighbor_id: str
    outgoing: bool


@dataclass(frozen=True)
class Neighborhood:
    """What :meth:`GraphStore.links` found around a frontier: ``degrees`` has every frontier id, with
    its number of distinct visible neighbours over the edge types (self-loops not counted), counted
    no further than ``max_degree + 1`` (a hub's count stops there: its edges are never all read);
    ``links`` are the links of the frontier nodes whose degree is at most the ``max_degree`` asked for
    (hubs are counted, never listed), sorted."""

    degrees: Mapping[str, int]
    links: list[Link]


@dataclass(frozen=True)
class ClusterMembership:
    """A cluster a node belongs to (an ``IN_CLUSTER`` edge to a ``kg.cluster`` node, see
    :mod:`brain_graph.core.vocabulary`) and the cluster's visible member count. ``cluster`` is the
    cluster's metadata record, or None when the caller named the cluster as already known."""

    member_id: str
    cluster_id: str
    cluster_size: int
    cluster: NodeRecord | None


@dataclass(frozen=True)
class TenantCounts:
    """What a tenant holds (searches' view: the current data only)."""

    nodes: int
    edges: int
    vectors: Mapping[str, int]  # per profile id, profiles with at least one vector


def edge_sort_key(edge: EdgeRecord) -> tuple[str, str, str]:
    """The total order of edges."""
    return (edge.edge_type, edge.from_node_id, edge.to_node_id)


@runtime_checkable
class VectorIndex(Protocol):
    """Similarity search over the vectors of the embedding profiles."""

    def query(
        self,
        queries: Sequence[VectorQuery],
        *,
        scope: AccessScope,
        seed_filter: SeedFilter,
        top_k: int,
    ) -> list[VectorHit]:
        """The best ``top_k`` hits of each query vector visible in ``scope`` whose vector's project key
        and facets pass ``seed_filter`` (:meth:`~brain_graph.core.filters.SeedFilter.matches`), scored
        with :func:`~brain_graph.core.scoring.similarity_from_cosine` of
        :func:`~brain_graph.core.scoring.cosine` over the stored vector, ordered by score descending then node
        id. Raises :class:`~brain_graph.stores.identity.EmbeddingMismatchError` when a query's embedder
        or dimension is not the one the profile was indexed with. One round trip for all queries."""
        ...

    def similarity(
        self, queries: Sequence[VectorQuery], node_ids: Sequence[str], *, scope: AccessScope
    ) -> list[VectorHit]:
        """The score of each query vector against the stored vector of each of ``node_ids`` that is
        visible in ``scope`` and has a vector in the query's profile (any project), scored exactly as
        :meth:`query` scores; ordered by profile id (the queries' order), then score descending, then
        node id. The same embedder checks as :meth:`query`. One request per profile at most, whatever
        the number of ids."""
        ...

    def lexical(
        self,
        queries: Sequence[LexicalQuery],
        *,
        scope: AccessScope,
        seed_filter: SeedFilter,
        top_k: int,
    ) -> list[VectorHit]:
        """The best ``top_k`` lexical documents of each query visible in ``scope`` that pass
        ``seed_filter`` (as :meth:`query`) with a positive score, scored with :func:`brain_graph.core.bm25.score`
        over the statistics of all the tenant's documents in the query's profile (visible or not),
        ordered by score descending then node id. Raises
        :class:`~brain_graph.core.errors.InvalidRequestError` on a backend without lexical documents
        (``supports_lexical`` False). One round trip for all queries."""
        ...

    def untimed(self, profile_ids: Sequence[str], *, scope: AccessScope, seed_filter: SeedFilter) -> bool:
        """Whether ``seed_filter``'s recency part leaves out some vector of ``profile_ids`` visible in
        ``scope`` for having no update time (:meth:`~brain_graph.core.filters.SeedFilter.untimed`);
        False without a recency part. One round trip at most."""
        ...


@runtime_checkable
class GraphStore(Protocol):
    """Batched reads of the knowledge graph."""

    def get_nodes(self, node_ids: Sequence[str], *, scope: AccessScope) -> list[NodeRecord]:
        """The metadata of the visible nodes among ``node_ids`` (type, project, title, url, secured,
        acl, properties; ``text`` is left empty and not read), in any order; invisible or missing ids
        are left out."""
        ...

    def links(
        self, frontier: Sequence[str], *, scope: AccessScope, edge_types: Sequence[str], max_degree: int
    ) -> Neighborhood:
        """Every link of ``edge_types`` (either direction) between a frontier node and a visible node
        other than itself, for the frontier nodes of at most ``max_degree`` distinct visible neighbours;
        the degree of every frontier node, up to ``max_degree + 1``. A pair joined by several edges gives
        one link per edge (type and direction). One round trip for the whole frontier; a hub's links
        are not fetched, and no more of its edges are read than counting to ``max_degree + 1`` needs."""
        ...

    def edges_among(
        self, node_ids: Sequence[str], *, scope: AccessScope, edge_types: Sequence[str]
    ) -> list[EdgeRecord]:
        """Edges of ``edge_types`` whose both ends are in ``node_ids``, ordered by :func:`edge_sort_key`."""
        ...

    def cluster_memberships(
        self, node_ids: Sequence[str], *, scope: AccessScope, known: Sequence[str] = ()
    ) -> list[ClusterMembership]:
        """Visible clusters the given nodes belong to, with visible member counts, ordered by cluster id
        then member id. The record of a cluster whose id is in ``known`` is not read (``cluster`` is
        None). One round trip."""
        ...


@dataclass(frozen=True)
class ScoredNeighbors:
    """The vector scores, in ``profile_ids``, of the nodes the seeds' links reach other than the hits:
    what :meth:`SearchReads.similarity` of those profiles returns for them, read in the seeds' round
    trip by a backend that can (``hits`` in the queries' order, each profile's by score descending
    then node id)."""

    profile_ids: tuple[str, ...]
    hits: list[VectorHit]


@dataclass(frozen=True)
class Seeds:
    """What :meth:`SearchReads.seeds` read: ``hits``, one per node (its best profile), the best
    ``top_k`` of the nodes visible in the scope, ordered by score descending then node id; ``nodes``,
    the metadata of those nodes by id; ``links``, the links of the hits (as :meth:`GraphStore.links`
    gives them, sorted) when asked for, else None; ``scored``, the similarity of the nodes those links
    reach in some of the queried profiles, when the backend read it with them (else None: the caller
    asks :meth:`SearchReads.similarity`); ``lexical``, the lexical hits when lexical queries were
    asked for, one per node (its best profile), the best ``top_k`` visible, ordered as ``hits`` (their
    nodes in ``nodes``, their links in ``links``); ``untimed``, :meth:`VectorIndex.untimed` of the
    queried profiles (vector and lexical) under the seed filter."""

    hits: list[VectorHit]
    nodes: dict[str, NodeRecord]
    links: list[Link] | None
    scored: ScoredNeighbors | None = None
    lexical: list[VectorHit] = field(default_factory=list)
    untimed: bool = False  # VectorIndex.untimed of the queried profiles


@dataclass(frozen=True)
class Hop:
    """What :meth:`SearchReads.hop` read: the ``links`` of a frontier (as :meth:`GraphStore.links`
    gives them, sorted) and, when the backend read it with them, the similarity of the nodes they
    reach in some of the queried profiles (``scored``, as :attr:`Seeds.scored`), else None."""

    links: list[Link]
    scored: ScoredNeighbors | None = None


@dataclass(frozen=True)
class ContextRequest:
    """What :meth:`SearchReads.context` reads once a search's expansion is done.

    ``known``: admitted nodes whose metadata was read (visible); ``new``: admitted nodes whose metadata
    is still to be read. ``records``: every id whose metadata the search read (their cluster records
    are not read again). ``edge_types``: the edges read among the visible admitted nodes. ``members``:
    the nodes whose clusters are read (none: no cluster read). ``ranked``: the admitted nodes in rank
    order; the texts of its first ``passages`` visible nodes are read."""

    known: Sequence[str]
    new: Sequence[str]
    records: Sequence[str]
    edge_types: Sequence[str]
    members: Sequence[str]
    ranked: Sequence[str]
    passages: int
    whole_texts: bool = False


@dataclass(frozen=True)
class SearchContext:
    """What :meth:`SearchReads.context` read: ``nodes``, the metadata of the visible ``new`` nodes (any
    order); ``edges``, as :meth:`GraphStore.edges_among` gives them for ``known`` plus the visible
    ``new`` nodes; ``memberships``, as :meth:`GraphStore.cluster_memberships` gives them for
    ``members`` (``known``: ``records`` plus the visible ``new`` nodes); ``cited``, the first
    ``passages`` nodes of ``ranked`` among ``known`` and the visible ``new`` nodes, in rank order; and
    ``texts``, as :meth:`PassageSource.get_passage_heads` gives them for ``cited`` (``whole``: the
    request's ``whole_texts``)."""

    nodes: list[NodeRecord]
    edges: list[EdgeRecord]
    memberships: list[ClusterMembership]
    cited: list[str]
    texts: dict[str, Mapping[str, FieldHead]]


def best_hits(raw: Sequence[VectorHit], top_k: int) -> list[VectorHit]:
    """One hit per node (its best profile: score, then profile id), the best ``top_k`` ordered by score
    descending, then node id."""
    best: dict[str, VectorHit] = {}
    for hit in raw:
        current = best.get(hit.node_id)
        if current is None or (-hit.score, hit.profile_id) < (-current.score, current.profile_id):
            best[hit.node_id] = hit
    return sorted(best.values(), key=lambda hit: (-hit.score, hit.node_id))[:top_k]


@runtime_checkable
class SearchReads(Protocol):
    """The reads of one search, combined so that a backend can answer several pipeline steps' needs
    in one round trip. Each method returns exactly what the composition of the single reads it
    documents returns (:class:`~brain_graph.stores.search_reads.ComposedSearchReads` is that
    composition)."""

    def seeds(
        self,
        queries: Sequence[VectorQuery],
        *,
        scope: AccessScope,
        seed_filter: SeedFilter,
        top_k: int,
        link_types: Sequence[str],
        max_degree: int,
        lexical: Sequence[LexicalQuery] = (),
    ) -> Seeds:
        """:meth:`VectorIndex.query` (no request without ``queries``) and :meth:`VectorIndex.lexical`
        of ``lexical`` (none without) under ``seed_filter``, :meth:`VectorIndex.untimed` when it has a
        recency part, :func:`best_hits` of each, :meth:`GraphStore.get_nodes` of those
        hits (the invisible dropped), then, when ``link_types`` is not empty, :meth:`GraphStore.links`
        of the visible hits of both over ``link_types`` with ``max_degree``, and optionally
        (``Seeds.scored``) :meth:`VectorIndex.similarity` of the nodes those links reach, in some of
        the profiles."""
        ...

    def hop(
        self,
        queries: Sequence[VectorQuery],
        frontier: Sequence[str],
        *,
        scope: AccessScope,
        edge_types: Sequence[str],
        max_degree: int,
    ) -> Hop:
        """:meth:`GraphStore.links` of ``frontier`` (a hop after the first) and optionally
        (``Hop.scored``) :meth:`VectorIndex.similarity` of the nodes those links reach, in some of the
        profiles."""
        ...

    def similarity(
        self, queries: Sequence[VectorQuery], node_ids: Sequence[str], *, scope: AccessScope
    ) -> list[VectorHit]:
        """:meth:`VectorIndex.similarity`, in a search after :meth:`seeds`."""
        ...

    def context(self, request: ContextRequest, *, scope: AccessScope) -> SearchContext:
        """The reads of a search after its expansion (see :class:`ContextRequest`)."""
        ...


@runtime_checkable
class PassageSource(Protocol):
    """Text of the nodes that passages are built from."""

    def get_texts(self, node_ids: Sequence[str], *, scope: AccessScope) -> dict[str, Mapping[str, str]]:
        """The text fields of the visible nodes among ``node_ids``, keyed by node id (nothing else is read)."""
        ...

    def get_passage_heads(
        self, node_ids: Sequence[str], *, scope: AccessScope, whole: bool = False
    ) -> dict[str, Mapping[str, FieldHead]]:
        """The passage fields of the visible nodes among ``node_ids`` as passages read them
        (:mod:`brain_graph.core.passage_heads`), keyed by node id: read bounded, from the heads stored
        with long texts; with ``whole``, made whole from the texts."""
        ...


@runtime_checkable
class AdminOperations(Protocol):
    """Operations of tests, benchmarks and operators, outside searches."""

    def drop_tenants(self, tenant_ids: Sequence[str]) -> None:
        """Delete everything of these tenants."""
        ...

    def drop_profiles(self, profile_ids: Sequence[str]) -> None:
        """Delete the vectors and the recorded embedder identity of these profiles (all tenants)."""
        ...

    def count(self, tenant_id: str) -> TenantCounts:
        """The nodes, edges and vectors per profile a tenant holds."""
        ...

    def round_trips(self) -> dict[str, int]:
        """Requests sent so far, per server (``{"sqlite": statements}`` for the embedded store)."""
        ...


@runtime_checkable
class IndexStore(Protocol):
    """The reads of the write side (the indexer, the hooks): whole records, outside any search scope.
    Ids are ordered by code point (byte order of UTF-8) everywhere."""

    def tenants(self) -> list[str]:
        """Every tenant holding at least one node, sorted."""
        ...

    def node_page(
        self, tenant_id: str, *, node_types: Sequence[str], after: str | None, limit: int
    ) -> list[NodeRecord]:
        """Full records (``text`` included) of the tenant's nodes of ``node_types`` whose id sorts
        after ``after`` (all when None): the first ``limit`` of them by id. One round trip."""
        ...

    def count_nodes(self, tenant_id: str, node_types: Sequence[str]) -> int:
        """How many nodes of ``node_types`` the tenant holds (progress totals). One round trip."""
        ...

    def get_records(self, tenant_id: str, node_ids: Sequence[str]) -> list[NodeRecord]:
        """Full records (``text`` included) of the tenant's nodes among ``node_ids``, sorted by id;
        missing ids are left out. One round trip."""
        ...

    def vector_states(
        self, tenant_id: str, profile_id: str, node_ids: Sequence[str] | None = None
    ) -> list[VectorState]:
        """The tenant's stored vectors of a profile (those of ``node_ids`` only, when given), sorted by
        node id, each telling whether searches see it as stored (``searchable``). Bounded round trips
        per call, whatever the number of vectors (paged reads)."""
        ...

    def recorded_profiles(self) -> dict[str, ProfileIndexInfo]:
        """The embedder identity recorded for each profile that has one."""
        ...


@runtime_checkable
class StreamedLoad(Protocol):
    """A backend whose replace-load takes its vectors as a stream, iterated once while it writes (one
    transaction): what :meth:`load_streamed` promises beyond :meth:`StorageBackend.load` is that a
    failure while iterating ``vectors`` leaves the store as it was. ``vectors`` carries the tenants
    it may write (``tenants``) and is checked as it is made (``checked``)."""

    def load_streamed(
        self,
        nodes: Sequence[NodeRecord],
        edges: Sequence[EdgeRecord],
        vectors: Iterable[VectorRecord],
        profiles: Sequence[ProfileIndexInfo],
    ) -> None:
        """Replace the tenants of ``nodes`` by ``nodes``, ``edges`` and ``vectors``."""
        ...


@runtime_checkable
class StorageBackend(Protocol):
    """A deployment's stores, plus loading.

    ``load`` first runs :func:`brain_graph.stores.write_checks.check_load` (a dataset a store could refuse
    writes nothing), then applies the embedder-identity rule of
    :func:`~brain_graph.stores.identity.profile_conflict`. It is idempotent; with ``replace`` the loaded
    tenants' previous contents are replaced, and a replace-load that fails at any point leaves every
    search returning what it returned before."""

    name: str
    supports_lexical: bool  # whether the vector index holds lexical documents (VectorIndex.lexical)

    @property
    def vector_index(self) -> VectorIndex:
        """The vector index."""
        ...

    @property
    def graph_store(self) -> GraphStore:
        """The graph store."""
        ...

    @property
    def passage_source(self) -> PassageSource:
        """Where passage texts come from."""
        ...

    @property
    def search_reads(self) -> SearchReads:
        """The combined reads of a search (the pipeline's steps use these)."""
        ...

    @property
    def admin(self) -> AdminOperations:
        """Administration: drop, count, round-trip counters."""
        ...

    @property
    def index_store(self) -> IndexStore:
        """Reads of the write side."""
        ...

    def apply(self, changes: ChangeSet) -> None:
        """Apply a :class:`ChangeSet` to the graph and the vectors together: checked first
        (:func:`~brain_graph.stores.write_checks.check_load` on its records), then written; when any write
        fails, both stores are left as they were and the error is raised. Writes go to each tenant's
        current data (a tenant without data gets it); searches may see a change only as a whole
        on the embedded store, and on Neo4j + Weaviate may briefly see the vectors before the graph."""
        ...

    def load(
        self,
        nodes: Sequence[NodeRecord],
        edges: Sequence[EdgeRecord],
        vectors: Sequence[VectorRecord],
        profiles: Sequence[ProfileIndexInfo],
        *,
        replace: bool,
    ) -> None:
        """Write a dataset (nodes, edges, their vectors); with ``replace`` the tenants of ``nodes`` are
        replaced as a whole, else upserted into."""
        ...

    def close(self) -> None:
        """Release connections."""
        ...
