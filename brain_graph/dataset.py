"""Datasets in the plain JSON format of ``examples/data`` and their loading into a backend."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from brain_graph.errors import BrainGraphError, ConfigurationError, DatasetError, one_line_message
from brain_graph.profiles import EmbeddingProfile, ProfileRegistry
from brain_graph.stores.base import EdgeRecord, NodeRecord, ProfileIndexInfo, StorageBackend, VectorRecord
from brain_graph.vocabulary import check_edge_type
from brain_graph.write_checks import check_load

EXAMPLE_DATASET_NAME = "example_graph.json"
FORMAT_VERSION = 1
EMBED_BATCH_SIZE = 64
MAX_INT64_DIGITS = len(str(2**63))  # 19: a longer integer literal is outside the signed 64-bit range
MAX_LOCATION_PART_CHARS = 64  # a key quoted in an error (a hostile key cannot flood the message)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class DatasetNode(_Strict):
    tenant_id: str = Field(alias="tenantId", min_length=1)
    id: str = Field(min_length=1)
    node_type: str = Field(alias="nodeType", min_length=1)
    project_key: str | None = Field(alias="projectKey", default=None)
    title: str | None = None
    url: str | None = None
    secured: bool = Field(default=False, strict=True)  # a JSON boolean, never a coerced string
    acl: list[str] = Field(default_factory=list)
    text: dict[str, str] = Field(default_factory=dict)
    properties: dict[str, Any] = Field(default_factory=dict)

    def to_record(self) -> NodeRecord:
        return NodeRecord(
            tenant_id=self.tenant_id,
            node_id=self.id,
            node_type=self.node_type,
            project_key=self.project_key,
            title=self.title,
            url=self.url,
            secured=self.secured,
            acl=tuple(sorted(set(self.acl))),
            text=dict(sorted(self.text.items())),
            properties=dict(sorted(self.properties.items())),
        )


class DatasetEdge(_Strict):
    tenant_id: str = Field(alias="tenantId", min_length=1)
    edge_type: str = Field(alias="edgeType")
    from_node_id: str = Field(alias="fromNodeId")
    to_node_id: str = Field(alias="toNodeId")
    properties: dict[str, Any] = Field(default_factory=dict)

    def to_record(self) -> EdgeRecord:
        return EdgeRecord(
            self.tenant_id, self.edge_type, self.from_node_id, self.to_node_id, dict(sorted(self.properties.items()))
        )


class Dataset(_Strict):
    """A knowledge graph to load: nodes and edges, each owned by a tenant."""

    format_version: int = Field(alias="formatVersion", default=FORMAT_VERSION, strict=True)
    description: str = ""
    nodes: list[DatasetNode]
    edges: list[DatasetEdge]

    @field_validator("format_version")
    @classmethod
    def _known_format(cls, value: int) -> int:
        if value != FORMAT_VERSION:
            raise ValueError(f"Input should be {FORMAT_VERSION}, the only format this version reads (got {value})")
        return value

    @model_validator(mode="after")
    def _check_references(self) -> Dataset:
        keys = set()
        for node in self.nodes:
            key = (node.tenant_id, node.id)
            if key in keys:
                raise ValueError(f"duplicate node {node.id!r} in tenant {node.tenant_id!r}")
            keys.add(key)
        for edge in self.edges:
            try:
                check_edge_type(edge.edge_type)
            except ConfigurationError as error:
                raise ValueError(str(error)) from None
            for end in (edge.from_node_id, edge.to_node_id):
                if (edge.tenant_id, end) not in keys:
                    raise ValueError(
                        f"edge {edge.edge_type} {edge.from_node_id} -> {edge.to_node_id}: no node {end!r} "
                        f"in tenant {edge.tenant_id!r} (edges never cross tenants)"
                    )
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


def _refuse_constant(name: str) -> Any:
    raise DatasetError(f"{name} is not a JSON number; datasets hold finite numbers only")


def _parse_int(literal: str) -> int:
    """An integer literal; one too long for the signed 64-bit range is refused before Python converts
    it (Python itself refuses literals of over 4,300 digits with a bare ValueError)."""
    digits = len(literal.lstrip("-"))
    if digits > MAX_INT64_DIGITS:
        raise DatasetError(f"an integer of {digits} digits is outside the signed 64-bit range datasets hold")
    return int(literal)


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


def embedding_text(node: NodeRecord, profile: EmbeddingProfile) -> str:
    """The text a profile embeds for a node: its ``text_fields`` joined (title comes from the node),
    cut to the profile's ``max_chars``."""
    parts = []
    for name in profile.text_fields:
        value = node.title if name == "title" else node.text.get(name)
        if value:
            parts.append(value.strip())
    return "\n".join(parts)[: profile.max_chars]


def index_info(registry: ProfileRegistry) -> list[ProfileIndexInfo]:
    """What the index records for each profile."""
    return [ProfileIndexInfo(p.profile_id, registry.embedder_name(p), p.dimension) for p in registry.profiles]


def embed_nodes(
    nodes: Sequence[NodeRecord],
    registry: ProfileRegistry,
    progress: Callable[[int], None] | None = None,
) -> list[VectorRecord]:
    """Vectors of every node for every profile that covers its type; nodes with no text are skipped."""
    records: list[VectorRecord] = []
    for profile in registry.profiles:
        embedder = registry.embedders[profile.embedder_id]
        targets = [(n, embedding_text(n, profile)) for n in nodes if n.node_type in profile.node_types]
        targets = [(n, text) for n, text in targets if text]
        for start in range(0, len(targets), EMBED_BATCH_SIZE):
            batch = targets[start : start + EMBED_BATCH_SIZE]
            vectors = embedder.embed_documents([text for _, text in batch])
            for (node, _), vector in zip(batch, vectors, strict=True):
                if len(vector) != profile.dimension:
                    raise DatasetError(
                        f"profile {profile.profile_id}: embedder returned dimension {len(vector)}, "
                        f"expected {profile.dimension}"
                    )
                records.append(
                    VectorRecord(
                        node.tenant_id,
                        node.node_id,
                        profile.profile_id,
                        node.project_key,
                        node.secured,
                        node.acl,
                        vector,
                    )
                )
            if progress is not None:
                progress(len(batch))
    return records


def load_dataset(
    dataset: Dataset,
    backend: StorageBackend,
    registry: ProfileRegistry,
    *,
    replace: bool = True,
    progress: Callable[[int], None] | None = None,
) -> tuple[int, int, int]:
    """Embed and write a dataset; returns the counts (nodes, edges, vectors). All vectors are computed
    before anything is written, so a failing embedder leaves the backend untouched."""
    nodes = dataset.node_records()
    edges = dataset.edge_records()
    check_load(nodes, edges, [], [])  # before embedding: a bad dataset costs no embedding time
    try:
        vectors = embed_nodes(nodes, registry, progress)
    except BrainGraphError:
        raise
    except Exception as error:  # an external embedder failing
        raise DatasetError(f"embedding failed, nothing was written: {error}") from error
    backend.load(nodes, edges, vectors, index_info(registry), replace=replace)
    return len(nodes), len(edges), len(vectors)
