"""Hooks an application calls on its own create, update and delete: the graph and the vectors change
together.

Each call is one :class:`~brain_graph.stores.base.ChangeSet`, applied all or nothing
(:meth:`~brain_graph.stores.base.StorageBackend.apply`): nodes and edges are written with the vectors
of every profile that covers them (embedded only when their content hash or filter metadata changed;
a node the embedder fails on is still written, without a stale vector, and reported ``pending``;
the next ``brain-graph index`` retries it); deleted nodes lose their edges and vectors. Records are
given as :class:`~brain_graph.stores.base.NodeRecord`/:class:`~brain_graph.stores.base.EdgeRecord`
or as dicts in the dataset format of ``examples/data`` (``tenantId``, ``id``, ``nodeType``, ...).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping, Sequence
from itertools import groupby
from typing import Any

from pydantic import ValidationError

from brain_graph.core.errors import DatasetError
from brain_graph.indexing.changes import vector_changes
from brain_graph.indexing.dataset_items import DatasetEdge, DatasetNode
from brain_graph.indexing.report import IndexReport
from brain_graph.pipeline.services import SearchServices
from brain_graph.stores.base import (
    ChangeSet,
    EdgeRecord,
    NodeKey,
    NodeRecord,
    ProfileIndexInfo,
    VectorKey,
    VectorRecord,
)
from brain_graph.stores.write_checks import check_changes, checked_records

NodeInput = NodeRecord | Mapping[str, Any]
EdgeInput = EdgeRecord | Mapping[str, Any]


def _listed(name: str, values: object, what: str) -> list[Any]:
    """``values`` as a list; a string (it would be read one character per item), a single object or a
    non-iterable is refused with a :class:`DatasetError` naming the argument."""
    single = (str, bytes, bytearray, Mapping, NodeRecord, EdgeRecord)
    if isinstance(values, single) or not isinstance(values, Iterable):
        raise DatasetError(f"{name}: must be a list of {what}, not a single {type(values).__name__}")
    return list(values)


def _validated(model: type[DatasetNode] | type[DatasetEdge], value: object, index: int) -> Any:
    kind = "nodes" if model is DatasetNode else "edges"
    if not isinstance(value, Mapping):
        record = "a NodeRecord" if model is DatasetNode else "an EdgeRecord"
        raise DatasetError(f"{kind}[{index}]: must be {record} or an object (got {type(value).__name__})")
    try:
        return model.model_validate(dict(value)).to_record()
    except ValidationError as error:
        first = error.errors(include_url=False)[0]
        where = ".".join(str(part) for part in first["loc"]) or "record"
        raise DatasetError(f"{kind}[{index}].{where}: {first['msg']}") from None


def node_records(nodes: Sequence[NodeInput]) -> list[NodeRecord]:
    """Records of nodes given as records or dataset-format dicts, sorted by (tenant, id)."""
    given = _listed("nodes", nodes, "nodes (NodeRecord or dataset-format objects)")
    records = [n if isinstance(n, NodeRecord) else _validated(DatasetNode, n, i) for i, n in enumerate(given)]
    seen: set[tuple[str, str]] = set()
    for record in records:
        key = (record.tenant_id, record.node_id)
        if key in seen:  # the first key given again, in the order given
            raise DatasetError(f"node {key[1][:80]!r} of tenant {key[0][:80]!r} is given twice")
        seen.add(key)
    return sorted(records, key=lambda n: (n.tenant_id, n.node_id))


def edge_records(edges: Sequence[EdgeInput]) -> list[EdgeRecord]:
    """Records of edges given as records or dataset-format dicts."""
    given = _listed("edges", edges, "edges (EdgeRecord or dataset-format objects)")
    return [e if isinstance(e, EdgeRecord) else _validated(DatasetEdge, e, i) for i, e in enumerate(given)]


def node_keys(tenant_id: str, node_ids: Sequence[str]) -> list[NodeKey]:
    """The keys of nodes to delete, each once, checked like every deleted key (before any read or
    write): ``tenant_id`` a string, ``node_ids`` a list of strings (a single string is refused, not
    read as one id per character)."""
    if not isinstance(tenant_id, str):
        raise DatasetError(f"tenant_id: must be a string (got {type(tenant_id).__name__})")
    given = _listed("node_ids", node_ids, "node ids")
    for index, node_id in enumerate(given):
        if not isinstance(node_id, str):
            raise DatasetError(f"node_ids[{index}]: must be a string (got {type(node_id).__name__})")
    keys = [NodeKey(tenant_id, node_id) for node_id in dict.fromkeys(given)]
    check_changes(ChangeSet(delete_nodes=keys))
    return keys


class GraphWriter:
    """Batched upserts and deletes of nodes and edges, with their vectors (see the module docstring).

    Args:
        services: The deployment's services (backend and embedding profiles), e.g.
            :func:`brain_graph.pipeline.config.build_services`.
    """

    def __init__(self, services: SearchServices) -> None:
        self.services = services

    def upsert_nodes(self, nodes: Sequence[NodeInput], edges: Sequence[EdgeInput] = ()) -> IndexReport:
        """Create or replace nodes (each as a whole) and, in the same change, edges among any nodes;
        vectors follow."""
        started = time.perf_counter()
        # checked before any embedding (a bad record costs nothing), and marked so that apply does not check again
        records, edge_list = checked_records(node_records(nodes), edge_records(edges))
        report = IndexReport(nodes=len(records))
        upserts: list[VectorRecord] = []
        deletes: list[VectorKey] = []
        identities: list[ProfileIndexInfo] = []
        for tenant, group in groupby(records, key=lambda n: n.tenant_id):
            tenant_nodes = list(group)
            ids = [n.node_id for n in tenant_nodes]
            for profile in self.services.profiles.profiles:
                states = {
                    s.node_id: s
                    for s in self.services.backend.index_store.vector_states(tenant, profile.profile_id, ids)
                }
                changes = vector_changes(
                    tenant_nodes, profile, self.services.profiles, states, full=False, report=report
                )
                upserts.extend(changes.upsert_vectors)
                deletes.extend(changes.delete_vectors)
                identities.extend(changes.profiles)
        report.edges = len(edge_list)
        self.services.backend.apply(
            ChangeSet(
                upsert_nodes=records,
                upsert_edges=edge_list,
                upsert_vectors=upserts,
                delete_vectors=deletes,
                profiles=list({info.profile_id: info for info in identities}.values()),
            )
        )
        report.seconds = time.perf_counter() - started
        return report

    def upsert_edges(self, edges: Sequence[EdgeInput]) -> IndexReport:
        """Create or replace edges between existing nodes (an edge to a missing node refuses the batch)."""
        started = time.perf_counter()
        records = edge_records(edges)
        self.services.backend.apply(ChangeSet(upsert_edges=records))
        return IndexReport(edges=len(records), seconds=time.perf_counter() - started)

    def delete_edges(self, edges: Sequence[EdgeInput]) -> IndexReport:
        """Delete edges (matched by tenant, type and ends; missing ones are ignored)."""
        started = time.perf_counter()
        records = edge_records(edges)
        self.services.backend.apply(ChangeSet(delete_edges=records))
        return IndexReport(edges=len(records), seconds=time.perf_counter() - started)

    def delete_nodes(self, tenant_id: str, node_ids: Sequence[str]) -> IndexReport:
        """Delete nodes of a tenant with their edges and their vectors in every profile (missing ids are
        ignored; a malformed argument is refused before anything is read or written)."""
        started = time.perf_counter()
        keys = node_keys(tenant_id, node_ids)
        ids = [key.node_id for key in keys]
        store = self.services.backend.index_store
        existing = store.get_records(tenant_id, ids)
        vectors = sum(len(store.vector_states(tenant_id, p.profile_id, ids)) for p in self.services.profiles.profiles)
        self.services.backend.apply(ChangeSet(delete_nodes=keys))
        return IndexReport(nodes=len(existing), deleted=vectors, seconds=time.perf_counter() - started)
