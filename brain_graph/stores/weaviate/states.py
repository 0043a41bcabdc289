"""The stored vectors' states (:class:`~brain_graph.stores.base.VectorState`) of one profile in one
Weaviate tenant, without the vectors: every object through the cursor API (:data:`STATE_PAGE` objects a
request), or those of given node ids (a ``nodeId`` filter, 10,000 ids a request)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from weaviate.classes.query import Filter
from weaviate.exceptions import WeaviateQueryError

from brain_graph.stores.base import VectorState
from brain_graph.stores.weaviate.client import WeaviateConnection
from brain_graph.stores.weaviate.errors import is_missing
from brain_graph.stores.weaviate.search import QUERY_MAX_RESULTS

STATE_PAGE = 5_000


def vector_state(obj: Any) -> VectorState:
    """The state of a returned object (``contentHash`` "" when it has none)."""
    props = obj.properties
    return VectorState(
        node_id=str(props["nodeId"]),
        content_hash=str(props.get("contentHash") or ""),
        project_key=props.get("projectKey"),
        secured=bool(props.get("secured")),
        acl=tuple(props.get("acl") or ()),
    )


async def read_states(
    connection: WeaviateConnection, collection: Any, node_ids: Sequence[str] | None
) -> list[VectorState]:
    """The states of a collection's tenant (``collection`` has the tenant set), sorted by node id;
    none when the collection or the Weaviate tenant does not exist."""
    try:
        objects = await (_all(connection, collection) if node_ids is None else _of(connection, collection, node_ids))
    except WeaviateQueryError as error:
        if is_missing(error):
            return []
        raise
    return sorted((vector_state(obj) for obj in objects), key=lambda state: state.node_id)


async def _all(connection: WeaviateConnection, collection: Any) -> list[Any]:
    """Every object, page by page in id order (all properties: ``contentHash`` may not exist)."""
    objects: list[Any] = []
    after = None
    while True:
        connection.tick()
        page = (await collection.query.fetch_objects(limit=STATE_PAGE, after=after)).objects
        objects += page
        if len(page) < STATE_PAGE:
            return objects
        after = page[-1].uuid


async def _of(connection: WeaviateConnection, collection: Any, node_ids: Sequence[str]) -> list[Any]:
    ids = sorted(set(node_ids))
    objects: list[Any] = []
    for start in range(0, len(ids), QUERY_MAX_RESULTS):
        chunk = ids[start : start + QUERY_MAX_RESULTS]
        connection.tick()
        response = await collection.query.fetch_objects(
            limit=len(chunk), filters=Filter.by_property("nodeId").contains_any(chunk)
        )
        objects += response.objects
    return objects
