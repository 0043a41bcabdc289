"""Whether a seed filter's recency part leaves out a visible object without an update time
(:meth:`~brain_graph.stores.base.VectorIndex.untimed`), on Weaviate: one gRPC ``Search`` per queried
collection, sent in the same batch as a search's vector and BM25 requests.

Each request (:func:`untimed_request`) asks the collection in the Weaviate tenant for one object,
without a vector, filtered by the access rule, the project, the facet parts other than recency and
``timed`` not true (:func:`.facets.untimed_part`): protobuf filters, every value a field of the
message. It returns what re-checks the object, :meth:`AccessScope.may_see` and
:meth:`SeedFilter.untimed` on its facets (:func:`untimed_found`).

A collection without the facet properties (created before them) holds objects that read as
``NodeFacets()``: with a node-type, namespace or tag part none of them is untimed (no request for it),
else each visible one of the project is (its filter has no facet part). A missing Weaviate tenant or
collection has no objects.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from weaviate.proto.v1 import search_get_pb2

from brain_graph.core.filters import SeedFilter
from brain_graph.core.security import AccessScope
from brain_graph.stores.access import weaviate_visible
from brain_graph.stores.neo4j_weaviate.weaviate.facets import all_of, facet_parts, project_part, untimed_part
from brain_graph.stores.neo4j_weaviate.weaviate.grpc_search import found_objects, search_request
from brain_graph.stores.neo4j_weaviate.weaviate.naming import collection_name
from brain_graph.stores.neo4j_weaviate.weaviate.schema import (
    NAMESPACE,
    NODE_TYPE,
    TAGS,
    UPDATED_AT_EXACT,
    ProfileCache,
)

_BASE_FIELDS = ("tenantId", "secured", "acl", "projectKey")
_FACET_FIELDS = (NODE_TYPE, NAMESPACE, TAGS, UPDATED_AT_EXACT)


@dataclass(frozen=True)
class UntimedTarget:
    """One collection to ask: its filter and the properties returned."""

    collection: str
    where: Any  # a base_pb2.Filters message, or None
    fields: tuple[str, ...]


def untimed_targets(
    profile_ids: Sequence[str], cache: ProfileCache, scope: AccessScope, seed_filter: SeedFilter
) -> list[UntimedTarget]:
    """The collections of ``profile_ids`` (existing, each once) where an object could be untimed, with
    their filters (see the module docstring); none without a recency part."""
    if seed_filter.updated_after is None:
        return []
    parts = facet_parts(seed_filter, recency=False)
    if parts is None:
        return []
    visible = weaviate_visible(scope)
    common = [*project_part(seed_filter.project_key), *([] if visible is None else [visible])]
    faceted = bool(seed_filter.node_types or seed_filter.namespaces or seed_filter.tags)
    targets: dict[str, UntimedTarget] = {}
    for profile_id in profile_ids:
        name = collection_name(profile_id)
        if name not in cache.collections or name in targets:
            continue
        if cache.facets(profile_id):
            where = all_of([*common, *parts, untimed_part()])
            targets[name] = UntimedTarget(name, where, _BASE_FIELDS + _FACET_FIELDS)
        elif not faceted:
            targets[name] = UntimedTarget(name, all_of(common), _BASE_FIELDS)
    return list(targets.values())


def untimed_request(target: UntimedTarget, tenant: str) -> Any:
    """The ``SearchRequest`` of at most one object of ``target`` in one Weaviate tenant: its filter,
    its properties, no vector."""
    fields: dict[str, Any] = {
        "collection": target.collection,
        "tenant": tenant,
        "limit": 1,
        "properties": search_get_pb2.PropertiesRequest(non_ref_properties=list(target.fields)),
        "metadata": search_get_pb2.MetadataRequest(),
    }
    if target.where is not None:
        fields["filters"] = target.where
    return search_request(**fields)


def untimed_found(replies: Sequence[Any | None], scope: AccessScope, seed_filter: SeedFilter) -> bool:
    """Whether the replies to :func:`untimed_request` (None: the tenant or collection does not exist)
    hold an object visible in ``scope`` that :meth:`SeedFilter.untimed` admits."""
    return any(
        scope.may_see(obj.tenant_id, obj.secured, obj.acl) and seed_filter.untimed(obj.project_key, obj.facets)
        for reply in replies
        if reply is not None
        for obj in found_objects(reply)
    )
