"""Datasets in the plain JSON format of ``examples/data`` and their loading into a backend."""

from __future__ import annotations

import gc
import json
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from importlib import resources
from itertools import groupby
from pathlib import Path
from typing import Any

from pydantic import ValidationError, model_validator

from brain_graph.core.errors import ConfigurationError, DatasetError, one_line_message
from brain_graph.core.vocabulary import check_edge_type
from brain_graph.embedding.profiles import EmbeddingProfile, ProfileRegistry, profile_text
from brain_graph.indexing.changes import vector_changes
from brain_graph.indexing.dataset_items import (
    DatasetEdge,
    DatasetNode,
    _DatasetHead,
    _DatasetShape,
    _parse_int,
    _refuse_constant,
    edge_record,
    node_record,
)
from brain_graph.indexing.json_stream import UnstreamableError
from brain_graph.indexing.report import IndexReport
from brain_graph.indexing.streamed_read import streamed_graph
from brain_graph.indexing.vector_stream import PAGE_SIZE, VectorStream, all_failed_error, made_vectors
from brain_graph.stores.base import (
    ChangeSet,
    EdgeRecord,
    NodeRecord,
    ProfileIndexInfo,
    StorageBackend,
    StreamedLoad,
    VectorKey,
    VectorRecord,
)
from brain_graph.stores.write_checks import check_load, checked_records, dangling_edge_error, outside_ends

EXAMPLE_DATASET_NAME = "example_graph.json"
SPOOL_BYTES = 256 << 20  # a dataset file larger than this is streamed, its records kept on disk
MAX_LOCATION_PART_CHARS = 64  # a key quoted in an error (a hostile key cannot flood the message)


def reference_problem(
    node_keys: Iterable[tuple[str, str]],
    edges: Iterable[DatasetEdge | EdgeRecord],
    outside: list[str] | None = None,
) -> str | None:
    """Why nodes and edges do not make a graph: a node given twice in a tenant, an edge type outside the
    identifier grammar, an edge to a node its tenant does not have. With ``outside``, that last problem
    is appended to it instead (the first only) and the edges are still checked: a merge-load may point
    at stored nodes."""
    keys = set()
    for key in node_keys:
        if key in keys:
            return f"duplicate node {key[1]!r} in tenant {key[0]!r}"
        keys.add(key)
    edge_types: set[str] = set()  # checked already (a handful of types, each on many edges)
    for edge in edges:
        if edge.edge_type not in edge_types:
            try:
                check_edge_type(edge.edge_type)
            except ConfigurationError as error:
                return str(error)
            edge_types.add(edge.edge_type)
        for end in (edge.from_node_id, edge.to_node_id):
            if (edge.tenant_id, end) not in keys:
                problem = (
                    f"edge {edge.edge_type} {edge.from_node_id} -> {edge.to_node_id}: no node {end!r} "
                    f"in tenant {edge.tenant_id!r} (edges never cross tenants)"
                )
                if outside is None:
                    return problem
                if not outside:
                    outside.append(problem)
                break
    return None


@dataclass(frozen=True)
class GraphRecords:
    """A dataset read as records (what :func:`load_dataset` takes), in canonical order; ``checked``
    when :func:`~brain_graph.stores.write_checks.check_load` passed on them (:func:`read_graph`, whose records
    are :func:`~brain_graph.stores.write_checks.checked_records`: immutable, so neither :func:`load_dataset`
    nor the backend checks them again; the backend checks everything else it writes)."""

    nodes: Sequence[NodeRecord]
    edges: Sequence[EdgeRecord]
    checked: bool = False
    outside_problem: str | None = None
    """Why the records are no graph on their own (an edge to a node not among them): a replace-load
    refuses them with it; a merge-load writes the edge if the node is stored in the tenant."""

    def node_records(self) -> Sequence[NodeRecord]:
        return self.nodes

    def edge_records(self) -> Sequence[EdgeRecord]:
        return self.edges


class Dataset(_DatasetHead):
    """A knowledge graph to load: nodes and edges, each owned by a tenant."""

    nodes: list[DatasetNode]
    edges: list[DatasetEdge]

    @model_validator(mode="after")
    def _check_references(self) -> Dataset:
        problem = reference_problem(((n.tenant_id, n.id) for n in self.nodes), self.edges)
        if problem is not None:
            raise ValueError(problem)
        return self

    def node_records(self) -> list[NodeRecord]:
        """Nodes in a canonical order (tenant, id), whatever the file's order."""
        return sorted((n.to_record() for n in self.nodes), key=lambda n: (n.tenant_id, n.node_id))

    def edge_records(self) -> list[EdgeRecord]:
        """Edges in a canonical order."""
        return sorted(
            (e.to_record() for e in self.edges),
            key=lambda e: (e.tenant_id, e.edge_type, e.from_node_id, e.to_node_id),
        )


@contextmanager
def collector_paused() -> Iterator[None]:
    """No cyclic garbage collection in the block (restored as it was after it), for a process that
    does nothing but load (the CLI): a load allocates millions of objects that all stay alive (parsed
    JSON, records, vectors), which the collector would scan over and over for nothing. Reference
    counting still frees everything else; a load makes no reference cycles of its own. The library
    functions leave the collector alone: in a host process (a server) other threads' cyclic garbage
    must not pile up for the length of a load (docs/internals/loading.md)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def example_dataset_path() -> Path:
    """The bundled example knowledge graph (``examples/data/example_graph.json``)."""
    return Path(str(resources.files("brain_graph.example_data").joinpath(EXAMPLE_DATASET_NAME)))


def _parse_json(source: Path) -> Any:
    """The JSON value of a dataset file; every way a file can be unreadable is one DatasetError line."""
    try:
        data = source.read_bytes()
    except FileNotFoundError:
        raise DatasetError(f"{source}: no such file") from None
    except OSError as error:
        raise DatasetError(f"{source}: not readable ({error.strerror or error})") from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise DatasetError(
            f"{source}: not UTF-8 (byte 0x{data[error.start]:02x} at offset {error.start}); save the file as UTF-8"
        ) from None
    try:
        return json.loads(text, parse_constant=_refuse_constant, parse_int=_parse_int)
    except json.JSONDecodeError as error:
        where = f"line {error.lineno} column {error.colno}"
        raise DatasetError(f"{source}: not valid JSON ({error.msg} at {where})") from None
    except RecursionError:
        raise DatasetError(f"{source}: JSON nested too deeply to read") from None


def _location(parts: Sequence[int | str]) -> str:
    """Where a validation error is (``nodes.0.text.<key>``), each part one line and bounded."""
    return ".".join(one_line_message(str(part), MAX_LOCATION_PART_CHARS) for part in parts) or "dataset"


def read_dataset(path: str | Path) -> Dataset:
    """Parse and check a dataset file; raises :class:`DatasetError` with the reason, in one line."""
    source = Path(path)
    try:
        raw = _parse_json(source)
    except DatasetError as error:
        if str(error).startswith(str(source)):
            raise
        raise DatasetError(f"{source}: {error}") from None
    if not isinstance(raw, dict):
        raise DatasetError(f"{source}: a dataset is a JSON object with nodes and edges (got {type(raw).__name__})")
    try:
        dataset = Dataset.model_validate(raw)
    except ValidationError as error:
        first = error.errors(include_url=False)[0]
        where = _location(first["loc"])
        message = " ".join(str(first["msg"]).removeprefix("Value error, ").split())[:300]
        raise DatasetError(f"{source}: {where}: {message} ({error.error_count()} error(s))") from None
    except RecursionError:
        raise DatasetError(f"{source}: JSON nested too deeply to read") from None
    try:
        check_load(dataset.node_records(), dataset.edge_records(), [], [])
    except DatasetError as error:
        raise DatasetError(f"{source}: {error}") from None
    return dataset


def _invalid(source: Path, error: ValidationError, prefix: Sequence[int | str] = ()) -> DatasetError:
    first = error.errors(include_url=False)[0]
    where = _location([*prefix, *first["loc"]])
    message = " ".join(str(first["msg"]).removeprefix("Value error, ").split())[:300]
    return DatasetError(f"{source}: {where}: {message} ({error.error_count()} error(s))")


def _records(source: Path, kind: str, items: list[Any], model: type[DatasetNode] | type[DatasetEdge]) -> list[Any]:
    """Each item validated and turned into its record, the raw item dropped as soon as it is read: a
    well-formed item directly (:func:`node_record`, :func:`edge_record`), any other by the pydantic
    model, which words the error (or accepts it as a coercion the direct path leaves to it)."""
    direct = node_record if model is DatasetNode else edge_record
    records = []
    for index, item in enumerate(items):
        record = direct(item)
        if record is None:
            try:
                record = model.model_validate(item).to_record()
            except ValidationError as error:
                raise _invalid(source, error, (kind, index)) from None
        records.append(record)
        items[index] = None
    return records


def read_graph(path: str | Path) -> GraphRecords:
    """Parse and check a dataset file into records, with the checks and errors of :func:`read_dataset`.

    A file of at most :data:`SPOOL_BYTES` is parsed as a whole, each item validated and dropped as
    soon as its record exists (a 100k-node file peaks at about the parsed JSON plus the records). A
    larger one is read piece by piece (:mod:`~brain_graph.indexing.streamed_read`) into records on
    disk (:class:`~brain_graph.indexing.spool.RecordSpool`), so its size does not bound memory; if it
    has any problem, it is read again as a whole, which words the first problem as before (for a bad
    file, memory is that of the whole read)."""
    source = Path(path)
    try:
        if source.stat().st_size <= SPOOL_BYTES:
            return _whole_graph(source)
        read = streamed_graph(source)
    except (UnstreamableError, OSError):
        return _whole_graph(source)
    return GraphRecords(read.nodes, read.edges, checked=True, outside_problem=read.outside_problem)


def _whole_graph(source: Path) -> GraphRecords:
    """:func:`read_graph` of a file parsed as a whole: every record in memory, the parsed JSON of each
    item dropped as soon as its record exists. The errors of :func:`read_dataset`."""
    try:
        raw = _parse_json(source)
    except DatasetError as error:
        if str(error).startswith(str(source)):
            raise
        raise DatasetError(f"{source}: {error}") from None
    if not isinstance(raw, dict):
        raise DatasetError(f"{source}: a dataset is a JSON object with nodes and edges (got {type(raw).__name__})")
    try:
        _DatasetShape.model_validate(raw)
        nodes = _records(source, "nodes", raw["nodes"], DatasetNode)
        edges = _records(source, "edges", raw["edges"], DatasetEdge)
    except ValidationError as error:
        raise _invalid(source, error) from None
    except RecursionError:
        raise DatasetError(f"{source}: JSON nested too deeply to read") from None
    del raw
    outside: list[str] = []
    problem = reference_problem(((n.tenant_id, n.node_id) for n in nodes), edges, outside)
    if problem is not None:
        raise DatasetError(f"{source}: {problem}")
    nodes.sort(key=lambda n: (n.tenant_id, n.node_id))
    edges.sort(key=lambda e: (e.tenant_id, e.edge_type, e.from_node_id, e.to_node_id))
    try:
        checked_nodes, checked_edges = checked_records(nodes, edges)
    except DatasetError as error:
        raise DatasetError(f"{source}: {error}") from None
    outside_problem = f"{source}: {outside[0]}" if outside else None
    return GraphRecords(checked_nodes, checked_edges, checked=True, outside_problem=outside_problem)


def embedding_text(node: NodeRecord, profile: EmbeddingProfile) -> str:
    """The text a profile embeds for a node (:func:`brain_graph.embedding.profiles.profile_text`)."""
    return profile_text(node, profile)[0]


def index_info(registry: ProfileRegistry) -> list[ProfileIndexInfo]:
    """What the index records for each profile."""
    return [registry.identity(p) for p in registry.profiles]


def embed_nodes(
    nodes: Sequence[NodeRecord],
    registry: ProfileRegistry,
    progress: Callable[[int], None] | None = None,
    report: IndexReport | None = None,
) -> list[VectorRecord]:
    """Vectors (float32 numpy rows, with their content hashes) of every node for every profile that
    covers its type, in batches; nodes with no text are skipped. A node the embedder fails on gets no
    vector and is counted ``pending`` in ``report`` (the next ``brain-graph index`` retries it)."""
    counts = report if report is not None else IndexReport()
    return list(made_vectors(nodes, registry, counts, progress))


def embedding_work(dataset_nodes: Sequence[NodeRecord], registry: ProfileRegistry) -> int:
    """How many (node, profile) pairs a load examines (the total of its progress)."""
    return sum(1 for profile in registry.profiles for node in dataset_nodes if node.node_type in profile.node_types)


def load_dataset(
    dataset: Dataset | GraphRecords,
    backend: StorageBackend,
    registry: ProfileRegistry,
    *,
    replace: bool = True,
    progress: Callable[[int], None] | None = None,
) -> IndexReport:
    """Embed and write a dataset; returns the counts (``nodes``, ``edges``, ``embedded`` vectors,
    ``unchanged`` ones, ``deleted`` ones, ``pending`` nodes the embedder failed on, ``truncated`` texts).

    Vectors are float32 rows (about 200 MB at 100k nodes); the backend writes them in batches. A
    replace-load embeds every node; into a backend that takes them as a stream
    (:class:`~brain_graph.stores.base.StreamedLoad`: the embedded store) they are made while it writes
    them, in its one transaction (:class:`~brain_graph.indexing.vector_stream.VectorStream`), so a page
    of them is in memory at a time. A merge-load (``replace=False``) is incremental: a loaded node
    whose stored vector is current keeps it; the vectors a merge makes stale (a node now without text
    or of another type, a changed node the embedder failed on) are deleted first, so a failure later
    leaves them missing, never stale. A node the embedder fails on is still written, without a vector
    (``pending``: ``brain-graph index`` retries it); when the embedder fails on every text, nothing is
    written (:class:`DatasetError`): an outage does not replace a tenant's vectors by none. A merge-load's
    edge may point at a node already stored in its tenant; one to a node neither loaded nor stored, or
    a replace-load's to a node it does not load, refuses the load before anything is embedded or written."""
    started = time.perf_counter()
    if replace and isinstance(dataset, GraphRecords) and dataset.outside_problem is not None:
        raise DatasetError(dataset.outside_problem)
    nodes = dataset.node_records()
    edges = dataset.edge_records()
    if not (isinstance(dataset, GraphRecords) and dataset.checked):
        check_load(nodes, edges, [], [])  # before embedding: a bad dataset costs no embedding time
    if not replace:
        _check_stored_ends(nodes, edges, backend)  # before embedding and before stale vectors go
    report = IndexReport(nodes=len(nodes), edges=len(edges))
    if replace and isinstance(backend, StreamedLoad):  # embedded while written: a page of vectors in memory
        backend.load_streamed(nodes, edges, VectorStream(nodes, registry, report, progress), index_info(registry))
        report.seconds = time.perf_counter() - started
        return report
    if replace:
        vectors, stale = embed_nodes(nodes, registry, progress, report), list[VectorKey]()
    else:
        vectors, stale = _merge_vectors(nodes, backend, registry, progress, report)
    error = all_failed_error(report)
    if error is not None:
        raise error
    if stale:
        backend.apply(ChangeSet(delete_vectors=stale))
    backend.load(nodes, edges, vectors, index_info(registry), replace=replace)
    report.seconds = time.perf_counter() - started
    return report


def _check_stored_ends(nodes: Sequence[NodeRecord], edges: Sequence[EdgeRecord], backend: StorageBackend) -> None:
    """Refuse a merge-load with an edge to a node neither loaded nor stored in its tenant (one read per
    tenant with such edges); the backend's write checks it again, in the write."""
    missing: set[tuple[str, str]] = set()
    for tenant, group in groupby(outside_ends(nodes, edges), key=lambda key: key[0]):
        ids = [node_id for _, node_id in group]
        stored = {record.node_id for record in backend.index_store.get_records(tenant, ids)}
        missing.update((tenant, node_id) for node_id in ids if node_id not in stored)
    error = dangling_edge_error(edges, missing)
    if error is not None:
        raise error


def _merge_vectors(
    nodes: Sequence[NodeRecord],
    backend: StorageBackend,
    registry: ProfileRegistry,
    progress: Callable[[int], None] | None,
    report: IndexReport,
) -> tuple[list[VectorRecord], list[VectorKey]]:
    """The vectors a merge-load writes and the stale ones it deletes, per tenant and profile against
    the stored vectors' states (one read per tenant, profile and page)."""
    vectors: list[VectorRecord] = []
    stale: list[VectorKey] = []
    for profile in registry.profiles:
        for tenant, group in groupby(nodes, key=lambda n: n.tenant_id):
            tenant_nodes = list(group)
            for start in range(0, len(tenant_nodes), PAGE_SIZE):
                page = tenant_nodes[start : start + PAGE_SIZE]
                ids = [n.node_id for n in page]
                states = {s.node_id: s for s in backend.index_store.vector_states(tenant, profile.profile_id, ids)}
                changes = vector_changes(page, profile, registry, states, full=False, report=report)
                vectors.extend(changes.upsert_vectors)
                stale.extend(changes.delete_vectors)
                if progress is not None:
                    progress(sum(1 for n in page if n.node_type in profile.node_types))
    return vectors, stale
