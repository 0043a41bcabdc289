"""Store protocols every backend implements, and the records they exchange.

Every read takes many ids at once and an :class:`~brain_graph.security.AccessScope`; a search calls
each method at most once per pipeline step (once per hop for expansion), never once per hit.
Backends must return exactly what is visible in the scope (tenant and ACL), in the documented order.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from brain_graph.errors import ConfigurationError
from brain_graph.security import AccessScope

SCORE_DECIMALS = 6


def similarity_from_cosine(cosine: float) -> float:
    """Map cosine similarity in [-1, 1] to a score in [0, 1] (Weaviate's "certainty"), rounded so every
    backend yields the same value for the same vectors."""
    return round(min(1.0, max(0.0, (1.0 + cosine) / 2.0)), SCORE_DECIMALS)


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    """Cosine similarity in float64. Every backend scores with this function over the stored float32
    vectors, so the same data gives bit-identical scores everywhere."""
    dot = norm_a = norm_b = 0.0
    for x, y in zip(a, b, strict=True):
        dot += x * y
        norm_a += x * x
        norm_b += y * y
    if norm_a == 0.0 or norm_b == 0.0:
        return 0.0
    return dot / math.sqrt(norm_a * norm_b)


def to_float32(vector: Sequence[float]) -> list[float]:
    """The vector as stored by every backend: float32 values."""
    return list(array("f", vector))


@dataclass(frozen=True)
class VectorQuery:
    """One query vector for one embedding profile, with the embedder that produced it (checked
    against what the index was built with)."""

    profile_id: str
    vector: Sequence[float]
    embedder_name: str


@dataclass(frozen=True)
class ProfileIndexInfo:
    """What an index records about a profile: the embedder and dimension of its vectors."""

    profile_id: str
    embedder_name: str
    dimension: int


class EmbeddingMismatchError(ConfigurationError):
    """A query vector does not match the embedder or dimension a profile was indexed with."""

    code = "EMBEDDING_MISMATCH"


def check_query_matches(query: VectorQuery, indexed: ProfileIndexInfo | None) -> None:
    """Raise :class:`EmbeddingMismatchError` unless ``query`` fits the indexed profile (or none is indexed)."""
    if indexed is None:
        return
    if len(query.vector) != indexed.dimension:
        raise EmbeddingMismatchError(
            f"profile {query.profile_id}: query vector has dimension {len(query.vector)}, "
            f"the index holds dimension {indexed.dimension} ({indexed.embedder_name})"
        )
    if query.embedder_name != indexed.embedder_name:
        raise EmbeddingMismatchError(
            f"profile {query.profile_id}: query embedded by {query.embedder_name!r}, "
            f"the index was built by {indexed.embedder_name!r}; re-index or configure the same embedder"
        )


def profile_conflict(
    recorded: ProfileIndexInfo, loading: ProfileIndexInfo, holders: Sequence[str]
) -> ConfigurationError:
    """The error of a load that would change a profile's embedder identity while ``holders`` (tenants
    this load does not replace) still hold vectors of the recorded one.

    The rule, the same on every backend: a profile's embedder identity (embedder name + dimension)
    belongs to the index and is shared by all its tenants. A load with another identity is refused
    unless every tenant holding vectors of the profile is replaced by that load; then the new identity
    is recorded (re-indexing the profile)."""
    shown = ", ".join(repr(tenant[:80]) for tenant in holders[:5])
    more = f" and {len(holders) - 5} more" if len(holders) > 5 else ""
    return ConfigurationError(
        f"profile {loading.profile_id}: the index records embedder {recorded.embedder_name!r} "
        f"(dimension {recorded.dimension}), this load has {loading.embedder_name!r} (dimension "
        f"{loading.dimension}); tenant(s) {shown}{more} still hold vectors of the recorded embedder: "
        "replace them in the same load, or drop them, to re-index the profile"
    )


@dataclass(frozen=True)
class VectorHit:
    """A vector match. Ordered by ``score`` descending, then ``node_id``, then ``profile_id``."""

    node_id: str
    profile_id: str
    score: float


@dataclass(frozen=True)
class VectorRecord:
    """A vector to write, with the metadata the index filters on."""

    tenant_id: str
    node_id: str
    profile_id: str
    project_key: str | None
    secured: bool
    acl: tuple[str, ...]
    vector: Sequence[float]


@dataclass(frozen=True)
class NodeRecord:
    """A graph node as stored. ``text`` holds passage fields (summary, description, body)."""

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


@dataclass(frozen=True)
class EdgeRecord:
    """A directed, typed edge between two nodes of one tenant."""

    tenant_id: str
    edge_type: str
    from_node_id: str
    to_node_id: str
    properties: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, order=True)
class Adjacency:
    """A neighbour reached from the frontier: ``frontier_index`` is the position in the request of the
    frontier node it was first reached from, ``edge_type`` the type of that edge. The dataclass order
    (frontier_index, edge_type, neighbor_id) is the total order of :meth:`GraphStore.neighbors`."""

    frontier_index: int
    edge_type: str
    neighbor_id: str


@dataclass(frozen=True)
class ClusterMembership:
    """A cluster a node belongs to (via IN_CLUSTER) and the cluster's visible member count."""

    member_id: str
    cluster: NodeRecord
    cluster_size: int


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
        project_key: str | None,
        top_k: int,
    ) -> list[VectorHit]:
        """The best ``top_k`` hits of each query vector visible in ``scope`` (and in ``project_key`` if
        set), scored with :func:`similarity_from_cosine` of :func:`cosine` over the stored vector, ordered
        by score descending then node id. Raises :class:`EmbeddingMismatchError` when a query's embedder
        or dimension is not the one the profile was indexed with. One round trip for all queries."""
        ...


@runtime_checkable
class GraphStore(Protocol):
    """Batched reads of the knowledge graph."""

    def get_nodes(self, node_ids: Sequence[str], *, scope: AccessScope) -> list[NodeRecord]:
        """The visible nodes among ``node_ids``, in any order; invisible or missing ids are left out."""
        ...

    def neighbors(
        self,
        frontier: Sequence[str],
        *,
        scope: AccessScope,
        edge_types: Sequence[str],
        exclude: Sequence[str],
        limit: int,
    ) -> list[Adjacency]:
        """New neighbours of the frontier: nodes joined to a frontier node by an edge of ``edge_types``
        (either direction), visible in ``scope`` and not in ``exclude``. One :class:`Adjacency` per
        neighbour, its smallest; sorted; at most ``limit``. One round trip for the whole frontier."""
        ...

    def edges_among(
        self, node_ids: Sequence[str], *, scope: AccessScope, edge_types: Sequence[str]
    ) -> list[EdgeRecord]:
        """Edges of ``edge_types`` whose both ends are in ``node_ids``, ordered by :func:`edge_sort_key`."""
        ...

    def cluster_memberships(self, node_ids: Sequence[str], *, scope: AccessScope) -> list[ClusterMembership]:
        """Visible clusters the given nodes belong to via IN_CLUSTER, with visible member counts,
        ordered by cluster id then member id."""
        ...


@runtime_checkable
class PassageSource(Protocol):
    """Text of the nodes that passages are built from."""

    def get_texts(self, node_ids: Sequence[str], *, scope: AccessScope) -> dict[str, NodeRecord]:
        """Visible nodes with their ``text`` fields, keyed by node id."""
        ...


@runtime_checkable
class StorageBackend(Protocol):
    """A deployment's stores, plus loading.

    ``load`` first runs :func:`brain_graph.write_checks.check_load` (a dataset a store could refuse
    writes nothing), then applies the embedder-identity rule of :func:`profile_conflict`. It is
    idempotent; with ``replace`` the loaded tenants' previous contents are replaced, and a replace-load
    that fails at any point leaves every search returning what it returned before."""

    name: str

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
