"""Vector search on Weaviate: one request per profile (concurrent), then exact re-scoring.

The vector index is FLAT with cosine distance by default: an exact scan, so candidates do not depend
on graph construction order and results are deterministic (``hnsw`` trades that for speed on large
tenants). Tenant (the Weaviate tenant of the generation), project and visibility
(:func:`~brain_graph.stores.access.weaviate_visible`) are filtered in the same request.
``top_k + 10`` candidates are fetched with their vectors; those within :data:`TIE_MARGIN` of the
``top_k``-th (by Weaviate's own distance) are re-checked with
:meth:`~brain_graph.security.AccessScope.may_see`, re-scored with the reference float64 cosine over
the returned float32 vectors (:func:`~brain_graph.stores.exact.exact_scores`, all of a request's at
once; bit-identical to the embedded store), ordered by (score desc, node id) and cut to ``top_k``. When the
last fetched candidate is itself that close to the boundary, an unfetched object could still tie,
and the fetch is repeated with a four times larger limit (only with mass ties).

:meth:`WeaviateSearch.similarity` scores given nodes instead of searching: one ``fetch_objects`` per
profile (concurrent) for the objects whose ``nodeId`` is among the ids (``contains_any``, with the
access filter), with their vectors, scored the same way. A request returns at most
:data:`QUERY_MAX_RESULTS` objects, so more ids than that take one request per that many.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from itertools import takewhile
from typing import Any

import weaviate
from weaviate.classes.query import Filter, MetadataQuery
from weaviate.exceptions import WeaviateQueryError

from brain_graph.security import AccessScope
from brain_graph.stores.access import weaviate_visible
from brain_graph.stores.base import VectorHit, VectorQuery
from brain_graph.stores.exact import exact_scores
from brain_graph.stores.identity import EmbeddingMismatchError, check_query_matches
from brain_graph.stores.weaviate.client import WeaviateConnection
from brain_graph.stores.weaviate.errors import is_dimension_mismatch, is_missing
from brain_graph.stores.weaviate.naming import collection_name, tenant_name
from brain_graph.stores.weaviate.schema import WeaviateSchema

QUERY_MAX_RESULTS = 10_000  # Weaviate's default QUERY_MAXIMUM_RESULTS
TIE_MARGIN = 1e-5  # > float32 distance error + score rounding
EXTRA_CANDIDATES = 10  # fetched beyond top_k: room for ties at the boundary before a wider fetch is needed
RETURNED = ["tenantId", "nodeId", "projectKey", "secured", "acl"]
SCORED = ["tenantId", "nodeId", "secured", "acl"]  # what a similarity read needs (no project filter)


def filters(scope: AccessScope, project_key: str | None) -> Any:
    """The project filter and the access rule's filter, combined (None when there is none)."""
    parts = [] if project_key is None else [Filter.by_property("projectKey").equal(project_key)]
    visible = weaviate_visible(scope)
    if visible is not None:
        parts.append(visible)
    if not parts:
        return None
    return parts[0] if len(parts) == 1 else Filter.all_of(parts)


def visible_to(scope: AccessScope, obj: Any) -> bool:
    """Whether a returned object is visible in ``scope`` (the access rule re-checked in Python)."""
    props = obj.properties
    return scope.may_see(str(props.get("tenantId")), bool(props.get("secured")), props.get("acl") or ())


def stored_vector(query: VectorQuery, obj: Any) -> Sequence[float]:
    """A returned object's stored vector, checked against the query's dimension."""
    vector = obj.vector
    stored: Sequence[float] = next(iter(vector.values())) if isinstance(vector, dict) else vector
    if len(stored) != len(query.vector):
        raise EmbeddingMismatchError(
            f"profile {query.profile_id}: query vector has dimension {len(query.vector)}, "
            f"the index holds dimension {len(stored)}"
        )
    return stored


def score(query: VectorQuery, objects: Sequence[Any]) -> list[VectorHit]:
    """The hits of returned objects, scored over their stored vectors exactly like the embedded store
    (:func:`~brain_graph.stores.exact.exact_scores`), in the objects' order."""
    vectors = [stored_vector(query, obj) for obj in objects]
    scores = exact_scores(query.vector, vectors)
    return [
        VectorHit(str(obj.properties["nodeId"]), query.profile_id, value)
        for obj, value in zip(objects, scores, strict=True)
    ]


def rescore(
    query: VectorQuery, objects: Sequence[Any], scope: AccessScope, project_key: str | None, top_k: int
) -> tuple[list[VectorHit], bool]:
    """Score the candidates exactly like the embedded store (tenant, project and ACL re-checked) and
    tell whether unfetched objects could still tie at the ``top_k`` boundary.

    Weaviate's certainty ``1 - distance / 2`` is the score before rounding, within float32 error (far
    below :data:`TIE_MARGIN`). Candidates more than the margin below the ``top_k``-th visible candidate
    cannot reach the top ``top_k`` and are not re-scored; objects not fetched rank after the last
    fetched one, so they matter only if it is within the margin of that boundary."""
    visible = [
        obj
        for obj in objects
        if visible_to(scope, obj) and (project_key is None or obj.properties.get("projectKey") == project_key)
    ]

    def certainty(obj: Any) -> float:
        distance = obj.metadata.distance
        return 1.0 - float(distance) / 2.0 if distance is not None else 1.0

    bound = certainty(visible[top_k - 1]) - TIE_MARGIN if len(visible) >= top_k else float("-inf")
    close = list(takewhile(lambda obj: certainty(obj) >= bound, visible))  # nearest first
    hits = sorted(score(query, close), key=lambda hit: (-hit.score, hit.node_id))
    saturated = bool(objects) and certainty(objects[-1]) >= bound
    return hits, saturated


class WeaviateSearch:
    """The :meth:`~brain_graph.stores.base.VectorIndex.query` and
    :meth:`~brain_graph.stores.base.VectorIndex.similarity` of one generation of a tenant."""

    def __init__(self, connection: WeaviateConnection, schema: WeaviateSchema) -> None:
        self._connection = connection
        self._schema = schema

    async def query(
        self,
        client: weaviate.WeaviateAsyncClient,
        queries: Sequence[VectorQuery],
        scope: AccessScope,
        project_key: str | None,
        top_k: int,
        generation: int | None,
    ) -> list[VectorHit]:
        """Check the queries against the recorded profiles, then search each profile concurrently in
        the Weaviate tenant of ``generation`` (None: the tenant has no data, no hits)."""
        targets = await self._targets(client, queries)
        if top_k <= 0 or not targets or generation is None:
            return []
        where = filters(scope, project_key)
        tenant = tenant_name(scope.tenant_id, generation)
        searches = (self._search(client, q, tenant, scope, project_key, where, top_k) for q in targets)
        return [hit for hits in await asyncio.gather(*searches) for hit in hits]

    async def similarity(
        self,
        client: weaviate.WeaviateAsyncClient,
        queries: Sequence[VectorQuery],
        node_ids: Sequence[str],
        scope: AccessScope,
        generation: int | None,
    ) -> list[VectorHit]:
        """Check the queries against the recorded profiles, then score the visible objects of
        ``node_ids`` in each profile concurrently, in the queries' order (None: no data, no hits)."""
        targets = await self._targets(client, queries)
        ids = sorted(set(node_ids))
        if not targets or not ids or generation is None:
            return []
        tenant = tenant_name(scope.tenant_id, generation)
        chunks = [ids[start : start + QUERY_MAX_RESULTS] for start in range(0, len(ids), QUERY_MAX_RESULTS)]
        fetches = (self._score_ids(client, q, tenant, scope, chunks) for q in targets)
        return [hit for hits in await asyncio.gather(*fetches) for hit in hits]

    async def _targets(self, client: weaviate.WeaviateAsyncClient, queries: Sequence[VectorQuery]) -> list[VectorQuery]:
        """The queries whose profile has a collection, after checking every query against its profile."""
        cache = await self._schema.for_query(client, [q.profile_id for q in queries])
        for query in queries:
            check_query_matches(query, cache.profiles.get(query.profile_id))
        return [q for q in queries if collection_name(q.profile_id) in cache.collections]

    async def _score_ids(
        self,
        client: weaviate.WeaviateAsyncClient,
        query: VectorQuery,
        tenant: str,
        scope: AccessScope,
        chunks: Sequence[Sequence[str]],
    ) -> list[VectorHit]:
        """The hits of one profile for the ids (one request per chunk), by score desc then node id."""
        collection = client.collections.use(collection_name(query.profile_id)).with_tenant(tenant)
        objects = [
            obj
            for part in await asyncio.gather(*(self._fetch(collection, scope, ids) for ids in chunks))
            for obj in part
        ]
        wanted = {node_id for ids in chunks for node_id in ids}
        try:
            hits = score(
                query, [obj for obj in objects if obj.properties.get("nodeId") in wanted and visible_to(scope, obj)]
            )
        except EmbeddingMismatchError:
            self._schema.invalidate()  # the collection was recreated with another dimension since cached
            raise
        return sorted(hits, key=lambda hit: (-hit.score, hit.node_id))

    async def _fetch(self, collection: Any, scope: AccessScope, ids: Sequence[str]) -> list[Any]:
        """The objects (with vectors) of the visible nodes among ``ids`` (none when the Weaviate tenant
        or the collection is missing)."""
        where = Filter.by_property("nodeId").contains_any(list(ids))
        visible = weaviate_visible(scope)
        self._connection.tick()
        try:
            response = await collection.query.fetch_objects(
                limit=len(ids),
                filters=where if visible is None else Filter.all_of([where, visible]),
                include_vector=True,
                return_properties=SCORED,
            )
        except WeaviateQueryError as error:
            if is_missing(error):
                return []
            raise
        return list(response.objects)

    async def _search(
        self,
        client: weaviate.WeaviateAsyncClient,
        query: VectorQuery,
        tenant: str,
        scope: AccessScope,
        project_key: str | None,
        where: Any,
        top_k: int,
    ) -> list[VectorHit]:
        collection = client.collections.use(collection_name(query.profile_id)).with_tenant(tenant)
        limit = min(top_k + EXTRA_CANDIDATES, QUERY_MAX_RESULTS)
        while True:
            self._connection.tick()
            try:
                response = await collection.query.near_vector(
                    near_vector=[float(x) for x in query.vector],
                    limit=limit,
                    filters=where,
                    include_vector=True,
                    return_properties=RETURNED,
                    return_metadata=MetadataQuery(distance=True),
                )
            except WeaviateQueryError as error:
                if is_missing(error):
                    return []
                if is_dimension_mismatch(error):
                    self._schema.invalidate()
                    raise EmbeddingMismatchError(
                        f"profile {query.profile_id}: query vector has dimension {len(query.vector)}, "
                        f"which the index rejects: {error}"
                    ) from None
                raise
            objects = response.objects
            hits, saturated = rescore(query, objects, scope, project_key, top_k)
            if not (saturated and len(objects) >= limit) or limit >= QUERY_MAX_RESULTS:
                return hits[:top_k]
            limit = min(limit * 4, QUERY_MAX_RESULTS)
