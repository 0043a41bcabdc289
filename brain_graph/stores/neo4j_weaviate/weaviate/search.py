"""Vector search on Weaviate: one gRPC request per profile (sent together), then exact re-scoring.

The vector index is FLAT with cosine distance by default: an exact scan, so candidates do not depend
on graph construction order and results are deterministic (``hnsw`` trades that for speed on large
tenants). Tenant (the Weaviate tenant of the generation), project and visibility
(:func:`~brain_graph.stores.access.weaviate_visible`) are filtered in the same request.
``top_k + 10`` candidates are fetched with their vectors; those within :data:`TIE_MARGIN` of the
``top_k``-th (by Weaviate's own distance) are re-checked with
:meth:`~brain_graph.core.security.AccessScope.may_see`, re-scored with the reference float64 cosine over
the returned float32 vectors (:func:`~brain_graph.stores.exact.exact_scores`, all of a request's at
once; bit-identical to the embedded store), ordered by (score desc, node id) and cut to ``top_k``. When the
last fetched candidate is itself that close to the boundary, an unfetched object could still tie,
and that profile's request is repeated with a four times larger limit (only with mass ties).

:meth:`WeaviateSearch.similarity` scores given nodes instead of searching: one request per profile
(sent together) for the objects whose ``nodeId`` is among the ids (``contains_any``, with the access
filter), with their vectors, scored the same way. A request returns at most
:data:`QUERY_MAX_RESULTS` objects, so more ids than that take one request per that many.

Requests and replies are gRPC messages (:mod:`.grpc_search`): no event-loop hop, vectors decoded
straight into numpy. The profiles' recorded identity comes from the schema cache (:mod:`.schema`),
read over REST when it is stale.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from itertools import takewhile
from typing import Any, TypeVar

import numpy as np
import weaviate
from weaviate.proto.v1 import base_pb2, base_search_pb2, search_get_pb2

from brain_graph.core import bm25
from brain_graph.core.errors import BackendUnavailableError
from brain_graph.core.security import AccessScope
from brain_graph.stores.access import weaviate_visible
from brain_graph.stores.base import LexicalQuery, VectorHit, VectorQuery
from brain_graph.stores.exact import exact_scores
from brain_graph.stores.identity import EmbeddingMismatchError, check_query_matches
from brain_graph.stores.neo4j_weaviate.weaviate import lexical as weaviate_lexical
from brain_graph.stores.neo4j_weaviate.weaviate.client import WeaviateConnection
from brain_graph.stores.neo4j_weaviate.weaviate.errors import BACKEND
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


def _all_of(parts: Sequence[Any]) -> Any:
    """The conjunction of gRPC filters (None when there is none)."""
    if not parts:
        return None
    return parts[0] if len(parts) == 1 else base_pb2.Filters(operator=base_pb2.Filters.OPERATOR_AND, filters=parts)


def filters(scope: AccessScope, project_key: str | None) -> Any:
    """The project filter and the access rule's filter, combined (None when there is none)."""
    parts = []
    if project_key is not None:
        parts.append(
            base_pb2.Filters(
                operator=base_pb2.Filters.OPERATOR_EQUAL,
                target=base_pb2.FilterTarget(property="projectKey"),
                value_text=project_key,
            )
        )
    visible = weaviate_visible(scope)
    if visible is not None:
        parts.append(visible)
    return _all_of(parts)


def id_filter(scope: AccessScope, ids: Sequence[str]) -> Any:
    """The objects of ``ids`` visible in ``scope``."""
    named = base_pb2.Filters(
        operator=base_pb2.Filters.OPERATOR_CONTAINS_ANY,
        target=base_pb2.FilterTarget(property="nodeId"),
        value_text_array=base_pb2.TextArray(values=list(ids)),
    )
    visible = weaviate_visible(scope)
    return _all_of([named] if visible is None else [named, visible])


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


def visible_objects(objects: Sequence[FoundObject], scope: AccessScope, project_key: str | None) -> list[FoundObject]:
    """The returned objects visible in ``scope`` and of ``project_key`` if set (both re-checked in Python)."""
    return [
        obj for obj in objects if visible_to(scope, obj) and (project_key is None or obj.project_key == project_key)
    ]


def returned(scope: AccessScope, project_key: str | None) -> list[str]:
    """The properties a read returns for :func:`visible_to` and the project check: the ACL only when
    ``scope`` reads it (secured items, by identity), the project key only with a project filter: every
    returned property is decoded for every object."""
    names = ["tenantId", "nodeId", "secured"]
    if scope.identities and not scope.all_secured:
        names.append("acl")
    if project_key is not None:
        names.append("projectKey")
    return names


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
    query: VectorQuery, objects: Sequence[FoundObject], scope: AccessScope, project_key: str | None, top_k: int
) -> tuple[list[VectorHit], bool]:
    """Score the candidates exactly like the embedded store (tenant, project and ACL re-checked) and
    tell whether unfetched objects could still tie at the ``top_k`` boundary.

    Weaviate's certainty ``1 - distance / 2`` is the score before rounding, within float32 error (far
    below :data:`TIE_MARGIN`). Candidates more than the margin below the ``top_k``-th visible candidate
    cannot reach the top ``top_k`` and are not re-scored; objects not fetched rank after the last
    fetched one, so they matter only if it is within the margin of that boundary."""
    visible = visible_objects(objects, scope, project_key)
    bound = certainty(visible[top_k - 1]) - TIE_MARGIN if len(visible) >= top_k else float("-inf")
    close = list(takewhile(lambda obj: certainty(obj) >= bound, visible))  # nearest first
    hits = sorted(score(query, close), key=lambda hit: (-hit.score, hit.node_id))
    saturated = bool(objects) and certainty(objects[-1]) >= bound
    return hits, saturated


class WeaviateSearch:
    """The :meth:`~brain_graph.stores.base.VectorIndex.query`,
    :meth:`~brain_graph.stores.base.VectorIndex.lexical` and
    :meth:`~brain_graph.stores.base.VectorIndex.similarity` of one generation of a tenant."""

    def __init__(self, connection: WeaviateConnection, schema: WeaviateSchema, grpc_search: GrpcSearch) -> None:
        self._connection = connection
        self._schema = schema
        self._grpc = grpc_search

    def query(
        self,
        queries: Sequence[VectorQuery],
        scope: AccessScope,
        project_key: str | None,
        top_k: int,
        generation: int | None,
    ) -> list[VectorHit]:
        """Check the queries against the recorded profiles, then search every profile at once in the
        Weaviate tenant of ``generation`` (None: the tenant has no data, no hits)."""
        return self.search(queries, (), scope, project_key, top_k, generation)[0]

    def lexical(
        self,
        queries: Sequence[LexicalQuery],
        scope: AccessScope,
        project_key: str | None,
        top_k: int,
        generation: int | None,
    ) -> list[VectorHit]:
        """The lexical hits of every query (:mod:`.lexical`) in the Weaviate tenant of ``generation``
        (None: no data, no hits), one round: a BM25 request per query with terms, and one statistics
        request for all of them, sent together."""
        return self.search((), queries, scope, project_key, top_k, generation)[1]

    def search(
        self,
        queries: Sequence[VectorQuery],
        lexical: Sequence[LexicalQuery],
        scope: AccessScope,
        project_key: str | None,
        top_k: int,
        generation: int | None,
    ) -> tuple[list[VectorHit], list[VectorHit]]:
        """The vector hits of ``queries`` and the lexical hits of ``lexical`` (a query without terms, or
        of a profile whose collection does not exist or holds no lexical documents, has none): the
        requests of both sent in one round (the lexical statistics, a REST request, concurrently with
        the gRPC searches), then, only with mass ties at a vector query's ``top_k`` boundary, wider
        vector requests."""
        targets, lexical_targets = self._targets(queries, lexical)
        if top_k <= 0 or not (targets or lexical_targets) or generation is None:
            return [], []
        where = filters(scope, project_key)
        properties = returned(scope, project_key)
        tenant = tenant_name(scope.tenant_id, generation)
        limits = {q.profile_id: min(top_k + EXTRA_CANDIDATES, QUERY_MAX_RESULTS) for q in targets}
        found: dict[str, list[VectorHit]] = {}
        pending = list(targets)
        batch = [request(q, tenant, where, limits[q.profile_id], properties, near=True) for q in pending]
        candidates = weaviate_lexical.candidates(top_k)
        batch += (weaviate_lexical.bm25_request(q, tenant, where, candidates, properties) for q in lexical_targets)
        stats_document = weaviate_lexical.stats_document(lexical_targets, tenant) if lexical_targets else None
        replies, stats = self._send(pending, batch, stats_document, lexical_targets)
        lexical_hits = [
            hit
            for query, reply, corpus in zip(lexical_targets, replies[len(pending) :], stats, strict=True)
            for hit in weaviate_lexical.ranked_hits(
                query,
                visible_objects(found_objects(reply) if reply is not None else [], scope, project_key),
                corpus,
                top_k,
            )
        ]
        replies = replies[: len(pending)]
        while pending:
            wider = []
            for query, reply in zip(pending, replies, strict=True):
                objects = found_objects(reply) if reply is not None else []
                hits, saturated = self._checked(rescore, query, objects, scope, project_key, top_k)
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
        return [hit for q in targets for hit in found[q.profile_id]], lexical_hits

    def similarity(
        self, queries: Sequence[VectorQuery], node_ids: Sequence[str], scope: AccessScope, generation: int | None
    ) -> list[VectorHit]:
        """Check the queries against the recorded profiles, then score the visible objects of
        ``node_ids`` in every profile at once, in the queries' order (None: no data, no hits)."""
        targets, _ = self._targets(queries, ())
        ids = sorted(set(node_ids))
        if not targets or not ids or generation is None:
            return []
        tenant = tenant_name(scope.tenant_id, generation)
        chunks = [ids[start : start + QUERY_MAX_RESULTS] for start in range(0, len(ids), QUERY_MAX_RESULTS)]
        asked = [(q, chunk) for q in targets for chunk in chunks]
        properties = returned(scope, None)
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
        self,
        queries: Sequence[VectorQuery],
        batch: Sequence[Any],
        stats_document: str | None = None,
        lexical: Sequence[LexicalQuery] = (),
    ) -> tuple[list[Any | None], list[bm25.CorpusStats | None]]:
        """Send one request per query together (the vector queries' first), with ``stats_document``
        (the statistics of the ``lexical`` queries) alongside when given; the replies and the
        statistics. A refused dimension is an :class:`EmbeddingMismatchError`."""
        self._connection.tick(len(batch) + (stats_document is not None))
        try:
            if stats_document is None:
                return self._grpc.search(batch), []
            return self._connection.call(lambda client: self._together(client, batch, stats_document, lexical), None)
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
        self, client: weaviate.WeaviateAsyncClient, batch: Sequence[Any], document: str, lexical: Sequence[LexicalQuery]
    ) -> tuple[list[Any | None], list[bm25.CorpusStats | None]]:
        """The gRPC searches (on a worker thread) and the statistics request, concurrently."""
        replies, reply = await asyncio.gather(
            asyncio.to_thread(self._grpc.search, batch), client.graphql_raw_query(document)
        )
        try:
            stats = weaviate_lexical.parse_stats(lexical, reply.aggregate, reply.errors)
        except weaviate_lexical.StatsUnavailableError:
            self._schema.invalidate()  # a collection dropped, or recreated, since the cache was read
            stats = [None] * len(lexical)
        return replies, stats

    def _targets(
        self, queries: Sequence[VectorQuery], lexical: Sequence[LexicalQuery]
    ) -> tuple[list[VectorQuery], list[LexicalQuery]]:
        """The queries whose profile has a collection, after checking every query against its profile,
        and the lexical queries with terms whose profile's collection holds lexical documents."""
        profile_ids = [q.profile_id for q in queries]
        lexical_ids = [q.profile_id for q in lexical if q.terms]
        cache = self._schema.fresh(profile_ids, lexical=lexical_ids)
        if cache is None:

            async def read(client: weaviate.WeaviateAsyncClient) -> ProfileCache:
                return await self._schema.for_query(client, profile_ids, lexical=lexical_ids)

            cache = self._connection.call(read, self._connection.timeout_s)
        for query in queries:
            check_query_matches(query, cache.profiles.get(query.profile_id))
        return (
            [q for q in queries if collection_name(q.profile_id) in cache.collections],
            [q for q in lexical if q.terms and cache.lexical(q.profile_id)],
        )
