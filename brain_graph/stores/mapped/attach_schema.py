"""What ``brain-graph attach`` reads of a live Neo4j graph (and Weaviate): labels, relationship types,
indexes and constraints, bounded samples of each label's nodes, and the counts of relationships at
each label; Weaviate collections with their properties, vectors, tenancy and a few objects.

Read only and bounded: every Neo4j statement runs in a READ session
(:meth:`~brain_graph.stores.neo4j_weaviate.neo4j.client.Neo4jClient.read`); counts come from the count
store (``MATCH (n:L) RETURN count(n)``, ``MATCH (:L)-[r:T]->() RETURN count(r)``: no scan); what is
read of nodes is the first :data:`SAMPLE` nodes of a label (a label scan stopped by ``LIMIT``), and
ids are looked up only through an index; the values of tenant-like properties are read with the id
values (to count those that are no usable tenant id), and so are the string and integer values of
update-time-like properties (:data:`UPDATED_NAMES`: to tell ISO-8601 strings and epoch units). The
property schema is sampled, not read with ``db.schema.nodeTypeProperties()``, which reads every node
of the database.

Weaviate: one REST call for every collection's config, and per collection that may hold a label's
vectors its tenants (multi-tenant) and :data:`OBJECT_SAMPLE` objects (of one tenant).
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from weaviate.classes.tenants import TenantActivityStatus

from brain_graph.core.contracts import MAX_TENANT_CHARS, identifier_problem
from brain_graph.stores.mapped.cypher import quoted
from brain_graph.stores.mapped.mapping import GRAPH_NAME
from brain_graph.stores.neo4j_weaviate.neo4j.client import Neo4jClient
from brain_graph.stores.neo4j_weaviate.weaviate.client import WeaviateConnection
from brain_graph.stores.neo4j_weaviate.weaviate.naming import COLLECTION_PREFIX

SAMPLE = 1_000  # nodes read of a label (its first ones): property keys, value types, id values
OBJECT_SAMPLE = 20  # objects read of a Weaviate collection
MAX_LABELS = 500  # labels sampled at most (the rest are named in a note)
MAX_REL_TYPES = 500  # relationship types counted at most
MAX_TENANTS_SHOWN = 5
# brain-graph's own labels, and the marker labels of neo4j-graphrag (every node it writes is __KGBuilder__,
# every entity also __Entity__ besides its own label) and of LlamaIndex's property graph store (every
# node __Node__, every entity also __Entity__): never a searched label. A vector index or uniqueness
# constraint on a marker still serves the labels whose nodes carry it (LiveSchema.carries).
SKIPPED_LABELS = frozenset(
    {"BrainNode", "BrainTenant", "BrainProfileEpoch", "BrainCopiesClock", "__KGBuilder__", "__Entity__", "__Node__"}
)
ID_NAMES = ("id", "uuid", "name")
# other property names that may hold a node id (looked at when no common one is there)
ID_LIKE = ("uid", "key", "nodeId", "node_id", "chunkId", "chunk_id", "docId", "doc_id", "externalId", "external_id")
TENANT_NAMES = ("tenantId", "tenant_id", "tenant", "group_id")
# property names that may hold a node's update time (the first that does is suggested)
UPDATED_NAMES = (
    "updatedAt",
    "updated_at",
    "lastModified",
    "last_modified",
    "modifiedAt",
    "modified_at",
    "modified",
    "updated",
    "lastUpdated",
    "last_updated",
)
TEMPORAL_TYPES = frozenset({"ZONED DATETIME", "LOCAL DATETIME", "DATE"})


def usable_tenant(value: str) -> bool:
    """Whether ``value`` can be a brain-graph tenant id (a search's ``--tenant``): not blank, no white
    space at either end, no control characters. Graphiti's default ``group_id`` on Neo4j is ``""``."""
    return identifier_problem(value, MAX_TENANT_CHARS) is None


def plain_type(value_type: str) -> str:
    """A Cypher ``valueType`` without its ``NOT NULL`` parts: ``LIST<FLOAT NOT NULL> NOT NULL`` -> ``LIST<FLOAT>``."""
    return value_type.replace(" NOT NULL", "")


@dataclass(frozen=True)
class PropertyStats:
    """One property key of a label's sample: how many sampled nodes hold it, the value types seen
    (:func:`plain_type`), and the lengths of its list values (a vector's dimension)."""

    name: str
    present: int
    types: tuple[str, ...]
    sizes: tuple[int, ...] = ()

    @property
    def is_string(self) -> bool:
        return self.types == ("STRING",)

    @property
    def is_vector(self) -> bool:
        return bool(self.types) and all(t in ("LIST<FLOAT>", "LIST<INTEGER>") for t in self.types)

    @property
    def is_integer(self) -> bool:
        return self.types == ("INTEGER",)

    @property
    def is_boolean(self) -> bool:
        return self.types == ("BOOLEAN",)

    @property
    def is_string_list(self) -> bool:
        return bool(self.types) and all(t in ("LIST<STRING>", "LIST<NOTHING>") for t in self.types)

    @property
    def tag_like(self) -> bool:
        """Lists of strings, some of them at least, the other values strings."""
        kinds = set(self.types)
        return "LIST<STRING>" in kinds and kinds <= {"LIST<STRING>", "LIST<NOTHING>", "STRING"}

    @property
    def is_temporal(self) -> bool:
        """Neo4j dates or date-times (zoned or local) only."""
        return bool(self.types) and all(t in TEMPORAL_TYPES for t in self.types)

    @property
    def any_temporal(self) -> bool:
        """Some values are Neo4j dates or date-times."""
        return any(t in TEMPORAL_TYPES for t in self.types)


@dataclass(frozen=True)
class LabelStats:
    """A label: its node count (count store), the size of the sample read, the property keys of the
    sample, the other labels of the sampled nodes (how many carry each), the string values of its
    id-like properties, per tenant-like property how many sampled string values are no usable
    tenant id (:func:`usable_tenant`) and the distinct usable ones, and the string and integer values
    (as text) of its update-time-like properties (:data:`UPDATED_NAMES`)."""

    label: str
    count: int
    sampled: int
    properties: Mapping[str, PropertyStats] = field(default_factory=dict)
    co_labels: Mapping[str, int] = field(default_factory=dict)
    id_values: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    unusable_tenants: Mapping[str, int] = field(default_factory=dict)
    tenant_values: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    time_values: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    def string(self, name: str) -> bool:
        """Whether ``name`` holds a string on the sampled nodes that have it."""
        found = self.properties.get(name)
        return found is not None and found.is_string

    def integer(self, name: str) -> bool:
        """Whether ``name`` holds an integer on the sampled nodes that have it."""
        found = self.properties.get(name)
        return found is not None and found.is_integer

    def present(self, name: str) -> int:
        found = self.properties.get(name)
        return found.present if found is not None else 0

    def carries(self, other: str) -> bool:
        """Whether every sampled node of this label also carries the label ``other`` (a marker label such
        as ``__Entity__``, or a super-label)."""
        return other == self.label or (self.sampled > 0 and self.co_labels.get(other, 0) >= self.sampled)

    def usable_tenants(self, name: str) -> int:
        """How many sampled nodes hold ``name`` as a usable tenant id (:func:`usable_tenant`)."""
        found = self.properties.get(name)
        if found is None or not found.is_string:
            return 0
        return found.present - self.unusable_tenants.get(name, 0)


@dataclass(frozen=True)
class IndexInfo:
    """A row of ``SHOW INDEXES`` (``dimension``/``similarity``: a vector index's configuration)."""

    name: str
    kind: str  # RANGE, TEXT, POINT, LOOKUP, FULLTEXT, VECTOR
    entity: str  # NODE or RELATIONSHIP
    labels: tuple[str, ...]
    properties: tuple[str, ...]
    state: str
    dimension: int | None = None
    similarity: str | None = None
    owning_constraint: str | None = None


@dataclass(frozen=True)
class ConstraintInfo:
    """A row of ``SHOW CONSTRAINTS``."""

    name: str
    kind: str  # UNIQUENESS, NODE_KEY, NODE_PROPERTY_EXISTENCE, ...
    entity: str
    labels: tuple[str, ...]
    properties: tuple[str, ...]


@dataclass(frozen=True)
class RelCounts:
    """Relationships of each type starting at (``out``) and ending at (``into``) nodes of each label
    (count store), for the labels and types counted."""

    out: Mapping[tuple[str, str], int] = field(default_factory=dict)
    into: Mapping[tuple[str, str], int] = field(default_factory=dict)

    def starting(self, labels: Iterable[str], rel_type: str) -> int:
        return sum(self.out.get((label, rel_type), 0) for label in labels)

    def ending(self, labels: Iterable[str], rel_type: str) -> int:
        return sum(self.into.get((label, rel_type), 0) for label in labels)


@dataclass(frozen=True)
class VectorInfo:
    """A vector of a Weaviate collection (``name`` None: the unnamed one): its distance metric, index
    type, the vectorizer module that makes it (``none``: the objects bring their own), its model as
    configured, whether it is a multi-vector, and the dimension of a sampled object's vector."""

    name: str | None
    metric: str | None
    index_type: str | None
    vectorizer: str | None
    model: str | None
    multi_vector: bool = False
    dimension: int | None = None


@dataclass(frozen=True)
class CollectionInfo:
    """A Weaviate collection: property data types, tokenization, vectors, tenancy, the active
    tenants (multi-tenant), and sampled objects' property values (of its first active tenant).
    ``links`` counts, per (collection property, label, label property), how many sampled values are
    values of that label's property."""

    name: str
    properties: Mapping[str, str]
    tokenization: Mapping[str, str | None]
    vectors: tuple[VectorInfo, ...]
    multi_tenant: bool
    tenants: tuple[str, ...] = ()
    tenant_count: int = 0
    samples: tuple[Mapping[str, Any], ...] = ()
    links: Mapping[tuple[str, str, str], int] = field(default_factory=dict)


@dataclass(frozen=True)
class LiveSchema:
    """Everything :func:`read_schema` read (see the module docstring). ``considered`` are the labels
    sampled (after the filter, without :data:`SKIPPED_LABELS`); ``collections`` is None when Weaviate
    was not read, ``weaviate_problem`` says why it could not be."""

    where: str
    labels: tuple[str, ...]
    rel_types: tuple[str, ...]
    considered: tuple[str, ...]
    stats: Mapping[str, LabelStats]
    indexes: tuple[IndexInfo, ...]
    constraints: tuple[ConstraintInfo, ...]
    rel_counts: RelCounts
    collections: tuple[CollectionInfo, ...] | None = None
    weaviate_where: str | None = None
    weaviate_problem: str | None = None
    notes: tuple[str, ...] = ()

    def node_indexes(self, label: str, kind: str | None = None) -> list[IndexInfo]:
        """The node indexes on ``label`` (of ``kind`` when given)."""
        return [
            index
            for index in self.indexes
            if index.entity == "NODE" and label in index.labels and (kind is None or index.kind == kind)
        ]

    def carries(self, label: str, other: str) -> bool:
        """Whether every sampled node of ``label`` carries ``other`` too (:meth:`LabelStats.carries`)."""
        stats = self.stats.get(label)
        return other == label or (stats is not None and stats.carries(other))

    def vector_indexes(self, label: str) -> list[IndexInfo]:
        """The vector indexes (on one property) that hold the vectors of ``label``'s nodes: those on
        ``label``, then those on a label every sampled node of ``label`` carries (LlamaIndex keeps its
        entities' vectors in an index on the marker label ``__Entity__``)."""
        found = [
            index
            for index in self.indexes
            if index.kind == "VECTOR"
            and index.entity == "NODE"
            and len(index.properties) == 1
            and any(self.carries(label, on) for on in index.labels)
        ]
        return sorted(found, key=lambda index: (label not in index.labels, index.name))

    def id_index(self, label: str, prop: str) -> IndexInfo | None:
        """A RANGE index that serves ``n.prop = value`` on ``label`` (one on ``prop`` first)."""
        found = [index for index in self.node_indexes(label, "RANGE") if index.properties[:1] == (prop,)]
        found.sort(key=lambda index: (len(index.properties), index.name))
        return found[0] if found else None

    def unique(self, label: str, prop: str) -> bool:
        """Whether a constraint keeps ``prop`` unique among the nodes of ``label``: one on ``label``, or
        on a label every sampled node of ``label`` carries (LlamaIndex's ``__Node__.id``)."""
        return any(
            c.kind in ("UNIQUENESS", "NODE_KEY")
            and len(c.labels) == 1
            and self.carries(label, c.labels[0])
            and c.properties == (prop,)
            for c in self.constraints
        )


def label_selected(label: str, patterns: Sequence[str] | None) -> bool:
    """Whether ``label`` is one the patterns name (names or ``fnmatch`` patterns; None: every label)."""
    if patterns is None:
        return True
    return any(fnmatch.fnmatchcase(label, pattern) for pattern in patterns)


def split_patterns(value: str | Sequence[str] | None) -> list[str] | None:
    """Label names or patterns from a comma list (or a list of them); None or empty: no filter."""
    if value is None:
        return None
    items = value.split(",") if isinstance(value, str) else [part for item in value for part in item.split(",")]
    found = [item.strip() for item in items if item.strip()]
    return found or None


# -- Neo4j -------------------------------------------------------------------------------------------

LABELS = "CALL db.labels() YIELD label RETURN collect(label) AS labels"
REL_TYPES = "CALL db.relationshipTypes() YIELD relationshipType RETURN collect(relationshipType) AS types"
INDEXES = (
    "SHOW INDEXES YIELD name, type, entityType, labelsOrTypes, properties, state, options, owningConstraint "
    "RETURN name, type, entityType, labelsOrTypes, properties, state, options, owningConstraint"
)
CONSTRAINTS = (
    "SHOW CONSTRAINTS YIELD name, type, entityType, labelsOrTypes, properties "
    "RETURN name, type, entityType, labelsOrTypes, properties"
)


def label_count_statement(label: str) -> str:
    """The node count of a label (count store) and the other labels of its first ``$sample`` nodes."""
    q = quoted(label)
    return (
        f"MATCH (n:{q}) WITH count(n) AS total "
        f"CALL () {{ MATCH (n:{q}) WITH n LIMIT $sample UNWIND labels(n) AS other "
        "RETURN other, count(*) AS seen } "
        "RETURN total, collect([other, seen]) AS others"
    )


def property_statement(label: str) -> str:
    """Per property key of the first ``$sample`` nodes of a label: nodes holding it, value types,
    list lengths."""
    return (
        f"MATCH (n:{quoted(label)}) WITH n LIMIT $sample UNWIND keys(n) AS key WITH key, n[key] AS value "
        "RETURN key, count(*) AS present, collect(DISTINCT valueType(value))[..8] AS types, "
        "collect(DISTINCT CASE WHEN value IS :: LIST<ANY> THEN size(value) END)[..8] AS sizes"
    )


def id_values_statement(label: str) -> str:
    """The string values of the properties ``$props`` on the first ``$sample`` nodes of a label."""
    return (
        f"MATCH (n:{quoted(label)}) WITH n LIMIT $sample UNWIND $props AS prop WITH prop, n[prop] AS value "
        "WHERE value IS :: STRING OR value IS :: INTEGER RETURN prop, collect(toString(value)) AS values"
    )


def rel_count_statement(label: str, rel_types: Sequence[str]) -> str:
    """The relationships of each of ``rel_types`` starting and ending at nodes of a label (count store)."""
    q = quoted(label)
    parts = []
    for i, rel_type in enumerate(rel_types):
        t = quoted(rel_type)
        parts.append(f"CALL () {{ MATCH (:{q})-[r:{t}]->() RETURN count(r) AS o{i} }}")
        parts.append(f"CALL () {{ MATCH ()-[r:{t}]->(:{q}) RETURN count(r) AS i{i} }}")
    outs = ", ".join(f"o{i}" for i in range(len(rel_types)))
    ins = ", ".join(f"i{i}" for i in range(len(rel_types)))
    return " ".join(parts) + f" RETURN [{outs}] AS outs, [{ins}] AS ins"


def lookup_statement(label: str, prop: str) -> str:
    """Which of ``$values`` are values of ``prop`` on nodes of ``label`` (an index seek)."""
    return (
        f"MATCH (n:{quoted(label)}) WHERE n.{quoted(prop)} IN $values "
        f"RETURN collect(DISTINCT n.{quoted(prop)}) AS found"
    )


def _index(row: Mapping[str, Any]) -> IndexInfo:
    options = row["options"] or {}
    config = options.get("indexConfig") or {}
    dimension = config.get("vector.dimensions")
    similarity = config.get("vector.similarity_function")
    return IndexInfo(
        name=str(row["name"]),
        kind=str(row["type"]),
        entity=str(row["entityType"]),
        labels=tuple(row["labelsOrTypes"] or ()),
        properties=tuple(row["properties"] or ()),
        state=str(row["state"]),
        dimension=int(dimension) if isinstance(dimension, int | float) and dimension else None,
        similarity=str(similarity).lower() if similarity else None,
        owning_constraint=row["owningConstraint"],
    )


def read_indexes(client: Neo4jClient) -> tuple[list[IndexInfo], list[ConstraintInfo]]:
    """``SHOW INDEXES`` and ``SHOW CONSTRAINTS``."""
    indexes = [_index(row) for row in client.read(INDEXES, {})]
    constraints = [
        ConstraintInfo(
            name=str(row["name"]),
            kind=str(row["type"]),
            entity=str(row["entityType"]),
            labels=tuple(row["labelsOrTypes"] or ()),
            properties=tuple(row["properties"] or ()),
        )
        for row in client.read(CONSTRAINTS, {})
    ]
    return indexes, constraints


def read_label(client: Neo4jClient, label: str, *, sample: int = SAMPLE, constrained: Sequence[str] = ()) -> LabelStats:
    """A label's count, sample size, property stats, co-labels, the sampled values of its id-like
    string properties (:func:`id_candidates`; ``constrained``: properties a constraint keeps unique),
    how many values of its tenant-like properties are no usable tenant id, and the sampled values of
    its update-time-like properties: two statements, three when it has id-like, tenant-like or
    update-time-like properties."""
    rows = client.read(label_count_statement(label), {"sample": sample})
    total = int(rows[0]["total"]) if rows else 0
    if not total:
        return LabelStats(label, 0, 0)
    others = {str(other): int(seen) for other, seen in rows[0]["others"] if other is not None}
    others.pop(label, None)
    properties = {
        str(row["key"]): PropertyStats(
            str(row["key"]),
            int(row["present"]),
            tuple(sorted({plain_type(str(t)) for t in row["types"]})),
            tuple(sorted(int(size) for size in row["sizes"] if size is not None)),
        )
        for row in client.read(property_statement(label), {"sample": sample})
    }
    stats = LabelStats(label, total, min(total, sample), properties, others)
    wanted = id_candidates(stats, constrained)
    tenants = [name for name in TENANT_NAMES if name in properties]
    times = [name for name in UPDATED_NAMES if name in properties and not properties[name].is_temporal]
    if not wanted and not tenants and not times:
        return stats
    asked = list(dict.fromkeys([*wanted, *tenants, *times]))
    values = {
        str(row["prop"]): tuple(str(value) for value in row["values"])
        for row in client.read(id_values_statement(label), {"sample": sample, "props": asked})
    }
    id_values = {prop: found for prop, found in values.items() if prop in wanted}
    unusable = {
        prop: sum(not usable_tenant(value) for value in values.get(prop, ()))
        for prop in tenants
        if properties[prop].is_string
    }
    tenant_values = {
        prop: tuple(sorted({value for value in values.get(prop, ()) if usable_tenant(value)}))
        for prop in tenants
        if properties[prop].is_string
    }
    time_values = {prop: values.get(prop, ()) for prop in times}
    return LabelStats(label, total, stats.sampled, properties, others, id_values, unusable, tenant_values, time_values)


def read_rel_counts(client: Neo4jClient, labels: Sequence[str], rel_types: Sequence[str]) -> RelCounts:
    """:class:`RelCounts` of ``labels`` and ``rel_types`` (one count-store statement per label)."""
    out: dict[tuple[str, str], int] = {}
    into: dict[tuple[str, str], int] = {}
    if not rel_types:
        return RelCounts(out, into)
    for label in labels:
        rows = client.read(rel_count_statement(label, rel_types), {})
        if not rows:
            continue
        for rel_type, outgoing, incoming in zip(rel_types, rows[0]["outs"], rows[0]["ins"], strict=True):
            if outgoing:
                out[(label, rel_type)] = int(outgoing)
            if incoming:
                into[(label, rel_type)] = int(incoming)
    return RelCounts(out, into)


def id_candidates(stats: LabelStats, constrained: Iterable[str] = ()) -> list[str]:
    """The properties of a label that may hold its node id (strings or integers; ``name`` only as a
    string): constrained ones, the common names, other id-like names."""
    names = [*constrained, *ID_NAMES, *ID_LIKE]
    return [
        name
        for name in dict.fromkeys(names)
        if (stats.string(name) or (stats.integer(name) and name != "name")) and name not in TENANT_NAMES
    ]


def read_neo4j(
    client: Neo4jClient,
    *,
    labels: Sequence[str] | None = None,
    sample: int = SAMPLE,
    only: Sequence[str] | None = None,
    counted_types: Sequence[str] | None = None,
    id_props: Sequence[str] = (),
) -> LiveSchema:
    """The live schema of the database: ``labels`` are names or patterns of the labels to sample (None:
    all but :data:`SKIPPED_LABELS`); ``only`` exactly these labels (a check); ``counted_types`` the
    relationship types to count (None: all); ``id_props`` more properties whose sampled values to read.
    Statements: 4, then 2 or 3 per label, then 1 per label for the relationship counts."""
    all_labels = tuple(sorted(str(label) for label in client.read(LABELS, {})[0]["labels"]))
    rel_types = tuple(sorted(str(t) for t in client.read(REL_TYPES, {})[0]["types"]))
    indexes, constraints = read_indexes(client)
    notes: list[str] = []
    if only is not None:
        considered = [label for label in dict.fromkeys(only) if label in all_labels]
    else:
        considered = [label for label in all_labels if label not in SKIPPED_LABELS and label_selected(label, labels)]
        odd = [label for label in considered if not GRAPH_NAME.match(label)]
        if odd:
            notes.append(
                f"not mapped: label(s) {', '.join(repr(label) for label in odd[:10])}: "
                "a mapping names only names of at most 128 characters without control characters or `"
            )
        considered = [label for label in considered if GRAPH_NAME.match(label)]
        if len(considered) > MAX_LABELS:
            notes.append(
                f"only the first {MAX_LABELS} of {len(considered)} labels were read: choose some with --labels"
            )
            considered = considered[:MAX_LABELS]
    stats: dict[str, LabelStats] = {}
    for label in considered:
        constrained = [
            c.properties[0]
            for c in constraints
            if c.kind in ("UNIQUENESS", "NODE_KEY") and c.labels == (label,) and len(c.properties) == 1
        ]
        stats[label] = read_label(client, label, sample=sample, constrained=[*constrained, *id_props])
    wanted = rel_types if counted_types is None else tuple(t for t in counted_types if t in rel_types)
    counted = [t for t in wanted if GRAPH_NAME.match(t)][:MAX_REL_TYPES]
    if len(wanted) > MAX_REL_TYPES:
        notes.append(f"only the first {MAX_REL_TYPES} of {len(wanted)} relationship types were counted")
    rel_counts = read_rel_counts(client, [label for label in considered if stats[label].count], counted)
    return LiveSchema(
        where=f"Neo4j {client.uri} database {client.database!r}",
        labels=all_labels,
        rel_types=rel_types,
        considered=tuple(considered),
        stats=stats,
        indexes=tuple(indexes),
        constraints=tuple(constraints),
        rel_counts=rel_counts,
        notes=tuple(notes),
    )


# -- Weaviate ----------------------------------------------------------------------------------------


def simple_name(name: str) -> str:
    """A label or collection name compared loosely: lower case, letters and digits only."""
    return "".join(char for char in name.lower() if char.isalnum())


def collection_matches(collection: str, label: str) -> bool:
    """Whether a Weaviate collection looks like it holds the vectors of a label's nodes: the same
    name (case, ``_`` and ``-`` aside), or the label's name with a plural ``s``."""
    a, b = simple_name(collection), simple_name(label)
    return a in (b, b + "s", b + "es")


def _vector_info(name: str | None, index: Any, vectorizer: Any, model: Any) -> VectorInfo:
    metric = getattr(index, "distance_metric", None)
    index_type = index.vector_index_type() if index is not None and hasattr(index, "vector_index_type") else None
    module = getattr(vectorizer, "value", vectorizer)
    models = model if isinstance(model, Mapping) else {}
    shown = models.get("model") or models.get("modelId") or models.get("model_id")
    return VectorInfo(
        name=name,
        metric=str(getattr(metric, "value", metric)) if metric is not None else None,
        index_type=str(index_type) if index_type else None,
        vectorizer=str(module) if module is not None else None,
        model=str(shown) if shown else None,
        multi_vector=getattr(index, "multi_vector", None) is not None,
    )


def vectors_of_config(config: Any) -> list[VectorInfo]:
    """The vectors a collection config declares: its named vectors, and its unnamed one (legacy)."""
    found: list[VectorInfo] = []
    for name, vector in sorted((config.vector_config or {}).items()):
        vectorizer = vector.vectorizer
        found.append(
            _vector_info(name, vector.vector_index_config, vectorizer.vectorizer, getattr(vectorizer, "model", None))
        )
    if config.vector_index_config is not None:
        legacy = config.vectorizer_config
        model = getattr(legacy, "model", None) if legacy is not None else None
        found.append(_vector_info(None, config.vector_index_config, config.vectorizer, model))
    return found


def read_weaviate(
    connection: WeaviateConnection,
    *,
    wanted: Sequence[str] | None = None,
    labels: Sequence[str] | None = None,
    sample: int = OBJECT_SAMPLE,
    skipped: list[str] | None = None,
) -> list[CollectionInfo]:
    """The collections but brain-graph's own (``wanted``: only those named; ``labels``: only those
    named like one of these labels, :func:`collection_matches`; the others' names are added to
    ``skipped``), each with its tenants and a few objects (one request for the configs, then one or two
    per collection read)."""

    async def read(client: Any) -> list[CollectionInfo]:
        connection.tick()
        configs = await client.collections.list_all(simple=False)
        found = []
        for name in sorted(configs):
            if name.startswith(COLLECTION_PREFIX) or (wanted is not None and name not in wanted):
                continue
            if labels is not None and not any(collection_matches(name, label) for label in labels):
                if skipped is not None:
                    skipped.append(name)
                continue
            config = configs[name]
            properties = {
                prop.name: str(getattr(prop.data_type, "value", prop.data_type)) for prop in config.properties
            }
            tokenization = {
                prop.name: (str(getattr(prop.tokenization, "value", prop.tokenization)) if prop.tokenization else None)
                for prop in config.properties
            }
            vectors = vectors_of_config(config)
            multi_tenant = bool(config.multi_tenancy_config.enabled)
            collection = client.collections.use(name)
            tenants: list[str] = []
            tenant_count = 0
            if multi_tenant:
                connection.tick()
                held = await collection.tenants.get()
                tenant_count = len(held)
                tenants = sorted(t for t, info in held.items() if info.activity_status == TenantActivityStatus.ACTIVE)
                if not tenants:
                    found.append(CollectionInfo(name, properties, tokenization, tuple(vectors), True, (), tenant_count))
                    continue
                collection = collection.with_tenant(tenants[0])
            connection.tick()
            reply = await collection.query.fetch_objects(limit=sample, include_vector=True)
            samples = tuple(dict(obj.properties or {}) for obj in reply.objects)
            dimensions: dict[str | None, int] = {}
            for obj in reply.objects:
                for key, stored in (obj.vector or {}).items():
                    if stored and isinstance(stored[0], float):
                        dimensions.setdefault(
                            None if key == "default" and config.vector_config is None else key, len(stored)
                        )
            vectors = [
                VectorInfo(
                    v.name, v.metric, v.index_type, v.vectorizer, v.model, v.multi_vector, dimensions.get(v.name)
                )
                for v in vectors
            ]
            found.append(
                CollectionInfo(
                    name,
                    properties,
                    tokenization,
                    tuple(vectors),
                    multi_tenant,
                    tuple(tenants),
                    tenant_count,
                    samples,
                )
            )
        return found

    return connection.call(read, max(connection.timeout_s, 1.0) * 4)


def object_values(collection: CollectionInfo, prop: str) -> list[str]:
    """The sampled objects' values of ``prop`` as node ids would be written (text, uuid, int)."""
    values = []
    for sample in collection.samples:
        value = sample.get(prop)
        if isinstance(value, bool) or value is None:
            continue
        if isinstance(value, str | int) or type(value).__name__ == "UUID":
            values.append(str(value))
    return values


def link_collections(
    client: Neo4jClient, schema: LiveSchema, collections: Sequence[CollectionInfo]
) -> list[CollectionInfo]:
    """The collections with their :attr:`CollectionInfo.links` to the sampled labels whose names they
    match: sampled object values found as values of a label's id-like properties (an index seek when
    the label has an index on the property, else within the label's sample)."""
    linked = []
    for collection in collections:
        links: dict[tuple[str, str, str], int] = {}
        columns = {
            prop: object_values(collection, prop)
            for prop, kind in collection.properties.items()
            if kind in ("text", "uuid", "int")
        }
        values = sorted({value for found in columns.values() for value in found})
        for label in schema.considered:
            stats = schema.stats[label]
            if not values or not collection_matches(collection.name, label):
                continue
            for label_prop in stats.id_values:
                if schema.id_index(label, label_prop) is not None:
                    rows = client.read(lookup_statement(label, label_prop), {"values": values})
                    known = {str(value) for value in rows[0]["found"]} if rows else set()
                else:
                    known = set(stats.id_values[label_prop])
                for prop, found in columns.items():
                    hits = len(set(found) & known)
                    if hits:
                        links[(prop, label, label_prop)] = hits
        linked.append(
            CollectionInfo(
                collection.name,
                collection.properties,
                collection.tokenization,
                collection.vectors,
                collection.multi_tenant,
                collection.tenants,
                collection.tenant_count,
                collection.samples,
                links,
            )
        )
    return linked
