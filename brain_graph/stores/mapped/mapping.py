"""A mapping: how a team's own Neo4j graph (and its vectors) reads as brain-graph's model.

A TOML file (``BRAIN_GRAPH_MAPPING=path``) or the same structure in code, validated here once:

.. code-block:: toml

    id_property = "key"                      # the node id, unique within a tenant; "elementId()": Neo4j's element id
    id_type = "string"                       # or "integer": ids are the property's integers, written in decimal
    tenant = { property = "tenantId" }       # or { fixed = "acme" }: one tenant for the whole graph
    project_property = "project"             # optional
    title_properties = ["title", "name"]     # the first present is the title
    url_property = "url"                     # optional
    secured_property = "secured"             # optional: nodes without it are public
    acl_property = "acl"                     # optional: a list of "user:<id>" / "group:<name>" entries
    acl_user_property = "readers"            # optional: a list of user ids (each read as "user:<id>")
    acl_group_property = "teams"             # optional: a list of group names (each read as "group:<name>")
    properties = ["status", "clusterKind"]   # optional: copied into a node's properties when present

    [[nodes]]                                # one entry per searched label
    label = "Ticket"
    node_type = "cdm.work_item"
    text = { summary = "summary", description = "body" }   # passage field -> property
    tags_property = "labels"                 # optional: a list of strings (or one string), the node's tags
    updated_at_property = "updatedAt"        # optional: its update time (a temporal value or an ISO-8601 string)
    updated_at_unit = "milliseconds"         # optional: epoch numbers in updated_at_property are in this unit
    namespace_property = "team"              # optional: its namespace
    path_property = "filePath"               # optional: the path its namespace derives from otherwise

    [[edges]]                                # the allowlist: only these relationship types are followed
    type = "MENTIONS"                        # the relationship type in the graph
    as = "REFERENCES"                        # its brain-graph edge type

    [clusters]                               # optional: episodes
    label = "Topic"
    membership = "IN_TOPIC"                  # (member)-[:IN_TOPIC]->(cluster)

    [[vectors]]                              # the vectors of one profile
    profile = "cdm.doc.body"
    source = "neo4j"                         # a Neo4j vector index ...
    index = "chunk_embedding"
    property = "embedding"

Every name that reaches Cypher (labels, property keys, relationship types) is checked here (no
control characters, no backtick, at most 128 characters) and backtick-quoted where it is used;
Weaviate names follow Weaviate's plain identifier rule; values always travel as parameters.
Problems are :class:`~brain_graph.core.errors.ConfigurationError` lines naming the mapping and key.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping as AbstractMapping
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from brain_graph.core.errors import ConfigurationError
from brain_graph.core.passage_heads import PASSAGE_FIELDS
from brain_graph.core.vocabulary import CLUSTER, check_edge_type

IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")
MAX_ENTRIES = 256
# ``id_property`` naming no property but Neo4j's element id of a node (for graphs without an id property)
ELEMENT_ID = "elementId()"


def identifier(value: str) -> str:
    """``value`` if it is a plain identifier (letters, digits, ``_``; not starting with a digit)."""
    if not IDENTIFIER.match(value):
        raise ValueError(f"{value!r} is not a plain identifier (letters, digits and _, at most 128)")
    return value


# A label, relationship type or property key of the graph: any name of at most 128 characters without
# control characters or backticks (statements backtick-quote every name they use)
GRAPH_NAME = re.compile(r"^[^\x00-\x1f\x7f`]{1,128}$")


def graph_name(value: str) -> str:
    """``value`` if it can name a label, relationship type or property key (:data:`GRAPH_NAME`)."""
    if not GRAPH_NAME.match(value) or not value.strip():
        raise ValueError(f"{value!r} is not a name brain-graph reads (1 to 128 characters, no control characters or `)")
    return value


def quoted(name: str) -> str:
    """A label, property key or relationship type as a Cypher identifier."""
    return "`" + name.replace("`", "``") + "`"


Name = Annotated[str, Field(min_length=1, max_length=128)]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


class TenantMapping(_Model):
    """Where a node's tenant is: a property of every node, or one fixed tenant for the whole graph."""

    property: Name | None = None
    fixed: Name | None = None

    @model_validator(mode="after")
    def _one(self) -> TenantMapping:
        if (self.property is None) == (self.fixed is None):
            raise ValueError("give exactly one of property or fixed")
        if self.property is not None:
            graph_name(self.property)
        return self


def id_property_name(value: str | None) -> str | None:
    """``value`` if it can name the id: a plain identifier or :data:`ELEMENT_ID`."""
    return value if value is None or value == ELEMENT_ID else graph_name(value)


EpochUnit = Literal["seconds", "milliseconds", "microseconds"]


class NodeMapping(_Model):
    """One searched label and the brain-graph node type its nodes have (``id_property`` and
    ``id_type``, when given, override the mapping's for this label), and the properties its nodes'
    seed-filter facets are read from (:mod:`.facets`): tags, update time (``updated_at_unit``: the
    unit of epoch numbers there), namespace, and the path a namespace derives from otherwise."""

    label: Name
    node_type: Name
    text: dict[str, Name] = Field(default_factory=dict, max_length=len(PASSAGE_FIELDS))
    id_property: Name | None = None
    id_type: Literal["string", "integer"] | None = None
    type_property: Name | None = None
    types: dict[str, Name] = Field(default_factory=dict, max_length=MAX_ENTRIES)
    tags_property: Name | None = None
    updated_at_property: Name | None = None
    updated_at_unit: EpochUnit | None = None
    namespace_property: Name | None = None
    path_property: Name | None = None

    @field_validator("id_property")
    @classmethod
    def _id_property(cls, value: str | None) -> str | None:
        return id_property_name(value)

    @field_validator("type_property", "tags_property", "updated_at_property", "namespace_property", "path_property")
    @classmethod
    def _property(cls, value: str | None) -> str | None:
        return None if value is None else graph_name(value)

    @model_validator(mode="after")
    def _types(self) -> NodeMapping:
        if self.types and self.type_property is None:
            raise ValueError("types needs type_property: the property whose values they map")
        if self.updated_at_unit is not None and self.updated_at_property is None:
            raise ValueError("updated_at_unit needs updated_at_property: the property whose epoch numbers it reads")
        return self

    @field_validator("label")
    @classmethod
    def _label(cls, value: str) -> str:
        return graph_name(value)

    @field_validator("text")
    @classmethod
    def _text(cls, value: dict[str, str]) -> dict[str, str]:
        for field, prop in value.items():
            if field not in PASSAGE_FIELDS:
                raise ValueError(f"unknown passage field {field!r}; the fields are {', '.join(PASSAGE_FIELDS)}")
            graph_name(prop)
        return value


class EdgeMapping(_Model):
    """A relationship type that is followed, and the brain-graph edge type it is read as."""

    type: Name
    as_type: Name = Field(alias="as")

    @field_validator("type")
    @classmethod
    def _type(cls, value: str) -> str:
        return graph_name(value)

    @field_validator("as_type")
    @classmethod
    def _as_type(cls, value: str) -> str:
        try:
            return check_edge_type(value)
        except ConfigurationError as error:
            raise ValueError(str(error)) from None


class ClusterMapping(_Model):
    """The label of cluster nodes (episodes), the relationship from a member to its cluster, and the
    properties of a cluster's passage fields."""

    label: Name
    membership: Name
    text: dict[str, Name] = Field(default_factory=dict, max_length=len(PASSAGE_FIELDS))
    id_property: Name | None = None
    id_type: Literal["string", "integer"] | None = None

    @field_validator("id_property")
    @classmethod
    def _id_property(cls, value: str | None) -> str | None:
        return id_property_name(value)

    @field_validator("text")
    @classmethod
    def _text(cls, value: dict[str, str]) -> dict[str, str]:
        return NodeMapping._text(value)

    @field_validator("label", "membership")
    @classmethod
    def _names(cls, value: str) -> str:
        return graph_name(value)


class Neo4jVectors(_Model):
    """A profile's vectors in a Neo4j vector index over ``property`` of the mapped nodes."""

    profile: Name
    source: Literal["neo4j"]
    index: Name
    property: Name
    embedder: Name | None = None  # the embedder's name (as brain-graph names it) that made the vectors

    @field_validator("property")
    @classmethod
    def _property(cls, value: str) -> str:
        return graph_name(value)


class WeaviateVectors(_Model):
    """A profile's vectors in a Weaviate collection whose objects name their node in ``id_property``.

    Tenancy is Weaviate's native multi-tenancy (``tenant_name``: the Weaviate tenant of a brain-graph
    tenant, ``{tenant}`` replaced) or a property holding the tenant (``tenant_property``), or neither
    when the mapping has one fixed tenant. ``vector`` names a named vector (None: the default one)."""

    profile: Name
    source: Literal["weaviate"]
    collection: Name
    id_property: Name
    tenant_name: Name | None = None
    tenant_property: Name | None = None
    vector: Name | None = None
    embedder: Name | None = None  # the embedder's name (as brain-graph names it) that made the vectors

    @field_validator("collection", "id_property", "tenant_property", "vector")
    @classmethod
    def _names(cls, value: str | None) -> str | None:
        return None if value is None else identifier(value)

    @model_validator(mode="after")
    def _tenancy(self) -> WeaviateVectors:
        if self.tenant_name is not None and self.tenant_property is not None:
            raise ValueError("give tenant_name (native multi-tenancy) or tenant_property, not both")
        if self.tenant_name is not None and "{tenant}" not in self.tenant_name:
            raise ValueError("tenant_name must contain {tenant}")
        return self


VectorSource = Annotated[Neo4jVectors | WeaviateVectors, Field(discriminator="source")]


class Mapping(_Model):
    """The whole mapping (see the module docstring)."""

    name: Name = "mapping"
    id_property: Name = "id"
    id_type: Literal["string", "integer"] = "string"
    tenant: TenantMapping
    project_property: Name | None = None
    title_properties: list[Name] = Field(default_factory=lambda: ["title"], max_length=8)
    url_property: Name | None = None
    secured_property: Name | None = None
    acl_property: Name | None = None
    acl_user_property: Name | None = None
    acl_group_property: Name | None = None
    properties: list[Name] = Field(default_factory=list, max_length=MAX_ENTRIES)
    nodes: list[NodeMapping] = Field(min_length=1, max_length=MAX_ENTRIES)
    edges: list[EdgeMapping] = Field(default_factory=list, max_length=MAX_ENTRIES)
    clusters: ClusterMapping | None = None
    vectors: list[VectorSource] = Field(default_factory=list, max_length=MAX_ENTRIES)

    @field_validator("id_property")
    @classmethod
    def _id_property(cls, value: str) -> str:
        return value if value == ELEMENT_ID else graph_name(value)

    @field_validator(
        "project_property",
        "url_property",
        "secured_property",
        "acl_property",
        "acl_user_property",
        "acl_group_property",
    )
    @classmethod
    def _property(cls, value: str | None) -> str | None:
        return None if value is None else graph_name(value)

    @field_validator("title_properties", "properties")
    @classmethod
    def _titles(cls, value: list[str]) -> list[str]:
        return [graph_name(item) for item in value]

    @model_validator(mode="after")
    def _consistent(self) -> Mapping:
        entries: list[Mapping | NodeMapping | ClusterMapping] = [self, *self.nodes]
        if self.clusters is not None:
            entries.append(self.clusters)
        for entry in entries:
            if entry.id_property == ELEMENT_ID and entry.id_type == "integer":
                where = f" of {entry.label}" if not isinstance(entry, Mapping) else ""
                raise ValueError(f"id_type{where}: element ids are strings; id_type is the type of an id property")
        labels = [node.label for node in self.nodes]
        if len(set(labels)) != len(labels):
            raise ValueError("nodes: a label is mapped twice")
        if self.clusters is not None and self.clusters.label in labels:
            raise ValueError("clusters.label is also a searched node label")
        types = [edge.type for edge in self.edges]
        if len(set(types)) != len(types):
            raise ValueError("edges: a relationship type is mapped twice")
        profiles = [source.profile for source in self.vectors]
        if len(set(profiles)) != len(profiles):
            raise ValueError("vectors: a profile is mapped twice")
        for index, source in enumerate(self.vectors):
            apart = not isinstance(source, WeaviateVectors) or source.tenant_name or source.tenant_property
            if self.tenant.fixed is None and not apart:
                raise ValueError(
                    f"vectors.{index}: the tenant is a node property, so the collection must keep tenants "
                    "apart: give tenant_name (Weaviate multi-tenancy) or tenant_property"
                )
        return self

    def id_of(self, label: str) -> tuple[str, str]:
        """The id property (or :data:`ELEMENT_ID`) and id type of a mapped label's nodes."""
        entry: NodeMapping | ClusterMapping | None = next((n for n in self.nodes if n.label == label), None)
        if entry is None and self.clusters is not None and self.clusters.label == label:
            entry = self.clusters
        prop = entry.id_property if entry is not None and entry.id_property is not None else self.id_property
        kind = entry.id_type if entry is not None and entry.id_type is not None else self.id_type
        return prop, "string" if prop == ELEMENT_ID else kind

    @property
    def acl_properties(self) -> list[tuple[str, str]]:
        """The ACL properties and the prefix each entry gets (``""``: entries are already typed)."""
        found = [(self.acl_property, ""), (self.acl_user_property, "user:"), (self.acl_group_property, "group:")]
        return [(prop, prefix) for prop, prefix in found if prop is not None]

    @property
    def labels(self) -> list[str]:
        """Every label a search reads: the node labels, then the cluster label."""
        cluster = [self.clusters.label] if self.clusters is not None else []
        return [node.label for node in self.nodes] + cluster

    def node_type_of(self, label: str, values: AbstractMapping[str, Any] | None = None) -> str:
        """The brain-graph node type of a node of a mapped label (the cluster label: ``kg.cluster``):
        its entry's ``types`` value of its ``type_property`` (from ``values``, the node's properties),
        else the entry's ``node_type``."""
        if self.clusters is not None and label == self.clusters.label:
            return CLUSTER
        node = next(node for node in self.nodes if node.label == label)
        if node.type_property is not None and values is not None:
            value = values.get(node.type_property)
            if isinstance(value, str) and value in node.types:
                return node.types[value]
        return node.node_type

    @property
    def type_properties(self) -> list[str]:
        """The properties the node types are read from (sorted, each once)."""
        return sorted({node.type_property for node in self.nodes if node.type_property is not None})


def _where(error: ValidationError) -> str:
    first = error.errors(include_url=False)[0]
    message = str(first["msg"]).removeprefix("Value error, ")
    location = ".".join(str(part) for part in first["loc"])
    return f"{location}: {message}" if location else message


def parse_mapping(data: Any, *, origin: str = "mapping") -> Mapping:
    """A :class:`Mapping` from its dict form; a problem is one :class:`ConfigurationError` line
    naming ``origin`` and the key."""
    try:
        return Mapping.model_validate(data)
    except ValidationError as error:
        raise ConfigurationError(f"{origin}: {_where(error)}") from None


def read_mapping(path: str | Path) -> Mapping:
    """The mapping in the TOML file ``path`` (its ``name`` defaults to the file's stem)."""
    file = Path(path)
    try:
        data = tomllib.loads(file.read_text(encoding="utf-8"))
    except OSError as error:
        raise ConfigurationError(f"BRAIN_GRAPH_MAPPING {str(file)!r}: {error.strerror or error}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise ConfigurationError(f"mapping {file.name}: not valid TOML ({error})") from None
    data.setdefault("name", file.stem)
    return parse_mapping(data, origin=f"mapping {file.name}")
