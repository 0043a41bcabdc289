"""The peer: neo4j-graphrag's ``WeaviateNeo4jRetriever`` on the same servers and the same data.

Set up per size (:class:`Peer`), after brain-graph's own searches of that size:

* Neo4j: the graph brain-graph loaded (the ``:BrainNode`` nodes of the current generation of the
  run's tenants, with their edges) gets a label of its own, ``BenchPeer_<hex>``, which the retriever
  is given as ``node_label_neo4j``: on a shared server ``:BrainNode`` also holds other tenants and
  generations, and the peer would scan them all; with the label it scans exactly this graph, as it
  would on a server holding only it. Nodes are matched by ``nodeId`` (unique in the synthetic graph
  across its tenants; checked).
* Weaviate: a collection of its own, ``BenchPeer_<hex>`` (one collection without tenants, FLAT index,
  cosine), holding the searched tenant's vectors of the default profiles (work items and docs: the
  vectors brain-graph searches) with ``nodeId`` and ``secured``.

Per search, ``retriever.search(query_text=..., top_k=20, weaviate_filters=secured == false)``: the
query embedded by the same lexical embedder (:class:`LexicalEmbedder`), one Weaviate ``near_vector``
(the top 20 public vectors), then one Cypher statement: ``UNWIND`` the 20 (id, score) pairs,
``MATCH (node:BenchPeer_<hex>) WHERE node[$id_property] = id`` (a dynamic property: no index applies,
so every node of the label is scanned for each pair) and :data:`RETRIEVAL_QUERY`, the one-hop
neighbourhood of each hit. The collection and the label are removed afterwards.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Sequence
from typing import Any

import neo4j
import numpy as np
import weaviate
from langchain_core.embeddings import Embeddings
from neo4j_graphrag.embeddings.base import Embedder
from neo4j_graphrag.retrievers import WeaviateNeo4jRetriever
from weaviate.classes.config import Configure, DataType, Property, Tokenization, VectorDistances
from weaviate.classes.data import DataObject
from weaviate.classes.query import Filter

from brain_graph.stores import VectorRecord
from brain_graph.stores.neo4j_weaviate.backend import Neo4jWeaviateSettings

PEER_ID = "nodeId"
TOP_K = 20
INSERT_BATCH = 1_000
RETRIEVAL_QUERY = (
    "OPTIONAL MATCH (node)--(neighbor:BrainNode) "
    "WITH node, score, collect(neighbor {.nodeId, .nodeType, .title}) AS neighbors "
    "RETURN node {.nodeId, .nodeType, .title, .text} AS node, score, neighbors ORDER BY score DESC"
)
CURRENT_NODES = (
    "UNWIND $tenants AS tenant MATCH (t:BrainTenant {tenantId: tenant}) "
    "MATCH (n:BrainNode) WHERE n.tenantId = tenant AND n.generation = t.generation "
)


def add_label(label: str) -> str:
    """Label the current generation of ``$tenants``; the node count and the count of distinct ids."""
    return CURRENT_NODES + f"SET n:`{label}` RETURN count(n) AS nodes, count(DISTINCT n.nodeId) AS ids"


def remove_label(label: str) -> str:
    return f"MATCH (n:`{label}`) REMOVE n:`{label}`"


class LexicalEmbedder(Embedder):
    """A brain-graph (LangChain) embedder as a neo4j-graphrag ``Embedder``: the same query vectors."""

    def __init__(self, embeddings: Embeddings) -> None:
        super().__init__()
        self._embeddings = embeddings

    def embed_query(self, text: str) -> list[float]:
        return self._embeddings.embed_query(text)


class Peer:
    """The peer's label on the graph of ``tenants``, its collection of ``tenant``'s vectors of
    ``profiles`` and its retriever; a context manager that removes what it added."""

    def __init__(
        self,
        tenants: Sequence[str],
        tenant: str,
        vectors: Sequence[VectorRecord],
        profiles: set[str],
        embedder: Embeddings,
    ) -> None:
        settings = Neo4jWeaviateSettings()
        self.tenants = list(tenants)
        self.collection = f"BenchPeer_{uuid.uuid4().hex[:12]}"  # also the Neo4j label
        self.driver = neo4j.GraphDatabase.driver(
            settings.neo4j_uri, auth=(settings.neo4j_user, settings.neo4j_password)
        )
        self.database = settings.neo4j_database
        self.client = weaviate.connect_to_local(
            host=settings.weaviate_host, port=settings.weaviate_http_port, grpc_port=settings.weaviate_grpc_port
        )
        self._rows = [v for v in vectors if v.tenant_id == tenant and v.profile_id in profiles]
        self._embedder = LexicalEmbedder(embedder)
        self.scanned_nodes = 0

    def __enter__(self) -> WeaviateNeo4jRetriever:
        try:
            self._write_label()
            self._write_collection()
        except BaseException:
            self.__exit__()
            raise
        return WeaviateNeo4jRetriever(
            driver=self.driver,
            client=self.client,
            collection=self.collection,
            id_property_external=PEER_ID,
            id_property_neo4j=PEER_ID,
            embedder=self._embedder,
            retrieval_query=RETRIEVAL_QUERY,
            neo4j_database=self.database,
            node_label_neo4j=self.collection,
        )

    def __exit__(self, *exc: object) -> None:
        try:
            self.client.collections.delete(self.collection)
            self.driver.execute_query(remove_label(self.collection), database_=self.database)
        finally:
            self.client.close()
            self.driver.close()

    def _write_label(self) -> None:
        query = add_label(self.collection)
        records, _, _ = self.driver.execute_query(query, {"tenants": self.tenants}, database_=self.database)
        nodes, ids = records[0]["nodes"], records[0]["ids"]
        if not nodes or nodes != ids:
            raise RuntimeError(f"peer: {nodes} current nodes with {ids} distinct ids in Neo4j (unique ids needed)")
        self.scanned_nodes = int(nodes)

    def _write_collection(self) -> None:
        field = Tokenization.FIELD
        collection = self.client.collections.create(
            self.collection,
            properties=[
                Property(name=PEER_ID, data_type=DataType.TEXT, tokenization=field, index_searchable=False),
                Property(name="secured", data_type=DataType.BOOL),
            ],
            vector_config=Configure.Vectors.self_provided(
                vector_index_config=Configure.VectorIndex.flat(distance_metric=VectorDistances.COSINE)
            ),
        )
        for start in range(0, len(self._rows), INSERT_BATCH):
            objects: list[Any] = [
                DataObject(
                    properties={PEER_ID: v.node_id, "secured": v.secured},
                    vector=np.asarray(v.vector, dtype=np.float32).tolist(),
                )
                for v in self._rows[start : start + INSERT_BATCH]
            ]
            result = collection.data.insert_many(objects)
            if result.has_errors:
                raise RuntimeError(f"peer: Weaviate insert failed: {next(iter(result.errors.values()))}")


def public_filter() -> Any:
    """Public items only, as brain-graph's public scope (``filter.secured = false``)."""
    return Filter.by_property("secured").equal(False)


def run_peer_searches(
    retriever: WeaviateNeo4jRetriever, texts: Sequence[str], warm_up: int = 5, warm_up_limit_s: float = 15.0
) -> list[float]:
    """Milliseconds of each search (query embedding included), after ``warm_up`` unmeasured searches
    (``texts`` repeated; stopped after ``warm_up_limit_s`` seconds: at 100k nodes a peer search takes
    over a second)."""
    filters = public_filter()
    started = time.perf_counter()
    for index in range(max(warm_up, 1)):
        retriever.search(query_text=texts[index % len(texts)], top_k=TOP_K, weaviate_filters=filters)
        if time.perf_counter() - started > warm_up_limit_s:
            break
    timings = []
    for text in texts:
        started = time.perf_counter()
        result = retriever.search(query_text=text, top_k=TOP_K, weaviate_filters=filters)
        timings.append((time.perf_counter() - started) * 1000)
        if not result.items:
            raise RuntimeError(f"peer: no results for {text!r}")
    return timings
