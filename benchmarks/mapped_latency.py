"""The mapped backend against neo4j-graphrag's ``VectorCypherRetriever`` on a graph neo4j-graphrag would
have written: its lexical graph, searched by both on the same Neo4j server.

    make bench-mapped                                         # installs, starts and stops the servers
    .venv/bin/python -m benchmarks.mapped_latency              # 10k and 100k chunks (servers running)
    .venv/bin/python -m benchmarks.mapped_latency --smoke      # 50 chunks, 5 searches: seconds
    .venv/bin/python -m benchmarks.mapped_latency --sizes 10000 30000 --searches 100

Per size, the graph is written with plain Cypher (batched ``UNWIND``), in neo4j-graphrag's lexical-graph
shape: ``(:Document {path})``, ``(:Chunk {id, text, index, embedding})``, ``(chunk)-[:FROM_DOCUMENT]->(doc)``,
``(chunk)-[:NEXT_CHUNK]->(next chunk)`` (:data:`CHUNKS_PER_DOCUMENT` chunks per document), the embedding set
with ``db.create.setNodeVectorProperty`` as neo4j-graphrag's writer sets it, and a cosine vector index on
``Chunk.embedding``. The labels carry a suffix unique to the run (``Chunk_<hex>``, ``Document_<hex>``): the
server is shared. Chunk texts are drawn from :data:`benchmarks.synthetic.TOPICS` (seeded by the size) and
embedded by brain-graph's bundled ``LexicalHashEmbeddings``. Documents also carry ``id`` (their path): a
mapping reads one id property for every label. Range indexes on ``Chunk.id`` and ``Document.id`` serve the
mapped backend's seeks by id (the peer does not use them). Everything is dropped at the end.

The two systems, each with its own driver:

* **mapped**: ``build_graph(SearchServices(backend=MappedBackend.with_neo4j_sources(mapping, ...)))`` with a
  mapping of a fixed tenant, ``Chunk`` as ``cdm.doc`` (passage ``body`` = ``text``), ``Document``, and
  ``NEXT_CHUNK`` / ``FROM_DOCUMENT`` followed as edge types of the same names, added to the services' edge
  allowlist (as ``BRAIN_GRAPH_SAFE_EDGE_TYPES`` would); the ``cdm.doc.body`` profile's vectors from the
  vector index. Public scope, topK :data:`TOP_K`, expandDepth 1; the query embedded once by the graph.
* **peer**: ``neo4j_graphrag.retrievers.VectorCypherRetriever`` on the same index, ``top_k`` :data:`TOP_K`,
  with :func:`retrieval_query` (each hit with its ``NEXT_CHUNK`` neighbours and its document: one hop) and
  an ``Embedder`` wrapping the same ``LexicalHashEmbeddings``.

After the first search of each (``first ms``) and ``--warm-up`` unmeasured searches of each, the measured
searches alternate between the two query by query (which goes first alternates too), so that both see
the same server and machine state. Per search: wall time, the client process's CPU time
(``time.process_time``) and the Neo4j process's CPU time (``/proc``, when the server was started by
``scripts/services``). Both must return results for every query (checked). Untimed: the share of each
system's top 10 that is in the exact top 10 (:func:`agreement`), and the Neo4j statements of mapped
searches and the peer's, replayed one by one (:func:`statement_rows`). At the largest size (not with
``--smoke``), a pyinstrument profile of ``--profile-searches`` mapped searches is written to
``benchmarks/results/profiles/mapped-<size>.txt``. Results: ``benchmarks/results/mapped_latency.{json,md}``
(``--smoke``: ``benchmarks/results/smoke/``).
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import gc
import json
import math
import random
import statistics
import subprocess
import sys
import time
import uuid
import warnings
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, cast

import neo4j
import numpy as np
import numpy.typing as npt

from benchmarks import server_cpu
from benchmarks.report import latency, machine
from benchmarks.search_latency import server_versions, servers_configured, settle
from benchmarks.statements import KindRow, Recorded, record, replay
from benchmarks.statements import table as statement_table
from benchmarks.synthetic import TOPICS
from brain_graph import BrainSearchGraph as Graph
from brain_graph import BrainSearchInput, LexicalHashEmbeddings, SearchServices, build_graph, default_profiles
from brain_graph.core.edges import DEFAULT_SAFE_EDGE_TYPES, EdgeRegistry
from brain_graph.stores.mapped.backend import MappedBackend
from brain_graph.stores.mapped.mapping import Mapping, parse_mapping
from brain_graph.stores.neo4j_weaviate.backend import Neo4jWeaviateSettings
from brain_graph.stores.neo4j_weaviate.neo4j.client import Neo4jClient

RESULTS = Path(__file__).parent / "results"
SMOKE_RESULTS = RESULTS / "smoke"  # not committed (.gitignore)
PROFILES = RESULTS / "profiles"
BASENAME = "mapped_latency"
TENANT = "lexical"  # the mapping's fixed tenant
TOP_K = 10
DEPTH = 1
CHUNKS_PER_DOCUMENT = 20
WORDS_PER_CHUNK = 150
QUERY_WORDS = 5
WRITE_BATCH = 1_000  # chunks per write transaction (a multiple of CHUNKS_PER_DOCUMENT: no NEXT_CHUNK across)
DELETE_BATCH = 10_000
EDGE_TYPES = ("FROM_DOCUMENT", "NEXT_CHUNK")  # relationship types, followed as edge types of the same names
PROFILE = "cdm.doc.body"
MAPPED, PEER = "mapped", "peer"
PEER_NAME = "neo4j-graphrag VectorCypherRetriever"
REPLAYS = 5  # replays of each recorded statement (the statement breakdown)
STATEMENT_SEARCHES = 20  # mapped searches whose statements are replayed


# -- the graph -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Names:
    """The run's labels and index names (unique to the run: the server is shared)."""

    run: str

    @property
    def chunk(self) -> str:
        return f"Chunk_{self.run}"

    @property
    def document(self) -> str:
        return f"Document_{self.run}"

    @property
    def vector_index(self) -> str:
        return f"chunk_embedding_{self.run}"

    @property
    def range_indexes(self) -> dict[str, tuple[str, str]]:
        """Index name -> (label, property)."""
        return {
            f"chunk_id_{self.run}": (self.chunk, "id"),
            f"document_id_{self.run}": (self.document, "id"),
            f"document_path_{self.run}": (self.document, "path"),
        }


def chunk_texts(size: int, seed: int) -> list[str]:
    """``size`` chunk texts: each document keeps to one topic (its chunks read alike), with a few words
    of other topics, as in :mod:`benchmarks.synthetic`."""
    rng = random.Random(seed)
    topics = sorted(TOPICS)
    texts = []
    for start in range(0, size, CHUNKS_PER_DOCUMENT):
        topic = rng.choice(topics)
        for _ in range(min(CHUNKS_PER_DOCUMENT, size - start)):
            vocabulary = TOPICS[topic].split() + TOPICS[rng.choice(topics)].split()[:3]
            texts.append(" ".join(rng.choice(vocabulary) for _ in range(WORDS_PER_CHUNK)))
    return texts


def query_texts(count: int, seed: int) -> list[str]:
    """``count`` distinct short queries (a topic's words, mostly), the same for a seed."""
    rng = random.Random(seed + 1)
    topics = sorted(TOPICS)
    queries: dict[str, None] = {}
    while len(queries) < count:
        words = TOPICS[rng.choice(topics)].split()
        queries[" ".join(rng.sample(words, QUERY_WORDS))] = None
        if len(queries) < count and rng.random() < 0.3:  # a query across two topics
            other = TOPICS[rng.choice(topics)].split()
            queries[" ".join(rng.sample(words, 3) + rng.sample(other, 2))] = None
    return list(queries)[:count]


def document_path(number: int) -> str:
    return f"docs/document-{number:06d}.txt"


def chunk_id(number: int) -> str:
    return f"chunk-{number:07d}"


def write_graph(
    driver: neo4j.Driver, database: str, names: Names, texts: Sequence[str], vectors: npt.NDArray[np.float32]
) -> float:
    """Write the lexical graph of ``texts`` with their ``vectors`` (a row each) and its indexes; the
    seconds, the vector index's population included."""
    started = time.perf_counter()
    for name, (label, prop) in names.range_indexes.items():
        driver.execute_query(
            f"CREATE INDEX `{name}` IF NOT EXISTS FOR (n:`{label}`) ON (n.`{prop}`)", database_=database
        )
    driver.execute_query("CALL db.awaitIndexes(300)", database_=database)
    documents = [
        {"path": document_path(number), "id": document_path(number)}
        for number in range(math.ceil(len(texts) / CHUNKS_PER_DOCUMENT))
    ]
    for start in range(0, len(documents), WRITE_BATCH):
        driver.execute_query(
            f"UNWIND $rows AS row CREATE (d:`{names.document}`) SET d = row",
            rows=documents[start : start + WRITE_BATCH],
            database_=database,
        )
    chunks = (
        f"UNWIND $rows AS row MATCH (d:`{names.document}` {{path: row.path}}) "
        f"CREATE (c:`{names.chunk}` {{id: row.id, text: row.text, index: row.index}})-[:FROM_DOCUMENT]->(d) "
        "WITH c, row CALL db.create.setNodeVectorProperty(c, 'embedding', row.embedding)"
    )
    next_chunks = (
        f"UNWIND $pairs AS pair MATCH (a:`{names.chunk}` {{id: pair[0]}}), (b:`{names.chunk}` {{id: pair[1]}}) "
        "CREATE (a)-[:NEXT_CHUNK]->(b)"
    )
    for start in range(0, len(texts), WRITE_BATCH):
        batch = range(start, min(len(texts), start + WRITE_BATCH))
        rows = [
            {
                "id": chunk_id(i),
                "text": texts[i],
                "index": i % CHUNKS_PER_DOCUMENT,
                "path": document_path(i // CHUNKS_PER_DOCUMENT),
                "embedding": vector,
            }
            for i, vector in zip(batch, vectors[batch.start : batch.stop].tolist(), strict=True)
        ]
        pairs = [[chunk_id(i), chunk_id(i + 1)] for i in batch if i + 1 in batch and (i + 1) % CHUNKS_PER_DOCUMENT]

        def write(
            tx: neo4j.ManagedTransaction, rows: list[dict[str, Any]] = rows, pairs: list[list[str]] = pairs
        ) -> None:
            tx.run(chunks, rows=rows).consume()
            tx.run(next_chunks, pairs=pairs).consume()

        with driver.session(database=database) as session:
            session.execute_write(write)
    driver.execute_query(
        f"CREATE VECTOR INDEX `{names.vector_index}` IF NOT EXISTS FOR (c:`{names.chunk}`) ON c.embedding "
        "OPTIONS {indexConfig: {`vector.dimensions`: $dimension, `vector.similarity_function`: 'cosine'}}",
        dimension=vectors.shape[1],
        database_=database,
    )
    driver.execute_query("CALL db.awaitIndexes(3600)", database_=database)
    return time.perf_counter() - started


def drop_graph(driver: neo4j.Driver, database: str, names: Names) -> None:
    """Drop the run's indexes and nodes (with their relationships), in batches."""
    for name in [names.vector_index, *names.range_indexes]:
        driver.execute_query(f"DROP INDEX `{name}` IF EXISTS", database_=database)
    for label in (names.chunk, names.document):
        with driver.session(database=database) as session:  # CALL ... IN TRANSACTIONS needs an implicit one
            session.run(
                f"MATCH (n:`{label}`) CALL (n) {{ DETACH DELETE n }} IN TRANSACTIONS OF {DELETE_BATCH} ROWS"
            ).consume()


# -- the two systems --------------------------------------------------------------------------------


def mapping(names: Names) -> Mapping:
    """The lexical graph as brain-graph reads it (a fixed tenant, chunks as docs, both relationships)."""
    return parse_mapping(
        {
            "name": f"neo4j-graphrag-lexical-{names.run}",
            "id_property": "id",
            "tenant": {"fixed": TENANT},
            "title_properties": ["path"],
            "properties": ["index"],
            "nodes": [
                {"label": names.chunk, "node_type": "cdm.doc", "text": {"body": "text"}},
                {"label": names.document, "node_type": "source.document"},
            ],
            "edges": [{"type": edge, "as": edge} for edge in EDGE_TYPES],
            "vectors": [{"profile": PROFILE, "source": "neo4j", "index": names.vector_index, "property": "embedding"}],
        }
    )


def mapped_services(names: Names, settings: Neo4jWeaviateSettings) -> SearchServices:
    """Services over the mapped backend, the two relationship types added to the edge allowlist."""
    client = Neo4jClient(
        uri=settings.neo4j_uri,
        user=settings.neo4j_user,
        password=settings.neo4j_password,
        database=settings.neo4j_database,
        timeout_s=settings.timeout_s,
    )
    return SearchServices(
        backend=MappedBackend.with_neo4j_sources(mapping(names), client),
        profiles=default_profiles(),
        edges=EdgeRegistry.with_safe([*DEFAULT_SAFE_EDGE_TYPES, *EDGE_TYPES]),
    )


def mapped_request(text: str) -> dict[str, Any]:
    return {
        "queryText": text,
        "filter": {"tenantId": TENANT, "secured": False},
        "options": {"topK": TOP_K, "expandDepth": DEPTH},
    }


def retrieval_query(names: Names) -> str:
    """The peer's one hop: each hit with its ``NEXT_CHUNK`` neighbours (both ways) and its document."""
    return (
        f"OPTIONAL MATCH (node)-[:NEXT_CHUNK]-(neighbor:`{names.chunk}`) "
        "WITH node, score, collect(neighbor {.id, .index, .text}) AS neighbors "
        f"OPTIONAL MATCH (node)-[:FROM_DOCUMENT]->(document:`{names.document}`) "
        "RETURN node {.id, .index, .text} AS chunk, score, neighbors, document {.path} AS document "
        "ORDER BY score DESC"
    )


def peer_retriever(driver: neo4j.Driver, database: str, names: Names) -> Any:
    """``VectorCypherRetriever`` on the run's index, embedding with the same lexical embedder."""
    from neo4j_graphrag.retrievers import VectorCypherRetriever

    from benchmarks.peer import LexicalEmbedder

    return VectorCypherRetriever(
        driver,
        names.vector_index,
        retrieval_query(names),
        embedder=LexicalEmbedder(LexicalHashEmbeddings()),
        neo4j_database=database,
    )


# -- measuring --------------------------------------------------------------------------------------


Search = Callable[[str], int]  # query text -> how many chunks it found


@dataclass
class Measured:
    """One system's measured searches at one size."""

    wall_ms: list[float] = field(default_factory=list)
    cpu_ms: list[float] = field(default_factory=list)
    neo4j_cpu_s: float = 0.0
    results: list[int] = field(default_factory=list)  # per query: chunks found
    first_ms: float = 0.0


def timed(search: Search, text: str, servers: dict[str, int], into: Measured) -> None:
    """One search, its wall, client CPU and Neo4j CPU time and its count of chunks added to ``into``."""
    before = server_cpu.snapshot(servers)
    started, started_cpu = time.perf_counter(), time.process_time()
    found = search(text)
    into.wall_ms.append((time.perf_counter() - started) * 1000)
    into.cpu_ms.append((time.process_time() - started_cpu) * 1000)
    after = server_cpu.snapshot(servers)
    into.neo4j_cpu_s += sum(after[name] - before[name] for name in before if name in after)
    into.results.append(found)


def interleaved(
    systems: dict[str, Search], texts: Sequence[str], warm_up: int, servers: dict[str, int]
) -> dict[str, Measured]:
    """The first search of each system (cold), ``warm_up`` unmeasured searches of each (alternating), then
    each of ``texts`` on every system in turn, the first system alternating from query to query."""
    measured = {name: Measured() for name in systems}
    for name, search in systems.items():
        started = time.perf_counter()
        search(texts[0])
        measured[name].first_ms = (time.perf_counter() - started) * 1000
    for index in range(warm_up):
        for search in systems.values():
            search(texts[index % len(texts)])
    order = list(systems)
    for index, text in enumerate(texts):
        for name in order if index % 2 == 0 else order[::-1]:
            timed(systems[name], text, servers, measured[name])
    for name, result in measured.items():
        empty = [text for text, count in zip(texts, result.results, strict=True) if not count]
        if empty:
            raise RuntimeError(f"{name}: no results for {len(empty)} queries, e.g. {empty[0]!r}")
    return measured


@dataclass
class SystemRow:
    p50_ms: float
    p95_ms: float
    p99_ms: float
    cpu_p50_ms: float
    cpu_mean_ms: float
    neo4j_cpu_ms: float | None  # mean Neo4j CPU per search (None: the server's process is not local)
    first_ms: float
    min_results: int
    statements: int  # Neo4j statements of one search


@dataclass
class SizeRow:
    run: str  # the suffix of the run's labels and index names
    chunks: int
    documents: int
    relationships: int
    embed_s: float  # embedding every chunk (not in load_s)
    load_s: float  # writing the graph and its indexes, until the vector index is online
    searches: int
    mapped: SystemRow
    peer: SystemRow
    top_k_overlap: float  # mean share of the peer's top-k chunks among the mapped backend's top-k hits
    mapped_exact: float  # mean share of the mapped backend's top-k in the exact top-k
    peer_exact: float  # mean share of the peer's top-k in the exact top-k
    statements: list[KindRow] = field(default_factory=list)  # the statements replayed, per kind

    @property
    def ratios(self) -> dict[str, float]:
        """mapped over peer: p50, p95 and client CPU (below 1: brain-graph is faster / cheaper)."""
        return {
            "p50": self.mapped.p50_ms / self.peer.p50_ms,
            "p95": self.mapped.p95_ms / self.peer.p95_ms,
            "cpu": self.mapped.cpu_p50_ms / self.peer.cpu_p50_ms,
        }


def system_row(result: Measured, servers: dict[str, int], statements: int) -> SystemRow:
    count = len(result.wall_ms)
    return SystemRow(
        *latency(result.wall_ms),
        statistics.median(result.cpu_ms),
        statistics.fmean(result.cpu_ms),
        result.neo4j_cpu_s * 1000 / count if "neo4j" in servers else None,
        result.first_ms,
        min(result.results),
        statements,
    )


def mapped_hits(graph: Graph, text: str) -> list[str]:
    """The chunk ids of a mapped search's vector hits, best first."""
    output = graph.invoke(cast(BrainSearchInput, mapped_request(text)))
    return [hit["nodeId"] for hit in output["hits"] if hit["profileId"] == PROFILE]


def mapped_search(graph: Graph) -> Search:
    return lambda text: len(mapped_hits(graph, text))


def peer_search(retriever: Any) -> Search:
    return lambda text: len(retriever.search(query_text=text, top_k=TOP_K).items)


def agreement(graph: Graph, retriever: Any, texts: Sequence[str], vectors: npt.NDArray[np.float32]) -> dict[str, float]:
    """Untimed, over ``texts``: ``top_k_overlap``, the mean share of the peer's top-k chunks among the
    mapped backend's top-k vector hits, and per system (``mapped_exact``, ``peer_exact``) the mean share
    of its top-k that is in the exact top-k (a numpy scan of every chunk's vector; ties at the k-th
    score count as in)."""
    embedder = LexicalHashEmbeddings(vectors.shape[1])
    shares: dict[str, list[float]] = {"top_k_overlap": [], "mapped_exact": [], "peer_exact": []}
    for text in texts:
        mapped = mapped_hits(graph, text)
        records = retriever.get_search_results(query_text=text, top_k=TOP_K).records
        peer = [str(record["chunk"]["id"]) for record in records]
        shares["top_k_overlap"].append(len(set(mapped).intersection(peer)) / len(peer) if peer else 0.0)
        scores = vectors @ np.asarray(embedder.embed_query(text), dtype=np.float32)
        k = min(TOP_K, len(scores))
        kth = float(np.partition(scores, len(scores) - k)[len(scores) - k]) - 1e-6
        for name, found in (("mapped_exact", mapped), ("peer_exact", peer)):
            inside = sum(1 for node_id in found if scores[int(node_id.removeprefix("chunk-"))] >= kth)
            shares[name].append(inside / k)
    return {name: statistics.fmean(values) for name, values in shares.items()}


def neo4j_statements(services: SearchServices, graph: Graph, text: str) -> int:
    backend = cast(MappedBackend, services.backend)
    before = backend.round_trips()["neo4j"]
    graph.invoke(cast(BrainSearchInput, mapped_request(text)))
    return backend.round_trips()["neo4j"] - before


def profile_text(graph: Graph, texts: Sequence[str]) -> str:
    """A pyinstrument profile (text, 0.2 ms samples) of mapped searches of ``texts``."""
    from pyinstrument import Profiler

    profiler = Profiler(interval=0.0002, async_mode="disabled")
    profiler.start()
    for text in texts:
        graph.invoke(cast(BrainSearchInput, mapped_request(text)))
    profiler.stop()
    return str(profiler.output_text(unicode=False, color=False, show_all=False))


def statement_kinds(backend: MappedBackend) -> dict[str, str]:
    """Each statement a mapped search of this benchmark sends -> a short name."""
    statements = backend.graph.statements
    types = backend.graph.rel_types(EDGE_TYPES)
    return {
        statements.candidates(): "mapped: candidates (vector index, visible candidates with their vectors)",
        statements.reach(types, metadata=True): "mapped: seeds (hits' metadata, links, reached vectors)",
        statements.reach(types, metadata=False): "mapped: hop (links, reached vectors)",
        statements.get_nodes(): "mapped: get_nodes (context: metadata, visibility)",
        statements.context(types): "mapped: context (edges, clusters, passage texts)",
    }


def peer_statement(retriever: Any, text: str) -> Recorded:
    """The one statement of a peer search, with its parameters (as ``get_search_results`` sends it)."""
    from neo4j_graphrag.neo4j_queries import get_search_query
    from neo4j_graphrag.types import SearchType

    query, params = get_search_query(
        search_type=SearchType.VECTOR,
        retrieval_query=retriever.retrieval_query,
        node_label=retriever._node_label,
        embedding_node_property=retriever._node_embedding_property,
        embedding_dimension=retriever._embedding_dimension,
    )
    vector = retriever.embedder.embed_query(text)
    values = {"vector_index_name": retriever.index_name, "top_k": TOP_K, "effective_search_ratio": 1}
    return query, {**params, **values, "query_vector": vector}


def statement_rows(
    services: SearchServices, graph: Graph, retriever: Any, texts: Sequence[str], settings: Neo4jWeaviateSettings
) -> list[KindRow]:
    """The Neo4j statements of mapped searches of ``texts`` and the peer's, each replayed
    :data:`REPLAYS` times in a read session and once profiled (:func:`benchmarks.statements.replay`):
    per statement kind, the client's wall time, the server's own time, database hits (p50)."""
    backend = cast(MappedBackend, services.backend)
    kinds = statement_kinds(backend)

    def searches() -> None:
        for text in texts:
            graph.invoke(cast(BrainSearchInput, mapped_request(text)))

    groups: dict[str, list[Recorded]] = {}
    for query, params in record(cast(Any, backend), searches):
        groups.setdefault(kinds.get(query, "mapped: other"), []).append((query, params))
    groups[f"peer: {PEER_NAME}"] = [peer_statement(retriever, text) for text in texts]
    driver = neo4j.GraphDatabase.driver(
        settings.neo4j_uri, auth=(settings.neo4j_user, settings.neo4j_password), notifications_min_severity="OFF"
    )
    try:
        with driver.session(database=settings.neo4j_database, default_access_mode=neo4j.READ_ACCESS) as session:
            return [dataclasses.replace(replay(session, group, REPLAYS), kind=kind) for kind, group in groups.items()]
    finally:
        driver.close()


def bench_size(
    size: int, options: argparse.Namespace, settings: Neo4jWeaviateSettings, profile_to: Path | None
) -> SizeRow:
    """Write the graph of ``size`` chunks, search it with both systems, drop it."""
    names = Names(uuid.uuid4().hex[:10])
    database = settings.neo4j_database
    texts = chunk_texts(size, seed=size)
    queries = query_texts(options.searches, seed=size)
    started = time.perf_counter()
    vectors = LexicalHashEmbeddings().embed_documents_array(texts)  # unit rows, as neo4j-graphrag stores them
    embed_s = time.perf_counter() - started
    driver = neo4j.GraphDatabase.driver(settings.neo4j_uri, auth=(settings.neo4j_user, settings.neo4j_password))
    peer_driver = neo4j.GraphDatabase.driver(settings.neo4j_uri, auth=(settings.neo4j_user, settings.neo4j_password))
    services = mapped_services(names, settings)
    try:
        print(f"... writing {size} chunks ({names.chunk})", file=sys.stderr, flush=True)
        load_s = write_graph(driver, database, names, texts, vectors)
        print(f"... written in {load_s:.1f} s; searching", file=sys.stderr, flush=True)
        counts = driver.execute_query(
            f"MATCH (c:`{names.chunk}`)-[r]-() RETURN count(DISTINCT c) AS chunks, count(DISTINCT r) AS rels",
            database_=database,
        ).records[0]
        graph = build_graph(services)
        retriever = peer_retriever(peer_driver, database, names)
        servers = {k: v for k, v in server_cpu.server_pids().items() if k == "neo4j"}
        settle(servers)
        systems = {MAPPED: mapped_search(graph), PEER: peer_search(retriever)}
        gc.collect()
        gc.freeze()  # the collector's full passes time the searches' objects, not the benchmark's
        try:
            measured = interleaved(systems, queries, options.warm_up, servers)
        finally:
            gc.unfreeze()
        statements = neo4j_statements(services, graph, queries[0])
        agreed = agreement(graph, retriever, queries[:50], vectors)
        replayed = statement_rows(services, graph, retriever, queries[:STATEMENT_SEARCHES], settings)
        if profile_to is not None:
            profile_to.parent.mkdir(parents=True, exist_ok=True)
            profile_to.write_text(profile_text(graph, queries[: options.profile_searches]), encoding="utf-8")
            print(f"wrote {profile_to}", file=sys.stderr)
    finally:
        services.backend.close()
        peer_driver.close()
        drop_graph(driver, database, names)
        driver.close()
    return SizeRow(
        run=names.run,
        chunks=int(counts["chunks"]),
        documents=math.ceil(size / CHUNKS_PER_DOCUMENT),
        relationships=int(counts["rels"]),
        embed_s=embed_s,
        load_s=load_s,
        searches=len(queries),
        mapped=system_row(measured[MAPPED], servers, statements),
        peer=system_row(measured[PEER], servers, 1),
        top_k_overlap=agreed["top_k_overlap"],
        mapped_exact=agreed["mapped_exact"],
        peer_exact=agreed["peer_exact"],
        statements=replayed,
    )


# -- reporting --------------------------------------------------------------------------------------


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def table(rows: Sequence[SizeRow]) -> list[str]:
    """Markdown: per size, p50 / p95 and client CPU (p50) of each system, and mapped over peer."""
    lines = [
        "| chunks | mapped p50 / p95 | peer p50 / p95 | p50 ratio | p95 ratio "
        "| mapped cpu | peer cpu | cpu ratio | neo4j cpu mapped / peer | statements | exact top-k mapped / peer |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        ratios = r.ratios
        lines.append(
            f"| {r.chunks} | {r.mapped.p50_ms:.1f} / {r.mapped.p95_ms:.1f} | {r.peer.p50_ms:.1f} / {r.peer.p95_ms:.1f} "
            f"| {ratios['p50']:.2f} | {ratios['p95']:.2f} | {r.mapped.cpu_p50_ms:.1f} | {r.peer.cpu_p50_ms:.1f} "
            f"| {ratios['cpu']:.2f} | {_ms(r.mapped.neo4j_cpu_ms)} / {_ms(r.peer.neo4j_cpu_ms)} "
            f"| {r.mapped.statements} / {r.peer.statements} | {r.mapped_exact:.2f} / {r.peer_exact:.2f} |"
        )
    return lines


def commit() -> str:
    """The checked-out commit (``-dirty``: the tree has changes)."""
    try:
        described = subprocess.run(
            ["git", "describe", "--always", "--dirty", "--abbrev=12"],
            cwd=Path(__file__).parent,
            capture_output=True,
            text=True,
            check=True,
        )
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return described.stdout.strip()


def write_results(out: Path, rows: Sequence[SizeRow], meta: dict[str, Any], command: str) -> list[Path]:
    """``mapped_latency.{json,md}`` in ``out``; the paths written."""
    out.mkdir(parents=True, exist_ok=True)
    data = {**meta, "rows": [{**asdict(r), "ratios": r.ratios} for r in rows]}
    paths = [out / f"{BASENAME}.json", out / f"{BASENAME}.md"]
    paths[0].write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    lines = [
        "# The mapped backend and neo4j-graphrag's VectorCypherRetriever on a lexical graph",
        "",
        f"`{command}`; {meta['date']}; commit {meta['commit']}; "
        + ", ".join(f"{key} {value}" for key, value in meta["machine"].items()),
        "",
        f"Milliseconds per search, topK {TOP_K}, one hop, {meta['arguments']['searches']} searches per size "
        "alternating between the two; `cpu`: p50 of the client process's CPU time per search; `neo4j cpu`: "
        "mean CPU time of the Neo4j process per search; ratios: mapped over peer (below 1: brain-graph is "
        "faster); `statements`: Neo4j statements of one search; `exact top-k`: mean share of a system's "
        f"{TOP_K} chunks that are in the exact top {TOP_K} (a numpy scan of every chunk's vector), over 50 queries.",
        "",
        *table(rows),
    ]
    for r in rows:
        lines += [
            "",
            f"The Neo4j statements at {r.chunks} chunks: those of {min(STATEMENT_SEARCHES, r.searches)} mapped "
            "searches and the "
            f"peer's for the same queries, each replayed {REPLAYS} times in a read session (client wall time and "
            "the server's own, `result_available_after` + `result_consumed_after`) and once profiled:",
            "",
            statement_table(r.statements),
        ]
    paths[1].write_text("\n".join(lines) + "\n", encoding="utf-8")
    return paths


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000], help="chunks per graph")
    parser.add_argument("--searches", type=int, default=200, help="measured searches per system and size")
    parser.add_argument("--warm-up", type=int, default=300, help="unmeasured searches per system and size")
    parser.add_argument(
        "--profile-searches", type=int, default=20, help="mapped searches profiled at the largest size (0: none)"
    )
    parser.add_argument("--out", type=Path, default=None, help="folder of the JSON and markdown results")
    parser.add_argument("--profiles", type=Path, default=PROFILES, help="folder of the profile")
    parser.add_argument(
        "--smoke", action="store_true", help=f"--sizes 50 --searches 5 --warm-up 2, no profile, {SMOKE_RESULTS}"
    )
    args = parser.parse_args(argv)
    if args.smoke:
        args.sizes, args.searches, args.warm_up, args.profile_searches = [50], 5, 2, 0
    args.out = args.out or (SMOKE_RESULTS if args.smoke else RESULTS)
    if min(args.sizes) < 1 or args.searches < 1 or args.warm_up < 0 or args.profile_searches < 0:
        parser.error("--sizes and --searches must be at least 1, --warm-up and --profile-searches at least 0")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    warnings.filterwarnings("ignore", "The default returned 'id' field", DeprecationWarning)  # the peer's results
    if not servers_configured():
        print('mapped_latency: needs the servers: eval "$(scripts/services up)"', file=sys.stderr)
        return 2
    settings = Neo4jWeaviateSettings()
    rows = []
    largest = max(args.sizes)
    for size in args.sizes:
        profile_to = args.profiles / f"mapped-{size}.txt" if size == largest and args.profile_searches else None
        rows.append(bench_size(size, args, settings, profile_to))
        print("\n".join(table(rows[-1:])), file=sys.stderr)
    meta = {
        "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
        "commit": commit(),
        "machine": machine(server_versions()),
        "arguments": {key: str(value) if isinstance(value, Path) else value for key, value in vars(args).items()},
        "topK": TOP_K,
        "expandDepth": DEPTH,
        "chunksPerDocument": CHUNKS_PER_DOCUMENT,
        "wordsPerChunk": WORDS_PER_CHUNK,
    }
    print("\n".join(table(rows)))
    command = " ".join(["python -m benchmarks.mapped_latency", *(sys.argv[1:] if argv is None else argv)])
    for path in write_results(args.out, rows, meta, command):
        print(f"wrote {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
