"""The items of a dataset file (the plain JSON format of ``examples/data``): the models that
validate and word the errors of its top level, nodes and edges, the direct readers of well-formed
items, and the parse hooks of its numbers."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from brain_graph.core.errors import DatasetError
from brain_graph.core.filters import parse_timestamp
from brain_graph.stores.base import EdgeRecord, NodeRecord

FORMAT_VERSION = 1
MAX_INT64_DIGITS = len(str(2**63))  # 19: a longer integer literal is outside the signed 64-bit range


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
    namespace: str | None = None
    tags: list[str] = Field(default_factory=list)
    updated_at: str | None = Field(alias="updatedAt", default=None)

    @field_validator("updated_at")
    @classmethod
    def _timestamp(cls, value: str | None) -> str | None:
        if value is not None:
            parse_timestamp(value)
        return value

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
            namespace=self.namespace,
            tags=tuple(sorted(set(self.tags))),
            updated_at=None if self.updated_at is None else parse_timestamp(self.updated_at),
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


def _keys(model: type[BaseModel], *, required: bool) -> frozenset[str]:
    """The JSON keys of a model's fields (its required ones only, with ``required``)."""
    return frozenset(f.alias or name for name, f in model.model_fields.items() if f.is_required() or not required)


_NODE_KEYS, _NODE_REQUIRED = _keys(DatasetNode, required=False), _keys(DatasetNode, required=True)
_EDGE_KEYS, _EDGE_REQUIRED = _keys(DatasetEdge, required=False), _keys(DatasetEdge, required=True)


def _name(value: Any) -> bool:
    return type(value) is str and value != ""


def _optional_str(value: Any) -> bool:
    return value is None or type(value) is str


def _str_keys(value: Any) -> bool:
    return type(value) is dict and all(type(key) is str for key in value)


def node_record(item: Any) -> NodeRecord | None:
    """The record :class:`DatasetNode` makes of a node item whose every field has exactly its JSON type
    (no coercion, no missing or unknown key), without building the model; ``None`` for any other
    item (the model then validates it and words the error)."""
    if type(item) is not dict or not _NODE_REQUIRED <= item.keys() <= _NODE_KEYS:
        return None
    acl, text, properties = item.get("acl", []), item.get("text", {}), item.get("properties", {})
    tags, updated_at = item.get("tags", []), item.get("updatedAt")
    if not (
        _name(item["tenantId"])
        and _name(item["id"])
        and _name(item["nodeType"])
        and _optional_str(item.get("projectKey"))
        and _optional_str(item.get("title"))
        and _optional_str(item.get("url"))
        and type(item.get("secured", False)) is bool
        and type(acl) is list
        and all(type(entry) is str for entry in acl)
        and _str_keys(text)
        and all(type(value) is str for value in text.values())
        and _str_keys(properties)
        and _optional_str(item.get("namespace"))
        and type(tags) is list
        and all(type(tag) is str for tag in tags)
        and _optional_str(updated_at)
    ):
        return None
    try:
        micros = None if updated_at is None else parse_timestamp(updated_at)
    except ValueError:
        return None  # the model words the error
    return NodeRecord(
        tenant_id=item["tenantId"],
        node_id=item["id"],
        node_type=item["nodeType"],
        project_key=item.get("projectKey"),
        title=item.get("title"),
        url=item.get("url"),
        secured=item.get("secured", False),
        acl=tuple(sorted(set(acl))),
        text=dict(sorted(text.items())),
        properties=dict(sorted(properties.items())),
        namespace=item.get("namespace"),
        tags=tuple(sorted(set(tags))),
        updated_at=micros,
    )


def edge_record(item: Any) -> EdgeRecord | None:
    """The record :class:`DatasetEdge` makes of an edge item of exact JSON types (see
    :func:`node_record`); ``None`` for any other item."""
    if type(item) is not dict or not _EDGE_REQUIRED <= item.keys() <= _EDGE_KEYS:
        return None
    properties = item.get("properties", {})
    ends = (item["edgeType"], item["fromNodeId"], item["toNodeId"])
    if not (_name(item["tenantId"]) and all(type(end) is str for end in ends) and _str_keys(properties)):
        return None
    return EdgeRecord(item["tenantId"], *ends, dict(sorted(properties.items())))


class _DatasetHead(_Strict):
    """A dataset's fields besides its records: the format version (only :data:`FORMAT_VERSION` is
    read) and the description."""

    format_version: int = Field(alias="formatVersion", default=FORMAT_VERSION, strict=True)
    description: str = ""

    @field_validator("format_version")
    @classmethod
    def _known_format(cls, value: int) -> int:
        if value != FORMAT_VERSION:
            raise ValueError(f"Input should be {FORMAT_VERSION}, the only format this version reads (got {value})")
        return value


class _DatasetShape(_DatasetHead):
    """A dataset's top level, its records left unread (:func:`read_graph` reads them one by one)."""

    nodes: list[Any]
    edges: list[Any]


def _refuse_constant(name: str) -> Any:
    raise DatasetError(f"{name} is not a JSON number; datasets hold finite numbers only")


def _parse_int(literal: str) -> int:
    """An integer literal; one too long for the signed 64-bit range is refused before Python converts
    it (Python itself refuses literals of over 4,300 digits with a bare ValueError)."""
    digits = len(literal.lstrip("-"))
    if digits > MAX_INT64_DIGITS:
        raise DatasetError(f"an integer of {digits} digits is outside the signed 64-bit range datasets hold")
    return int(literal)
