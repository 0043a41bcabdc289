"""Vector search on Weaviate: one gRPC request per profile (sent together), then exact re-scoring.

The vector index is FLAT with cosine distance by default: an exact scan, so candidates do not depend
on graph construction order and results are deterministic (``hnsw`` trades that for speed on large
tenants). Tenant (the Weaviate tenant of the generation), visibility
(:func:`~brain_graph.stores.access.weaviate_visible`) and the seed filter (project and facets,
:mod:`.facets`) are filtered in the same request, so the candidates are the nearest matching objects.
``top_k + 10`` candidates are fetched with their vectors; those within :data:`TIE_MARGIN` of the
``top_k``-th (by Weaviate's own distance) are re-checked with
:meth:`~brain_graph.core.security.AccessScope.may_see` and
:meth:`~brain_graph.core.filters.SeedFilter.matches`, re-scored with the reference float64 cosine over
the returned float32 vectors (:func:`~brain_graph.stores.exact.exact_scores`, all of a request's at
once; bit-identical to the embedded store), ordered by (score desc, node id) and cut to ``top_k``. When the
last fetched candidate is itself that close to the boundary, an unfetched object could still tie,
and that profile's request is repeated with a four times larger limit (only with mass ties).

:meth:`WeaviateSearch.similarity` scores given nodes instead of searching: one request per profile
(sent together) for the objects whose ``nodeId`` is among the ids (``contains_any``, with the access
filter), with their vectors, scored the same way. A request returns at most
:data:`QUERY_MAX_RESULTS` objects, so more ids than that take one request per that many.

A seed filter with a recency part also asks, in the same batch, whether it leaves out a visible
object without an update time (:mod:`.untimed`, one gRPC request per searched collection).

Requests and replies are gRPC messages (:mod:`.grpc_search`): no event-loop hop, vectors decoded
straight into numpy. The profiles' recorded identity comes from the schema cache (:mod:`.schema`),
read over REST when it is stale.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import takewhile
from typing import Any, TypeVar

import numpy as np
import weaviate
from weaviate.proto.v1 import base_pb2, base_search_pb2, search_get_pb2

from brain_graph.core import bm25
from brain_graph.core.errors import BackendUnavailableError
from brain_graph.core.filters import NO_FILTER, SeedFilter
from brain_graph.core.security import AccessScope
from brain_graph.stores.access import weaviate_visible
from brain_graph.stores.base import LexicalQuery, VectorHit, VectorQuery
from brain_graph.stores.exact import exact_scores
from brain_graph.stores.identity import EmbeddingMismatchError, check_query_matches
from brain_graph.stores.neo4j_weaviate.weaviate import lexical as weaviate_lexical
from brain_graph.stores.neo4j_weaviate.weaviate import untimed as weaviate_untimed
from brain_graph.stores.neo4j_weaviate.weaviate.client import WeaviateConnection
from brain_graph.stores.neo4j_weaviate.weaviate.errors import BACKEND
from brain_graph.stores.neo4j_weaviate.weaviate.facets import all_of, facet_parts, project_part, returned_facets
from brain_graph.stores.neo4j_weaviate.weaviate.grpc_search import (
    FLOAT32,
    DimensionRejectedError,
    FoundObject,
    GrpcSearch,
    found_objects,
    search_request,
    vector_matrix,
)
from brain_graph.stores.neo4j_weaviate.weaviate.grpc_search import QUERY_MAX_RESULTS as QUERY_MAX_RESULTS
from brain_graph.stores.neo4j_weaviate.weaviate.naming import collection_name, tenant_name
from brain_graph.stores.neo4j_weaviate.weaviate.schema import ProfileCache, WeaviateSchema

T = TypeVar("T")
TIE_MARGIN = 1e-5  # > float32 distance error + score rounding
EXTRA_CANDIDATES = 10  # fetched beyond top_k: room for ties at the boundary before a wider fetch is needed


def filters(scope: AccessScope, seed_filter: SeedFilter, facets: Sequence[Any] = ()) -> Any:
    """The project filter, the ``facets`` filters (:func:`.facets.facet_parts` of ``seed_filter``) and
    the access rule's filter, combined (None when there is none)."""
    visible = weaviate_visible(scope)
    return all_of([*project_part(seed_filter.project_key), *facets, *([] if visible is None else [visible])])


def id_filter(scope: AccessScope, ids: Sequence[str]) -> Any:
    """The objects of ``ids`` visible in ``scope``."""
    named = base_pb2.Filters(
        operator=base_pb2.Filters.OPERATOR_CONTAINS_ANY,
        target=base_pb2.FilterTarget(property="nodeId"),
        value_text_array=base_pb2.TextArray(values=list(ids)),
    )
    visible = weaviate_visible(scope)
    return all_of([named] if visible is None else [named, visible])


def request(query: VectorQuery, tenant: str, where: Any, limit: int, properties: Sequence[str], *, near: bool) -> Any:
    """A ``SearchRequest`` in one profile's collection and Weaviate tenant, returning ``properties``
    and the stored vectors (and, with ``near``, ordered by distance to the query, distances returned)."""
    fields: dict[str, Any] = {
        "collection": collection_name(query.profile_id),
        "tenant": tenant,
        "limit": limit,
        "properties": search_get_pb2.PropertiesRequest(non_ref_properties=list(properties)),
        "metadata": search_get_pb2.MetadataRequest(vector=True, distance=near),
    }
    if where is not None:
        fields["filters"] = where
    if near:
        vector = base_pb2.Vectors(
            vector_bytes=np.asarray(query.vector, dtype=FLOAT32).tobytes(),
            type=base_pb2.Vectors.VECTOR_TYPE_SINGLE_FP32,
        )
        fields["near_vector"] = base_search_pb2.NearVector(vectors=[vector])
    return search_request(**fields)


def visible_to(scope: AccessScope, obj: FoundObject) -> bool:
    """Whether a returned object is visible in ``scope`` (the access rule re-checked in Python)."""
    return scope.may_see(obj.tenant_id, obj.secured, obj.acl)


def visible_objects(objects: Sequence[FoundObject], scope: AccessScope, seed_filter: SeedFilter) -> list[FoundObject]:
    """The returned objects visible in ``scope`` whose project and facets pass ``seed_filter`` (both
    re-checked in Python)."""
    return [obj for obj in objects if visible_to(scope, obj) and seed_filter.matches(obj.project_key, obj.facets)]


def returned(scope: AccessScope, seed_filter: SeedFilter) -> list[str]:
    """The properties a read returns for :func:`visible_to` and the seed filter's check: the ACL only
    when ``scope`` reads it (secured items, by identity), the project key only with a project part,
    the facets of the parts set (:func:`.facets.returned_facets`): every returned property is decoded
    for every object."""
    names = ["tenantId", "nodeId", "secured"]
    if scope.identities and not scope.all_secured:
        names.append("acl")
    if seed_filter.project_key is not None:
        names.append("projectKey")
    return names + returned_facets(seed_filter)


def score(query: VectorQuery, objects: Sequence[FoundObject]) -> list[VectorHit]:
    """The hits of returned objects, scored over their stored vectors exactly like the embedded store
    (:func:`~brain_graph.stores.exact.exact_scores`), in the objects' order."""
    dimension = len(query.vector)
    vectors = vector_matrix(objects, dimension)
    if vectors is None:
        stored = next(len(obj.vector) // FLOAT32.itemsize for obj in objects if len(obj.vector) != 4 * dimension)
        raise EmbeddingMismatchError(
            f"profile {query.profile_id}: query vector has dimension {dimension}, the index holds dimension {stored}"
        )
    scores = exact_scores(query.vector, vectors)
    return [VectorHit(obj.node_id, query.profile_id, value) for obj, value in zip(objects, scores, strict=True)]


def certainty(obj: FoundObject) -> float:
    """Weaviate's certainty ``1 - distance / 2`` (1.0 without a distance)."""
    return 1.0 - obj.distance / 2.0 if obj.distance is not None else 1.0


def rescore(
    query: VectorQuery, objects: Sequence[FoundObject], scope: AccessScope, seed_filter: SeedFilter, top_k: int
) -> tuple[list[VectorHit], bool]:
    """Score the candidates exactly like the embedded store (tenant, ACL and seed filter re-checked)
    and tell whether unfetched objects could still tie at the ``top_k`` boundary.

    Weaviate's certainty ``1 - distance / 2`` is the score before rounding, within float32 error (far
    below :data:`TIE_MARGIN`). Candidates more than the margin below the ``top_k``-th visible candidate
    cannot reach the top ``top_k`` and are not re-scored; objects not fetched rank after the last
    fetched one, so they matter only if it is within the margin of that boundary."""
    visible = visible_objects(objects, scope, seed_filter)
    bound = certainty(visible[top_k - 1]) - TIE_MARGIN if len(visible) >= top_k else float("-inf")
    close = list(takewhile(lambda obj: certainty(obj) >= bound, visible))  # nearest first
    hits = sorted(score(query, close), key=lambda hit: (-hit.score, hit.node_id))
    saturated = bool(objects) and certainty(objects[-1]) >= bound
    return hits, saturated


@dataclass(frozen=True)
class Searched:
    """What one round of a search found: the vector hits, the lexical hits, and whether the seed
    filter's recency part leaves out a visible object without an update time (:mod:`.untimed`)."""

    hits: list[VectorHit] = field(default_factory=list)
    lexical: list[VectorHit] = field(default_factory=list)
    untimed: bool = False


class WeaviateSearch:
    """The :meth:`~brain_graph.stores.base.VectorIndex.query`,
    :meth:`~brain_graph.stores.base.VectorIndex.lexical`,
    :meth:`~brain_graph.stores.base.VectorIndex.untimed` and
    :meth:`~brain_graph.stores.base.VectorIndex.similarity` of one generation of a tenant."""

    def __init__(self, connection: WeaviateConnection, schema: WeaviateSchema, grpc_search: GrpcSearch) -> None:
        self._connection = connection
        self._schema = schema
        self._grpc = grpc_search

    def query(
        self,
        queries: Sequence[VectorQuery],
        scope: AccessScope,
        seed_filter: SeedFilter,
        top_k: int,
        generation: int | None,
    ) -> list[VectorHit]:
        """Check the queries against the recorded profiles, then search every profile at once in the
        Weaviate tenant of ``generation`` (None: the tenant has no data, no hits)."""
        return self.search(queries, (), scope, seed_filter, top_k, generation).hits

    def lexical(
        self,
        queries: Sequence[LexicalQuery],
        scope: AccessScope,
        seed_filter: SeedFilter,
        top_k: int,
        generation: int | None,
    ) -> list[VectorHit]:
        """The lexical hits of every query (:mod:`.lexical`) in the Weaviate tenant of ``generation``
        (None: no data, no hits), one round: a BM25 request per query with terms, and one statistics
        request for all of them, sent together."""
        return self.search((), queries, scope, seed_filter, top_k, generation).lexical

    def untimed(
        self, profile_ids: Sequence[str], scope: AccessScope, seed_filter: SeedFilter, generation: int | None
    ) -> bool:
        """Whether ``seed_filter``'s recency part leaves out a visible object without an update time in
        one of ``profile_ids`` (:mod:`.untimed`): one gRPC request per collection, sent together, none
        without a recency part or a generation."""
        return self.search((), (), scope, seed_filter, 0, generation, untimed=profile_ids).untimed

    def search(
        self,
        queries: Sequence[VectorQuery],
        lexical: Sequence[LexicalQuery],
        scope: AccessScope,
        seed_filter: SeedFilter,
        top_k: int,
        generation: int | None,
        *,
        untimed: Sequence[str] = (),
    ) -> Searched:
        """The vector hits of ``queries`` and the lexical hits of ``lexical`` that pass ``seed_filter``
        (a query without terms, or of a profile whose collection does not exist or holds no lexical
        documents, has none; with a facet part, neither has a collection without the facet
        properties), and with a recency part the untimed check of the profiles ``untimed``: the
        requests of all sent in one round (one gRPC batch of the vector, BM25 and untimed requests,
        and the lexical statistics, a GraphQL request, concurrently), then, only with mass ties at a
        vector query's ``top_k`` boundary, wider vector requests."""
        checked = list(untimed) if seed_filter.updated_after is not None else []
        cache, targets, lexical_targets = self._targets(queries, lexical, seed_filter, checked)
        facets = facet_parts(seed_filter)
        if generation is None or facets is None:
            return Searched()
        if top_k <= 0:
            targets, lexical_targets = [], []
        untimed_targets = weaviate_untimed.untimed_targets(checked, cache, scope, seed_filter)
        if not (targets or lexical_targets or untimed_targets):
            return Searched()
        where = filters(scope, seed_filter, facets)
        properties = returned(scope, seed_filter)
        tenant = tenant_name(scope.tenant_id, generation)
        limits = {q.profile_id: min(top_k + EXTRA_CANDIDATES, QUERY_MAX_RESULTS) for q in targets}
        found: dict[str, list[VectorHit]] = {}
        pending = list(targets)
        batch = [request(q, tenant, where, limits[q.profile_id], properties, near=True) for q in pending]
        candidates = weaviate_lexical.candidates(top_k)
        batch += (weaviate_lexical.bm25_request(q, tenant, where, candidates, properties) for q in lexical_targets)
        batch += (weaviate_untimed.untimed_request(target, tenant) for target in untimed_targets)
        documents = [weaviate_lexical.stats_document(lexical_targets, tenant)] if lexical_targets else []
        replies, answers = self._send(pending, batch, documents)
        stats = self._stats(lexical_targets, answers[0]) if lexical_targets else []
        searched = len(pending) + len(lexical_targets)
        untimed_found = weaviate_untimed.untimed_found(replies[searched:], scope, seed_filter)
        lexical_hits = [
            hit
            for query, reply, corpus in zip(lexical_targets, replies[len(pending) : searched], stats, strict=True)
            for hit in weaviate_lexical.ranked_hits(
                query,
                visible_objects(found_objects(reply) if reply is not None else [], scope, seed_filter),
                corpus,
                top_k,
            )
        ]
        replies = replies[: len(pending)]
        while pending:
            wider = []
            for query, reply in zip(pending, replies, strict=True):
                objects = found_objects(reply) if reply is not None else []
                hits, saturated = self._checked(rescore, query, objects, scope, seed_filter, top_k)
                limit = limits[query.profile_id]
                if saturated and len(objects) >= limit and limit < QUERY_MAX_RESULTS:
                    limits[query.profile_id] = min(limit * 4, QUERY_MAX_RESULTS)
                    wider.append(query)
                else:
                    found[query.profile_id] = hits[:top_k]
            pending = wider
            if pending:
                batch = [request(q, tenant, where, limits[q.profile_id], properties, near=True) for q in pending]
                replies, _ = self._send(pending, batch)
        return Searched([hit for q in targets for hit in found[q.profile_id]], lexical_hits, untimed_found)

    def similarity(
        self, queries: Sequence[VectorQuery], node_ids: Sequence[str], scope: AccessScope, generation: int | None
    ) -> list[VectorHit]:
        """Check the queries against the recorded profiles, then score the visible objects of
        ``node_ids`` in every profile at once, in the queries' order (None: no data, no hits)."""
        _, targets, _ = self._targets(queries, (), NO_FILTER, ())
        ids = sorted(set(node_ids))
        if not targets or not ids or generation is None:
            return []
        tenant = tenant_name(scope.tenant_id, generation)
        chunks = [ids[start : start + QUERY_MAX_RESULTS] for start in range(0, len(ids), QUERY_MAX_RESULTS)]
        asked = [(q, chunk) for q in targets for chunk in chunks]
        properties = returned(scope, NO_FILTER)
        batch = [request(q, tenant, id_filter(scope, chunk), len(chunk), properties, near=False) for q, chunk in asked]
        replies, _ = self._send([q for q, _ in asked], batch)
        wanted = set(ids)
        hits: list[VectorHit] = []
        for query in targets:
            objects = [
                obj
                for (asked_query, _), reply in zip(asked, replies, strict=True)
                if asked_query is query and reply is not None
                for obj in found_objects(reply)
                if obj.node_id in wanted and visible_to(scope, obj)
            ]
            scored = self._checked(score, query, objects)
            hits.extend(sorted(scored, key=lambda hit: (-hit.score, hit.node_id)))
        return hits

    def _checked(self, compute: Callable[..., T], *args: Any) -> T:
        """``compute(*args)``, forgetting the schema cache when it finds stored vectors of another
        dimension (the collection was recreated since it was cached)."""
        try:
            return compute(*args)
        except EmbeddingMismatchError:
            self._schema.invalidate()
            raise

    def _send(
        self, queries: Sequence[VectorQuery], batch: Sequence[Any], documents: Sequence[str] = ()
    ) -> tuple[list[Any | None], list[Any]]:
        """Send the gRPC requests of ``batch`` together (those of the vector ``queries`` first), with the
        GraphQL ``documents`` alongside when given; the replies and the GraphQL replies, in order. A
        refused dimension is an :class:`EmbeddingMismatchError`."""
        self._connection.tick(len(batch) + len(documents))
        try:
            if not documents:
                return self._grpc.search(batch), []
            return self._connection.call(lambda client: self._together(client, batch, documents), None)
        except DimensionRejectedError as rejected:
            self._schema.invalidate()
            if rejected.index >= len(queries):
                raise BackendUnavailableError(BACKEND, rejected.details) from None
            query = queries[rejected.index]
            raise EmbeddingMismatchError(
                f"profile {query.profile_id}: query vector has dimension {len(query.vector)}, "
                f"which the index rejects: {rejected.details}"
            ) from None

    async def _together(
        self, client: weaviate.WeaviateAsyncClient, batch: Sequence[Any], documents: Sequence[str]
    ) -> tuple[list[Any | None], list[Any]]:
        """The gRPC searches (on a worker thread) and the GraphQL requests, concurrently."""
        searched = asyncio.to_thread(self._grpc.search, batch) if batch else _no_replies()
        replies, *answers = await asyncio.gather(searched, *(client.graphql_raw_query(d) for d in documents))
        return replies, answers

    def _stats(self, lexical: Sequence[LexicalQuery], reply: Any) -> list[bm25.CorpusStats | None]:
        """The statistics of the ``lexical`` queries from the reply to their statistics document."""
        try:
            return weaviate_lexical.parse_stats(lexical, reply.aggregate, reply.errors)
        except weaviate_lexical.StatsUnavailableError:
            self._schema.invalidate()  # a collection dropped, or recreated, since the cache was read
            return [None] * len(lexical)

    def _targets(
        self,
        queries: Sequence[VectorQuery],
        lexical: Sequence[LexicalQuery],
        seed_filter: SeedFilter,
        untimed: Sequence[str],
    ) -> tuple[ProfileCache, list[VectorQuery], list[LexicalQuery]]:
        """The profile cache (read when stale or when it misses what the queries need,
        :meth:`WeaviateSchema.fresh`), after checking every query against its profile; the queries
        whose profile has a collection, and the lexical queries with terms whose profile's collection
        holds lexical documents, both only of collections with the facet properties when
        ``seed_filter`` has a facet part (an object without facets matches none)."""
        profile_ids = [q.profile_id for q in queries]
        lexical_ids = [q.profile_id for q in lexical if q.terms]
        faceted = bool(seed_filter.narrowed_facets)
        facet_ids = [*profile_ids, *lexical_ids, *untimed] if faceted else []
        cache = self._schema.fresh(profile_ids, lexical=lexical_ids, facets=facet_ids)
        if cache is None:

            async def read(client: weaviate.WeaviateAsyncClient) -> ProfileCache:
                return await self._schema.for_query(client, profile_ids, lexical=lexical_ids, facets=facet_ids)

            cache = self._connection.call(read, self._connection.timeout_s)
        for query in queries:
            check_query_matches(query, cache.profiles.get(query.profile_id))

        def searched(profile_id: str) -> bool:
            return not faceted or cache.facets(profile_id)

        return (
            cache,
            [q for q in queries if collection_name(q.profile_id) in cache.collections and searched(q.profile_id)],
            [q for q in lexical if q.terms and cache.lexical(q.profile_id) and searched(q.profile_id)],
        )


async def _no_replies() -> list[Any | None]:
    """The replies to no gRPC request."""
    return []
