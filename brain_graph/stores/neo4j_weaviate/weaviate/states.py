"""The stored vectors' states (:class:`~brain_graph.stores.base.VectorState`) of one profile in one
Weaviate tenant, without the vectors: every object through the cursor API (:data:`STATE_PAGE` objects a
request), or those of given node ids (a ``nodeId`` filter, 10,000 ids a request); then whether a
vector search reaches each of them (:func:`unreachable`, one request per 10,000 objects).

A state's ``lexical`` says whether the object holds a non-empty lexical document (``lexical``
property); an object written before lexical documents has none, and the indexer writes it anew. Its
``facets`` are those stored with the vector (:mod:`.facets`); an object written before facets reads as
``NodeFacets()``, which no node has, so the indexer writes it anew too.

Reachability: Weaviate writes an object (properties, ``contentHash`` included, and the vector it
keeps with the object) before it adds the vector to the vector index, and an insert whose request is
cancelled in between (the client killed or timed out mid-batch) leaves the object stored and out of
the index. A later upsert of the same vector does not index it either (an unchanged vector keeps its
place, or its absence, in the index). An object stored without a vector, or with one of another
dimension than the index's, is not in the index either. Such an object is found by a property
filter and by its id but never by a vector search, so each state says whether a search reaches it
(``searchable``), and the indexer writes an unreachable one anew. The check is a ``nearVector``
search restricted to the objects' ids with a limit of their number: an exact scan of those objects
in the vector index (flat, and HNSW below its flat-search cutoff of 40,000), which returns every
object the index holds among them and none it does not. It assumes synchronous indexing (Weaviate's
default; with ``ASYNC_INDEXING`` a vector still queued reads as unreachable and is written again).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from weaviate.classes.query import Filter
from weaviate.exceptions import WeaviateQueryError

from brain_graph.stores.base import VectorState
from brain_graph.stores.neo4j_weaviate.weaviate.client import WeaviateConnection
from brain_graph.stores.neo4j_weaviate.weaviate.errors import is_missing
from brain_graph.stores.neo4j_weaviate.weaviate.facets import stored_facets
from brain_graph.stores.neo4j_weaviate.weaviate.search import QUERY_MAX_RESULTS

STATE_PAGE = 5_000


def vector_state(obj: Any, *, searchable: bool = True) -> VectorState:
    """The state of a returned object (``contentHash`` "" when it has none; ``lexical`` whether it has a
    non-empty lexical document: objects written before lexical documents have none; ``facets`` as
    :func:`.facets.stored_facets` reads them: ``NodeFacets()`` for objects written before facets)."""
    props = obj.properties
    return VectorState(
        node_id=str(props["nodeId"]),
        content_hash=str(props.get("contentHash") or ""),
        project_key=props.get("projectKey"),
        secured=bool(props.get("secured")),
        acl=tuple(props.get("acl") or ()),
        searchable=searchable,
        lexical=bool(props.get("lexical")),
        facets=stored_facets(props),
    )


async def read_states(
    connection: WeaviateConnection, collection: Any, node_ids: Sequence[str] | None, *, dimension: int | None
) -> list[VectorState]:
    """The states of a collection's tenant (``collection`` has the tenant set), sorted by node id;
    none when the collection or the Weaviate tenant does not exist. ``dimension`` is the profile's
    (None: the collection records none, and reachability is not checked)."""
    try:
        objects = await (_all(connection, collection) if node_ids is None else _of(connection, collection, node_ids))
        missed = set() if dimension is None else await unreachable(connection, collection, objects, dimension)
    except WeaviateQueryError as error:
        if is_missing(error):
            return []
        raise
    states = (vector_state(obj, searchable=str(obj.uuid) not in missed) for obj in objects)
    return sorted(states, key=lambda state: state.node_id)


def probe_vector(dimension: int) -> list[float]:
    """A query vector of ``dimension`` (any vector does: the probe's limit covers every object it asks
    about, so the order of the results does not matter)."""
    return [1.0] * dimension


async def unreachable(
    connection: WeaviateConnection, collection: Any, objects: Sequence[Any], dimension: int
) -> set[str]:
    """The ids (as strings) of the ``objects`` a vector search does not reach (see the module
    docstring): one ``nearVector`` request per :data:`QUERY_MAX_RESULTS` objects, restricted to their
    ids, returning only ids."""
    ids = sorted({str(obj.uuid) for obj in objects})
    missed: set[str] = set()
    for start in range(0, len(ids), QUERY_MAX_RESULTS):
        chunk = ids[start : start + QUERY_MAX_RESULTS]
        connection.tick()
        response = await collection.query.near_vector(
            near_vector=probe_vector(dimension),
            limit=len(chunk),
            filters=Filter.by_id().contains_any(chunk),
            return_properties=[],
        )
        missed.update(set(chunk) - {str(obj.uuid) for obj in response.objects})
    return missed


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
