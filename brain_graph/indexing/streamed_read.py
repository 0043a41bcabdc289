"""A dataset file read as a stream of items into checked records on disk (:func:`streamed_graph`).

It accepts exactly the files the whole read (:func:`brain_graph.indexing.items.read_graph`) accepts
and gives the same records in the same order; it stops at the first problem of any kind with
:class:`~brain_graph.indexing.json_stream.UnstreamableError`, leaving the wording of the error to the
whole read. Edges are checked against the nodes as they come, so a file whose edges come before its
nodes is read the whole way too.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple

from pydantic import ValidationError

from brain_graph.core.errors import ConfigurationError, DatasetError
from brain_graph.core.vocabulary import check_edge_type
from brain_graph.indexing import dataset_items as items
from brain_graph.indexing.json_stream import STREAM_END, UnstreamableError, stream_dataset
from brain_graph.indexing.spool import RecordSpool
from brain_graph.stores.base import EdgeRecord, NodeRecord
from brain_graph.stores.write_checks import check_load

CHECK_BATCH = 1_000  # spooled records checked at a time


class StreamedGraph(NamedTuple):
    """What :func:`streamed_graph` read."""

    nodes: Sequence[NodeRecord]
    edges: Sequence[EdgeRecord]
    outside_problem: str | None


def _node(item: Any) -> NodeRecord:
    record = items.node_record(item)
    if record is None:
        try:
            record = items.DatasetNode.model_validate(item).to_record()
        except ValidationError:
            raise UnstreamableError from None
    return record


def _edge(item: Any) -> EdgeRecord:
    record = items.edge_record(item)
    if record is None:
        try:
            record = items.DatasetEdge.model_validate(item).to_record()
        except ValidationError:
            raise UnstreamableError from None
    return record


class _Reader:
    """The state of one streamed read: the node keys seen, the records, the first outside end."""

    def __init__(self, source: Path) -> None:
        self.source = source
        self.keys: set[tuple[str, str]] = set()
        self.tenants: dict[str, str] = {}  # one string object per tenant id, shared by the keys
        self.edge_types: set[str] = set()
        self.outside: str | None = None
        self.nodes: RecordSpool[NodeRecord] = RecordSpool(2, NodeRecord)
        self.edges: RecordSpool[EdgeRecord] = RecordSpool(4, EdgeRecord)
        self.unchecked: tuple[list[NodeRecord], list[EdgeRecord]] = ([], [])  # spooled, not checked yet

    def _check(self, node: NodeRecord | None, edge: EdgeRecord | None) -> None:
        """Check spooled records :data:`CHECK_BATCH` at a time (:func:`check_load`; a problem is
        :class:`UnstreamableError`)."""
        nodes, edges = self.unchecked
        if node is not None:
            nodes.append(node)
        if edge is not None:
            edges.append(edge)
        if len(nodes) + len(edges) >= CHECK_BATCH or (node is None and edge is None):
            try:
                check_load(nodes, edges, [], [])
            except DatasetError:
                raise UnstreamableError from None
            self.unchecked = ([], [])

    def node(self, item: Any) -> None:
        record = _node(item)
        tenant = self.tenants.setdefault(record.tenant_id, record.tenant_id)
        key = (tenant, record.node_id)
        if key in self.keys:
            raise UnstreamableError  # a duplicate node
        self.keys.add(key)
        self._check(record, None)
        self.nodes.add(key, record, record.node_type)

    def edge(self, item: Any, nodes_done: bool) -> None:
        if not nodes_done:
            raise UnstreamableError  # edges before the nodes: their ends cannot be checked as they come
        record = _edge(item)
        if record.edge_type not in self.edge_types:
            try:
                check_edge_type(record.edge_type)
            except ConfigurationError:
                raise UnstreamableError from None
            self.edge_types.add(record.edge_type)
        if self.outside is None:
            for end in (record.from_node_id, record.to_node_id):
                if (record.tenant_id, end) not in self.keys:
                    self.outside = (
                        f"edge {record.edge_type} {record.from_node_id} -> {record.to_node_id}: no node {end!r} "
                        f"in tenant {record.tenant_id!r} (edges never cross tenants)"
                    )
                    break
        self._check(None, record)
        self.edges.add((record.tenant_id, record.edge_type, record.from_node_id, record.to_node_id), record)

    def records(self) -> tuple[RecordSpool[NodeRecord], RecordSpool[EdgeRecord]]:
        """The records in canonical order, marked as checked."""
        self._check(None, None)
        self.nodes.seal()
        self.edges.seal()
        self.nodes.checked = self.edges.checked = True
        self.edges.ends_among = self.nodes if self.outside is None else None
        return self.nodes, self.edges

    def close(self) -> None:
        self.nodes.close()
        self.edges.close()


def streamed_graph(source: Path) -> StreamedGraph:
    """The checked records of the dataset file ``source`` in canonical order (see the module
    docstring), on disk (:class:`~brain_graph.indexing.spool.RecordSpool`), and the problem of its
    first edge to a node it does not have (``None`` when every end is among its nodes). Raises
    :class:`UnstreamableError` or ``OSError``."""
    reader = _Reader(source)
    decoder = json.JSONDecoder(parse_constant=items._refuse_constant, parse_int=items._parse_int)
    scalars: dict[str, Any] = {}
    ended: set[str] = set()
    try:
        for key, item, value in stream_dataset(source, decoder):
            if not item:
                scalars[key] = value
            elif value is STREAM_END:
                ended.add(key)
            elif key == "nodes":
                reader.node(value)
            else:
                reader.edge(value, "nodes" in ended)
        if ended != {"nodes", "edges"}:
            raise UnstreamableError  # missing, or not arrays: the whole read words it
        try:
            items._DatasetShape.model_validate({**scalars, "nodes": [], "edges": []})
        except ValidationError:
            raise UnstreamableError from None
        nodes, edges = reader.records()
    except BaseException:
        reader.close()
        raise
    return StreamedGraph(nodes, edges, f"{source}: {reader.outside}" if reader.outside else None)
