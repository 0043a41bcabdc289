"""``brain-graph attach --check``: a mapping against the live schema and data, as problems naming the
mapping key (errors: a search would fail or find nothing of a mapped part; warnings: it works, but
misses nodes, scans or ranks differently) and counts per mapped label, edge and vector source.

Bounded like :mod:`.attach_schema`: counts from the count store, everything else from the first
:data:`~.attach_schema.SAMPLE` nodes of each mapped label (or objects of a collection), ids looked up
only through indexes. Read only.

A node's tenant counts only when it is a usable tenant id (a string, not blank, no white space at
either end: Graphiti's default ``group_id`` ``""`` is none). A label's facet properties (tags, update
time, namespace, path) are checked on its sample: present at all, of a kind :mod:`.facets` reads,
and update times read with the very expression searches use. A Neo4j vector index holds the vectors
of the mapped labels it is on and of those whose sampled nodes all carry its label (a marker label
such as LlamaIndex's ``__Entity__``).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from brain_graph.core.errors import ConfigurationError
from brain_graph.core.vocabulary import HAS_SIGNAL, IN_CLUSTER
from brain_graph.stores.mapped.attach_schema import (
    SAMPLE,
    CollectionInfo,
    LabelStats,
    LiveSchema,
    read_neo4j,
    read_weaviate,
)
from brain_graph.stores.mapped.attach_suggest import DEFAULT_PROFILES, ProfileSpec
from brain_graph.stores.mapped.cypher import MappedStatements, quoted
from brain_graph.stores.mapped.facets import UNIT_FACTORS, micros
from brain_graph.stores.mapped.mapping import ELEMENT_ID, Mapping, Neo4jVectors, NodeMapping, WeaviateVectors
from brain_graph.stores.neo4j_weaviate.neo4j.client import Neo4jClient
from brain_graph.stores.neo4j_weaviate.weaviate.client import WeaviateConnection

Severity = Literal["error", "warning"]
MAX_TENANTS_CHECKED = 10  # tenants whose sampled nodes are looked up in a Weaviate collection
MAX_OBJECT_TENANTS = 5  # Weaviate tenants whose objects are sampled


@dataclass(frozen=True)
class Problem:
    """One problem of a mapping: the mapping key it is about, what is wrong, and whether the mapping
    is unusable for it (``error``) or works with it (``warning``)."""

    key: str
    message: str
    severity: Severity = "error"

    def line(self, name: str) -> str:
        """``mapping <name>: <key>: <message>``."""
        return f"mapping {name}: {self.key}: {' '.join(self.message.split())}"


@dataclass(frozen=True)
class Count:
    """What was found of one mapped part (``nodes.<label>``, ``clusters``, ``edges.<type>``,
    ``vectors.<profile>``), as one line."""

    key: str
    text: str


@dataclass(frozen=True)
class CheckReport:
    """The problems of a mapping and the counts of what it maps."""

    mapping: Mapping
    problems: tuple[Problem, ...] = ()
    counts: tuple[Count, ...] = ()
    where: str = ""

    @property
    def usable(self) -> bool:
        """No errors (warnings allowed)."""
        return not self.errors

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "error"]

    @property
    def warnings(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "warning"]

    def problem_lines(self) -> list[str]:
        """``error: mapping <name>: <key>: <problem>`` (then the warnings, ``warning: ...``)."""
        ordered = [*self.errors, *self.warnings]
        return [f"{p.severity}: {p.line(self.mapping.name)}" for p in ordered]

    def count_lines(self) -> list[str]:
        return [f"mapping {self.mapping.name}: {count.key}: {count.text}" for count in self.counts]

    def summary(self) -> str:
        errors, warnings = len(self.errors), len(self.warnings)
        state = "usable" if self.usable else "not usable"
        return f"mapping {self.mapping.name}: {state} ({errors} error(s), {warnings} warning(s)) on {self.where}"


def _of(part: int, whole: int, what: str) -> str:
    return f"{part} of {whole} sampled {what}" if whole else f"none of the {what}"


@dataclass
class _Checker:
    mapping: Mapping
    client: Neo4jClient
    weaviate: WeaviateConnection | None
    profiles: Sequence[ProfileSpec]
    safe_edge_types: Collection[str] | None
    sample: int
    schema: LiveSchema = field(init=False)
    problems: list[Problem] = field(default_factory=list)
    counts: list[Count] = field(default_factory=list)
    present: list[str] = field(default_factory=list)  # mapped labels that exist and have nodes

    def error(self, key: str, message: str) -> None:
        self.problems.append(Problem(key, message, "error"))

    def warn(self, key: str, message: str) -> None:
        self.problems.append(Problem(key, message, "warning"))

    # -- statements ---------------------------------------------------------------------------------

    def tenant_of(self, var: str) -> str:
        prop = self.mapping.tenant.property
        return f"{var}.{quoted(prop)}" if prop is not None else "$fixedTenant"

    def tenanted(self, var: str) -> str:
        """``var`` holds a usable tenant id in the tenant property: a string, not blank, no white space at
        either end (a fixed tenant: always)."""
        prop = self.mapping.tenant.property
        if prop is None:
            return "true"
        value = f"{var}.{quoted(prop)}"
        return f"({value} IS :: STRING AND {value} <> '' AND trim({value}) = {value})"

    def params(self, **values: Any) -> dict[str, Any]:
        return {"sample": self.sample, "fixedTenant": self.mapping.tenant.fixed, **values}

    def id_of(self, var: str, label: str) -> str:
        """The id of ``var``, a node of ``label``, as a string (null: it has none)."""
        return MappedStatements.id_expression(var, self.mapping.id_of(label))

    def id_name(self, label: str) -> str:
        """How the ids of ``label`` are named in messages: ``a string 'key'``, ``an integer 'id'``."""
        prop, id_type = self.mapping.id_of(label)
        return (
            "an element id"
            if prop == ELEMENT_ID
            else f"{'an integer' if id_type == 'integer' else 'a string'} {prop!r}"
        )

    def id_index(self, label: str) -> bool:
        """Whether the ids of ``label`` are found by an index (element ids always are)."""
        prop = self.mapping.id_of(label)[0]
        return prop == ELEMENT_ID or self.schema.id_index(label, prop) is not None

    def label_statement(self, label: str) -> str:
        """Of the first ``$sample`` nodes: how many have an id, ids held by several nodes of a
        tenant, how many have a tenant, the tenants seen."""
        return (
            f"MATCH (n:{quoted(label)}) WITH n LIMIT $sample "
            f"WITH {self.id_of('n', label)} AS id, {self.tenant_of('n')} AS tenant, {self.tenanted('n')} AS usable "
            "WITH id IS :: STRING AS named, id, tenant, usable, count(*) AS c "
            "RETURN sum(CASE WHEN named THEN c ELSE 0 END) AS named, "
            "sum(CASE WHEN named AND tenant IS NOT NULL AND c > 1 THEN 1 ELSE 0 END) AS dups, "
            "collect(CASE WHEN named AND tenant IS NOT NULL AND c > 1 THEN id END)[..3] AS examples, "
            "sum(CASE WHEN usable THEN c ELSE 0 END) AS tenanted, "
            "collect(DISTINCT tenant)[..6] AS tenants"
        )

    def shared_ids_statement(self, label: str, indexed: Sequence[str]) -> str:
        """Of the first ``$sample`` nodes with an id: ids another node of a mapped label (one of
        ``indexed``, whose ids are properties, looked up by index) has in the same tenant."""

        def branch(other: str) -> str:
            prop, id_type = self.mapping.id_of(other)
            value = "toInteger(nid)" if id_type == "integer" else "nid"
            return f"MATCH (m:{quoted(other)}) WHERE m.{quoted(prop)} = {value} RETURN m"

        branches = " UNION ".join(branch(other) for other in indexed)
        return (
            f"MATCH (n:{quoted(label)}) WITH n LIMIT $sample WITH n, {self.id_of('n', label)} AS nid "
            f"WHERE nid IS NOT NULL CALL (n, nid) {{ {branches} }} "
            f"WITH nid, n, m WHERE m <> n AND {self.tenant_of('m')} = {self.tenant_of('n')} "
            "RETURN count(DISTINCT nid) AS dups, collect(DISTINCT nid)[..3] AS examples"
        )

    def vector_statement(self, label: str, prop: str) -> str:
        """Of the first ``$sample`` nodes: how many hold a vector in ``prop``, and how many of those
        a search cannot find (no string id, or no tenant)."""
        searchable = f"{self.id_of('n', label)} IS NOT NULL"
        if self.mapping.tenant.property is not None:
            searchable += f" AND {self.tenanted('n')}"
        return (
            f"MATCH (n:{quoted(label)}) WITH n LIMIT $sample "
            f"RETURN count(n.{quoted(prop)}) AS vectors, "
            f"count(CASE WHEN n.{quoted(prop)} IS NOT NULL AND NOT ({searchable}) THEN 1 END) AS orphans"
        )

    def time_statement(self, node: NodeMapping) -> str:
        """Of the first ``$sample`` nodes holding the update-time property: how many, how many of their
        values are a time (as searches read it), how many are numbers."""
        assert node.updated_at_property is not None
        factor = str(UNIT_FACTORS[node.updated_at_unit]) if node.updated_at_unit is not None else "null"
        return (
            f"MATCH (n:{quoted(node.label)}) WITH n LIMIT $sample "
            f"WITH n.{quoted(node.updated_at_property)} AS v WHERE v IS NOT NULL "
            f"RETURN count(*) AS present, count({micros('v', factor)}) AS readable, "
            "count(CASE WHEN v IS :: INTEGER OR v IS :: FLOAT THEN 1 END) AS numbers"
        )

    def sample_ids_statement(self, label: str) -> str:
        return (
            f"MATCH (n:{quoted(label)}) WITH n LIMIT $sample "
            f"WITH {self.id_of('n', label)} AS id, {self.tenant_of('n')} AS tenant "
            "WHERE id IS :: STRING AND tenant IS :: STRING RETURN tenant, collect(id) AS ids"
        )

    # -- the checks ---------------------------------------------------------------------------------

    def run(self) -> CheckReport:
        m = self.mapping
        types = [edge.type for edge in m.edges] + ([m.clusters.membership] if m.clusters else [])
        extra = sorted({m.id_of(label)[0] for label in m.labels} - {ELEMENT_ID})
        self.schema = read_neo4j(self.client, only=m.labels, sample=self.sample, counted_types=types, id_props=extra)
        for node in m.nodes:
            self.check_label(f"nodes.{node.label}", node.label, node.node_type, node.text)
            self.check_facets(f"nodes.{node.label}", node)
        if m.clusters is not None:
            self.check_label("clusters", m.clusters.label, "kg.cluster", m.clusters.text)
        self.check_common()
        self.check_edges()
        for config in m.vectors:
            try:
                self.check_vectors(config)
            except ConfigurationError as error:  # a source the mapping does not fit (a server down raises)
                self.error(f"vectors.{config.profile}", str(error))
        return CheckReport(m, tuple(self.problems), tuple(self.counts), self.schema.where)

    def check_label(self, key: str, label: str, node_type: str, text: dict[str, str]) -> None:
        m, schema = self.mapping, self.schema
        label_key = f"{key}.label" if key != "clusters" else "clusters.label"
        if label not in schema.labels:
            self.error(label_key, f"label {label!r} does not exist in {schema.where}")
            return
        stats = schema.stats[label]
        if not stats.count:
            self.error(label_key, f"label {label!r} has no nodes")
            return
        self.present.append(label)
        row = self.client.read(self.label_statement(label), self.params())[0]
        named, tenanted = int(row["named"] or 0), int(row["tenanted"] or 0)
        nodes = f"nodes of {label}"
        id_prop = m.id_of(label)[0]
        id_key = "id_property" if id_prop == m.id_property else f"{key}.id_property"
        if not named:
            self.error(
                id_key,
                f"none of the {stats.sampled} sampled {nodes} has {self.id_name(label)}" + self._types(stats, id_prop),
            )
        elif named < stats.sampled:
            self.warn(
                id_key,
                f"{_of(stats.sampled - named, stats.sampled, nodes)} have no {self.id_name(label)}"
                f"{self._types(stats, id_prop)}: a search never finds them",
            )
        if m.tenant.property is not None:
            if not tenanted:
                self.error(
                    "tenant.property",
                    f"none of the {stats.sampled} sampled {nodes} has a usable {m.tenant.property!r} (a string, not "
                    "blank, no white space at either end): no search finds them",
                )
            elif tenanted < stats.sampled:
                self.warn(
                    "tenant.property",
                    f"{_of(stats.sampled - tenanted, stats.sampled, nodes)} have no usable {m.tenant.property!r} "
                    "(a string, not blank): they are in no tenant, no search finds them",
                )
        if named and id_prop != ELEMENT_ID:
            self.check_unique(id_key, label, int(row["dups"] or 0), list(row["examples"]))
            if not self.id_index(label):
                self.warn(
                    id_key,
                    f"no index on :{label}({id_prop}): every search scans the {stats.count} nodes of {label} "
                    f"for its ids; create one: CREATE INDEX FOR (n:{quoted(label)}) ON (n.{quoted(id_prop)})",
                )
        for passage_field, prop in text.items():
            text_key = f"{key}.text.{passage_field}"
            held = stats.present(prop)
            if not held:
                self.error(text_key, f"none of the {stats.sampled} sampled {nodes} has {prop!r}")
            elif held < stats.sampled:
                self.warn(text_key, f"{_of(stats.sampled - held, stats.sampled, nodes)} have no {prop!r}")
            if held and not stats.string(prop):
                self.warn(
                    text_key, f"{prop!r} is not always a string{self._types(stats, prop)}: other values are left out"
                )
        tenants = ", ".join(str(t) for t in row["tenants"] if t is not None)
        details = [f"{stats.count} nodes ({stats.sampled} sampled)", f"{named} with {self.id_name(label)}"]
        if tenants:
            details.append(f"tenants {tenants}" + (" ..." if len(row["tenants"]) >= 6 else ""))
        self.counts.append(Count(key, f"{label} as {node_type}: " + ", ".join(details)))

    def check_facets(self, key: str, node: NodeMapping) -> None:
        """The facet properties of a present label: a warning for one no sampled node has, for values
        of a kind that is no facet, and for update times that are no time brain-graph reads."""
        if node.label not in self.present:
            return
        stats = self.schema.stats[node.label]
        nodes = f"nodes of {node.label}"
        kinds = {  # key: (the kind of value read, a filter that reads it)
            "tags_property": ("a list of strings", "filter.tags"),
            "namespace_property": ("a string", "filter.namespaces"),
            "path_property": ("a string", "filter.namespaces"),
            "updated_at_property": ("", "a recency filter"),
        }
        for facet_key, (kind, used) in kinds.items():
            prop = getattr(node, facet_key)
            if prop is None:
                continue
            held = stats.properties.get(prop)
            if held is None or not held.present:
                self.warn(
                    f"{key}.{facet_key}",
                    f"none of the {stats.sampled} sampled {nodes} has {prop!r}: {used} leaves them out",
                )
                continue
            fits = held.is_string or (facet_key == "tags_property" and (held.is_string_list or held.tag_like))
            if kind and not fits:
                self.warn(
                    f"{key}.{facet_key}",
                    f"{prop!r} is not always {kind}{self._types(stats, prop)}: {used} leaves the others out",
                )
        if node.updated_at_property is not None and stats.present(node.updated_at_property):
            row = self.client.read(self.time_statement(node), self.params())[0]
            present, readable, numbers = int(row["present"]), int(row["readable"]), int(row["numbers"])
            if readable < present:
                hint = (
                    ": numbers are times only with updated_at_unit (seconds, milliseconds or microseconds)"
                    if numbers and node.updated_at_unit is None
                    else " (a Neo4j date or date-time, an ISO-8601 string such as 2024-09-01T12:00:00Z, or an epoch "
                    "number with updated_at_unit)"
                )
                self.warn(
                    f"{key}.updated_at_property",
                    f"{present - readable} of {present} sampled values of {node.updated_at_property!r} on {nodes} are "
                    f"no time brain-graph reads{hint}; a recency filter leaves those nodes out",
                )

    @staticmethod
    def _types(stats: LabelStats, prop: str) -> str:
        found = stats.properties.get(prop)
        return f" (values seen: {', '.join(found.types)})" if found is not None and found.types else ""

    def check_unique(self, id_key: str, label: str, dups: int, examples: list[Any]) -> None:
        """Ids of ``label`` held by several nodes of a tenant: of the label (unless a constraint keeps
        them unique) or of another mapped label."""
        m, schema = self.mapping, self.schema
        prop = m.id_of(label)[0]
        if schema.unique(label, prop):
            dups, examples = 0, []
        indexed = [
            other
            for other in self.mapping.labels
            if other in schema.labels
            and m.id_of(other)[0] != ELEMENT_ID
            and (other != label or not schema.unique(label, prop))
            and schema.id_index(other, m.id_of(other)[0])
        ]
        if indexed:
            row = self.client.read(self.shared_ids_statement(label, indexed), self.params())[0]
            if int(row["dups"] or 0) > dups:
                dups, examples = int(row["dups"]), list(row["examples"])
        if dups:
            shown = ", ".join(repr(str(e)) for e in examples[:3])
            self.error(
                id_key,
                f"{prop!r} is not unique: {dups} id(s) of the sampled nodes of {label} belong to several "
                f"nodes of a tenant (e.g. {shown}); a search would take them for one node: map a unique property",
            )

    def check_common(self) -> None:
        m, schema = self.mapping, self.schema
        stats = [schema.stats[label] for label in self.present]
        if not stats:
            return
        optional = {
            "url_property": m.url_property,
            "project_property": m.project_property,
            "secured_property": m.secured_property,
            "acl_property": m.acl_property,
            "acl_user_property": m.acl_user_property,
            "acl_group_property": m.acl_group_property,
        }
        for key, prop in optional.items():
            if prop is not None and not any(s.present(prop) for s in stats):
                self.warn(key, f"no sampled node of a mapped label has {prop!r}")
        if m.title_properties and not any(s.present(p) for s in stats for p in m.title_properties):
            self.warn("title_properties", f"no sampled node of a mapped label has {' or '.join(m.title_properties)}")
        for prop in m.properties:
            if not any(s.present(prop) for s in stats):
                self.warn("properties", f"no sampled node of a mapped label has {prop!r}")
        if m.secured_property is not None:
            odd = [
                s.label
                for s in stats
                if s.present(m.secured_property) and not s.properties[m.secured_property].is_boolean
            ]
            if odd:
                self.warn(
                    "secured_property",
                    f"{m.secured_property!r} is not always a boolean on {', '.join(odd)}: "
                    "any value but false secures a node",
                )
        for key, prop in (
            ("acl_property", m.acl_property),
            ("acl_user_property", m.acl_user_property),
            ("acl_group_property", m.acl_group_property),
        ):
            if prop is None:
                continue
            odd = [s.label for s in stats if s.present(prop) and not s.properties[prop].is_string_list]
            if odd:
                self.warn(
                    key,
                    f"{prop!r} is not always a list of strings on {', '.join(odd)}: such an ACL admits nobody",
                )
        if m.secured_property is None and m.acl_properties:
            self.warn(
                "secured_property",
                "ACL properties are mapped but no secured_property: every node is public to searches",
            )

    def check_edges(self) -> None:
        m, schema = self.mapping, self.schema
        counts = schema.rel_counts
        mapped = self.present
        members = [node.label for node in m.nodes if node.label in mapped]
        for edge in m.edges:
            key = f"edges.{edge.type}"
            if edge.type not in schema.rel_types:
                self.error(f"{key}.type", f"relationship type {edge.type!r} does not exist in {schema.where}")
                continue
            start, end = counts.starting(mapped, edge.type), counts.ending(mapped, edge.type)
            if not start or not end:
                self.error(
                    f"{key}.type",
                    f"no relationship of type {edge.type!r} links mapped nodes ({start} start at and {end} end at "
                    "mapped labels)",
                )
                continue
            followed = self.safe_edge_types is None or edge.as_type in {*self.safe_edge_types, HAS_SIGNAL, IN_CLUSTER}
            if not followed:
                self.warn(
                    f"{key}.as",
                    f"edge type {edge.as_type!r} is not followed: add it to BRAIN_GRAPH_SAFE_EDGE_TYPES "
                    f"(now {','.join(sorted(self.safe_edge_types or ()))})",
                )
            self.counts.append(
                Count(
                    key,
                    f"as {edge.as_type}: {start} start at, {end} end at mapped labels"
                    + ("" if followed else " (not followed)"),
                )
            )
        if m.clusters is not None and m.clusters.label in mapped:
            membership = m.clusters.membership
            if membership not in schema.rel_types:
                self.error("clusters.membership", f"relationship type {membership!r} does not exist in {schema.where}")
                return
            start = counts.starting(members, membership)
            end = counts.into.get((m.clusters.label, membership), 0)
            if not start or not end:
                self.error(
                    "clusters.membership",
                    f"no {membership!r} relationship leads from a mapped node to a {m.clusters.label} ({start} start "
                    f"at mapped labels, {end} end at {m.clusters.label})",
                )
                return
            self.counts.append(Count("clusters.membership", f"{membership}: {end} memberships"))

    # -- vectors ------------------------------------------------------------------------------------

    def covered(self, config: Neo4jVectors | WeaviateVectors) -> tuple[ProfileSpec | None, list[str]]:
        """The profile's spec and the mapped labels (with nodes) of the node type it embeds."""
        spec = next((s for s in self.profiles if s.profile_id == config.profile), None)
        key = f"vectors.{config.profile}"
        if spec is None:
            known = ", ".join(s.profile_id for s in self.profiles)
            self.warn(
                f"{key}.profile", f"no brain-graph profile {config.profile!r}: its vectors are never searched ({known})"
            )
            return None, []
        labels = [
            node.label for node in self.mapping.nodes if node.node_type == spec.node_type and node.label in self.present
        ]
        if not labels:
            self.warn(
                f"{key}.profile",
                f"profile {config.profile} embeds {spec.node_type} nodes, and no mapped label with nodes is of "
                "that type",
            )
        return spec, labels

    def check_embedder(
        self, config: Neo4jVectors | WeaviateVectors, spec: ProfileSpec | None, dimension: int | None
    ) -> None:
        key = f"vectors.{config.profile}"
        if spec is None:
            return
        if dimension is not None and spec.dimension is not None and dimension != spec.dimension:
            self.error(
                key,
                f"the vectors have dimension {dimension}, the configured embedder of {config.profile} "
                f"({spec.embedder or 'unknown'}) makes {spec.dimension}: every search fails; configure the embedder "
                "that made them (BRAIN_GRAPH_PROFILE_EMBEDDERS)",
            )
        elif config.embedder is not None and spec.embedder is not None and config.embedder != spec.embedder:
            self.error(
                f"{key}.embedder",
                f"the vectors were made by {config.embedder!r}, the configured embedder of {config.profile} is "
                f"{spec.embedder!r}: every search fails; configure {config.embedder!r} for it",
            )

    def check_vectors(self, config: Neo4jVectors | WeaviateVectors) -> None:
        if isinstance(config, Neo4jVectors):
            self.check_neo4j_vectors(config)
        else:
            self.check_weaviate_vectors(config)

    def check_neo4j_vectors(self, config: Neo4jVectors) -> None:
        key = f"vectors.{config.profile}"
        spec, _ = self.covered(config)
        index = next((i for i in self.schema.indexes if i.name == config.index), None)
        if index is None:
            self.error(f"{key}.index", f"Neo4j has no index {config.index!r}")
            return
        if index.kind != "VECTOR" or index.entity != "NODE":
            self.error(
                f"{key}.index",
                f"index {config.index!r} is a {index.kind} index on {index.entity.lower()}s, "
                "not a vector index on nodes",
            )
            return
        if index.state == "FAILED":
            self.error(f"{key}.index", f"index {config.index!r} has FAILED")
        elif index.state != "ONLINE":
            self.warn(
                f"{key}.index", f"index {config.index!r} is {index.state}: searches miss what it has not indexed yet"
            )
        if index.properties != (config.property,):
            self.error(
                f"{key}.property",
                f"index {config.index!r} is on property {', '.join(index.properties)}, not {config.property!r}",
            )
            return
        # the mapped labels whose nodes the index holds: on the label, or on a label (a marker such as
        # LlamaIndex's __Entity__) that every sampled node of a mapped label carries
        labels = [
            label
            for label in self.mapping.labels
            if any(self.schema.carries(label, on) for on in index.labels)
            and (label in index.labels or label in self.present)
        ]
        if not labels:
            self.error(
                f"{key}.index",
                f"index {config.index!r} is on {', '.join(index.labels)}, no mapped label (nor a label every node "
                "of a mapped label carries): a search never finds its nodes",
            )
            return
        self.check_embedder(config, spec, index.dimension)
        if index.similarity not in (None, "cosine"):
            self.warn(
                f"{key}.index",
                f"index {config.index!r} ranks by {index.similarity}, brain-graph scores by cosine: the candidates "
                "are the index's nearest, re-scored (the same for normalised vectors)",
            )
        details = [f"neo4j index {config.index!r} (dimension {index.dimension or '?'}, {index.similarity or '?'})"]
        for label in labels:
            if label not in self.present:
                continue
            stats = self.schema.stats[label]
            row = self.client.read(self.vector_statement(label, config.property), self.params())[0]
            vectors, orphans = int(row["vectors"]), int(row["orphans"])
            nodes = f"nodes of {label}"
            if not vectors:
                self.error(
                    f"{key}.property",
                    f"none of the {stats.sampled} sampled {nodes} has a vector in {config.property!r}",
                )
            elif vectors < stats.sampled:
                self.warn(
                    f"{key}.property",
                    f"{_of(stats.sampled - vectors, stats.sampled, nodes)} have no vector in {config.property!r}: "
                    "a vector search never finds them",
                )
            if orphans:
                self.warn(
                    f"{key}.property",
                    f"{orphans} of {vectors} sampled vectors of {label} are on nodes a search cannot return "
                    f"(no {self.id_name(label)}"
                    + (f" or {self.mapping.tenant.property!r})" if self.mapping.tenant.property else ")"),
                )
            found = stats.properties.get(config.property)
            odd = [size for size in (found.sizes if found else ()) if index.dimension and size != index.dimension]
            if odd:
                self.warn(
                    f"{key}.property",
                    f"sampled vectors of {label} have dimension {', '.join(map(str, odd))}, the index "
                    f"{index.dimension}: the index leaves them out",
                )
            details.append(
                f"{label}: {vectors} of {stats.sampled} sampled nodes have a vector, {orphans} not searchable"
            )
        self.counts.append(Count(key, "; ".join(details)))

    def check_weaviate_vectors(self, config: WeaviateVectors) -> None:
        from brain_graph.stores.mapped.weaviate_source import WeaviateSource, tenants_of

        key = f"vectors.{config.profile}"
        spec, labels = self.covered(config)
        if self.weaviate is None:
            self.error(f"{key}.collection", "Weaviate is not configured (WEAVIATE_HOST ...)")
            return
        origin = f"mapping {self.mapping.name}"
        source = WeaviateSource.from_mapping(self.mapping, config, connection=self.weaviate)
        try:
            source.check()
        except ConfigurationError as error:
            text = str(error).removeprefix(f"{origin}: ")
            where, _, message = text.partition(": ")
            self.error(where if where.startswith(key) else f"{key}.collection", message or text)
            return
        dimension = source.dimension()
        self.check_embedder(config, spec, dimension)
        infos = read_weaviate(self.weaviate, wanted=[config.collection], sample=1)
        info: CollectionInfo | None = infos[0] if infos else None
        vector = None
        if info is not None:
            usable = [v for v in info.vectors if not v.multi_vector]
            vector = next((v for v in usable if v.name == config.vector), None) if config.vector else None
            vector = vector or (usable[0] if len(usable) == 1 else next((v for v in usable if v.name is None), None))
        if vector is not None and vector.metric not in (None, "cosine"):
            self.warn(
                f"{key}.collection",
                f"Weaviate collection {config.collection!r} ranks by {vector.metric}, brain-graph scores by cosine: "
                "the candidates are the collection's nearest, re-scored",
            )
        details = [f"weaviate collection {config.collection!r} (dimension {dimension or '?'})"]
        # nodes without vectors: the sampled nodes of the profile's labels, looked up per tenant
        for label in labels:
            rows = self.client.read(self.sample_ids_statement(label), self.params())
            rows = sorted(rows, key=lambda r: (-len(r["ids"]), str(r["tenant"])))[:MAX_TENANTS_CHECKED]
            asked = found = 0
            for row in rows:
                ids = [str(i) for i in row["ids"]]
                asked += len(ids)
                found += len(source.vectors_of(ids, tenant_id=str(row["tenant"])))
            if asked and not found:
                self.error(
                    f"{key}.collection",
                    f"none of the {asked} sampled nodes of {label} has a vector in Weaviate collection "
                    f"{config.collection!r} (by {config.id_property!r})",
                )
            elif found < asked:
                self.warn(
                    f"{key}.collection",
                    f"{asked - found} of {asked} sampled nodes of {label} have no vector in Weaviate collection "
                    f"{config.collection!r}: a vector search never finds them",
                )
            details.append(f"{label}: {found} of {asked} sampled nodes have a vector")
        # vectors without nodes: sampled objects whose id no mapped node of their tenant has
        indexed = all(self.id_index(label) for label in self.present)
        if not indexed:
            details.append("vectors without nodes not checked (no index on the id of every mapped label)")
        else:
            objects = self.sample_objects(config, info, tenants_of)
            looked = missing = 0
            statements = MappedStatements(self.mapping)
            statement = statements.sought("n", "$nodeIds") + f"RETURN DISTINCT {statements.node_id('n')} AS id"
            for tenant_id, ids in sorted(objects.items()):
                unique = sorted(set(ids))
                params = {
                    "tenantId": tenant_id,
                    "fixedTenant": self.mapping.tenant.fixed,
                    "allSecured": True,
                    "identities": [],
                    "nodeIds": unique,
                }
                known = {row["id"] for row in self.client.read(statement, params)}
                looked += len(unique)
                missing += len([i for i in unique if i not in known])
            if missing:
                self.warn(
                    f"{key}.id_property",
                    f"{missing} of {looked} sampled objects of Weaviate collection {config.collection!r} name no "
                    f"mapped node of their tenant by {config.id_property!r}: never found",
                )
            details.append(f"{missing} of {looked} sampled objects without a node")
        self.counts.append(Count(key, "; ".join(details)))

    def sample_objects(
        self, config: WeaviateVectors, info: CollectionInfo | None, tenants_of: Any
    ) -> dict[str, list[str]]:
        """The node ids of sampled objects of the collection, per brain-graph tenant."""
        assert self.weaviate is not None
        connection = self.weaviate
        fixed = self.mapping.tenant.fixed
        sample = self.sample
        if info is not None and info.multi_tenant:
            pattern = config.tenant_name or "{tenant}"
            names = {pattern.replace("{tenant}", t): t for t in tenants_of(info.tenants, pattern)}
            wanted: list[tuple[str | None, str | None]] = [(name, tenant) for name, tenant in sorted(names.items())]
            if fixed is not None:
                wanted = [(n, t) for n, t in wanted if t == fixed]
            wanted = wanted[:MAX_OBJECT_TENANTS]
        else:
            wanted = [(None, fixed)]

        async def read(client: Any) -> dict[str, list[str]]:
            found: dict[str, list[str]] = {}
            props = [config.id_property] + ([config.tenant_property] if config.tenant_property else [])
            for weaviate_tenant, tenant_id in wanted:
                collection = client.collections.use(config.collection)
                if weaviate_tenant is not None:
                    collection = collection.with_tenant(weaviate_tenant)
                connection.tick()
                reply = await collection.query.fetch_objects(limit=sample, return_properties=props)
                for obj in reply.objects:
                    values = obj.properties or {}
                    node_id = values.get(config.id_property)
                    tenant = tenant_id if config.tenant_property is None else values.get(config.tenant_property)
                    if node_id is None or isinstance(node_id, bool) or not isinstance(tenant, str):
                        continue
                    found.setdefault(tenant, []).append(str(node_id))
            return found

        return connection.call(read, max(connection.timeout_s, 1.0) * 4)


def check_live(
    mapping: Mapping,
    client: Neo4jClient,
    weaviate: WeaviateConnection | None = None,
    *,
    profiles: Sequence[ProfileSpec] = DEFAULT_PROFILES,
    safe_edge_types: Collection[str] | None = None,
    sample: int = SAMPLE,
) -> CheckReport:
    """The :class:`CheckReport` of ``mapping`` on the live database (``safe_edge_types``: the edge
    allowlist to check ``as`` types against; None: not checked)."""
    checker = _Checker(mapping, client, weaviate, profiles, safe_edge_types, sample)
    return checker.run()
