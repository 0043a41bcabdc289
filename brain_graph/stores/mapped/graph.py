"""The graph reads of the mapped backend: :class:`~brain_graph.stores.base.GraphStore` and
:class:`~brain_graph.stores.base.PassageSource` over a team's own Neo4j graph, one read statement each.

Values from the team's data are taken only when they are what brain-graph would have loaded: a title
that is not a string is no title, a url that is not an absolute http(s) URL is no url, a project that
is not an identifier is no project, an ACL entry that is not a string is dropped, text fields that are
not strings are absent, facets are what :mod:`.facets` reads. A node is never refused for them (it
simply has less to show).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from brain_graph.core.contracts import MAX_PROJECT_CHARS, identifier_problem
from brain_graph.core.filters import SeedFilter
from brain_graph.core.passage_heads import FieldHead, read_heads
from brain_graph.core.security import AccessScope
from brain_graph.core.vocabulary import CLUSTER, IN_CLUSTER
from brain_graph.stores.base import ClusterMembership, EdgeRecord, Link, Neighborhood, NodeRecord, TenantCounts
from brain_graph.stores.mapped.cypher import MappedStatements
from brain_graph.stores.mapped.facets import record_facets
from brain_graph.stores.mapped.mapping import Mapping as GraphMapping
from brain_graph.stores.neo4j_weaviate.neo4j.client import Neo4jClient
from brain_graph.stores.write_checks import node_id_problem, url_problem


def _plain(value: Any) -> bool:
    """Whether a property value is one brain-graph keeps: a string, finite number, bool, or a list of them."""
    if isinstance(value, list):
        return all(_plain(item) and not isinstance(item, list) for item in value)
    if isinstance(value, float):
        return math.isfinite(value)
    return isinstance(value, str | int | bool)


@dataclass(frozen=True)
class Reach:
    """What :meth:`MappedGraph.reach` read: the frontier's ``nodes`` (records, when asked), the
    ``degrees`` of its visible nodes, its sorted ``links``, and per reached node the values of the
    vector properties asked for."""

    nodes: dict[str, NodeRecord]
    degrees: dict[str, int]
    links: list[Link]
    reached: dict[str, list[Any]]


@dataclass(frozen=True)
class Candidates:
    """What :meth:`MappedGraph.candidates` read: per Neo4j-index profile its kept candidates ``(id,
    stored vector)`` in Neo4j's order, the visible admitted ids among the other sources' candidates,
    and whether an untimed node was found (:meth:`MappedStatements.untimed_node`)."""

    indexed: dict[str, list[tuple[str, Any]]]
    visible: set[str]
    untimed: bool


class MappedGraph:
    """Graph store and passage source of a mapping (see the module docstring)."""

    def __init__(self, client: Neo4jClient, mapping: GraphMapping) -> None:
        self._client = client
        self.mapping = mapping
        self.statements = MappedStatements(mapping)
        self._get_nodes = self.statements.get_nodes()
        self._visible_ids = self.statements.visible_ids()
        self._get_texts = self.statements.get_texts()
        self._memberships = self.statements.cluster_memberships() if mapping.clusters is not None else None
        self._candidates = self.statements.candidates()
        self._untimed = self.statements.untimed()
        self._statements: dict[tuple[Any, ...], str] = {}  # by kind and relationship types
        self._text_of = {node.label: node.text for node in mapping.nodes}
        if mapping.clusters is not None:
            self._text_of[mapping.clusters.label] = mapping.clusters.text

    def _read(self, statement: str, params: Mapping[str, Any]) -> list[Any]:
        """One read statement; its names come from the validated mapping, quoted (:mod:`.cypher`)."""
        return self._client.read(statement, params)

    def params(self, scope: AccessScope, **values: Any) -> dict[str, Any]:
        """The scope's parameters (tenant, identities, service mode) plus ``values``."""
        fixed = self.mapping.tenant.fixed
        return {
            "tenantId": scope.tenant_id,
            "fixedTenant": fixed,
            "allSecured": scope.all_secured,
            "identities": list(scope.sorted_identities),
            **values,
        }

    # -- records -----------------------------------------------------------------------------------

    def _label(self, labels: Sequence[str]) -> str | None:
        """The first mapped label (mapping order) among ``labels``."""
        present = set(labels)
        return next((label for label in self.mapping.labels if label in present), None)

    def record(self, data: Mapping[str, Any], tenant_id: str) -> NodeRecord | None:
        """The metadata record of a node read with :meth:`MappedStatements.meta` (None: not a mapped node)."""
        label = self._label(data["labels"])
        if label is None or not isinstance(data["id"], str) or node_id_problem(data["id"]) is not None:
            return None  # an id brain-graph could not print safely (control characters, ...) is no node
        title, url, project = data["title"], data["url"], data["project"]
        acl = data["acl"] if isinstance(data["acl"], list) else []
        namespace, tags, updated_at = record_facets(data)
        return NodeRecord(
            tenant_id=tenant_id,
            node_id=data["id"],
            node_type=self.mapping.node_type_of(label, data.get("types")),
            project_key=project
            if isinstance(project, str) and not identifier_problem(project, MAX_PROJECT_CHARS)
            else None,
            title=title if isinstance(title, str) else None,
            url=url if isinstance(url, str) and url_problem(url) is None else None,
            secured=data["secured"] is not False and data["secured"] is not None,
            acl=tuple(sorted({entry for entry in acl if isinstance(entry, str)})),
            properties={key: value for key, value in data["properties"].items() if _plain(value)},
            namespace=namespace,
            tags=tags,
            updated_at=updated_at,
        )

    def edge_type(self, rel_type: str) -> str:
        """The brain-graph edge type of a relationship type the mapping follows."""
        clusters = self.mapping.clusters
        if clusters is not None and rel_type == clusters.membership:
            return IN_CLUSTER
        return next(edge.as_type for edge in self.mapping.edges if edge.type == rel_type)

    def rel_types(self, edge_types: Sequence[str]) -> list[str]:
        """The relationship types read as ``edge_types`` (sorted, each once)."""
        wanted = set(edge_types)
        found = {edge.type for edge in self.mapping.edges if edge.as_type in wanted}
        if IN_CLUSTER in wanted and self.mapping.clusters is not None:
            found.add(self.mapping.clusters.membership)
        return sorted(found)

    # -- GraphStore --------------------------------------------------------------------------------

    def get_nodes(self, node_ids: Sequence[str], *, scope: AccessScope) -> list[NodeRecord]:
        if not node_ids:
            return []
        rows = self._read(self._get_nodes, self.params(scope, nodeIds=list(dict.fromkeys(node_ids))))
        records = [self.record(row["node"], scope.tenant_id) for row in rows]
        return [record for record in records if record is not None]

    def visible_ids(self, node_ids: Sequence[str], *, scope: AccessScope, project_key: str | None) -> set[str]:
        """The ids among ``node_ids`` of visible nodes (in ``project_key`` when set)."""
        if not node_ids:
            return set()
        params = self.params(scope, nodeIds=list(dict.fromkeys(node_ids)), projectKey=project_key)
        return {row["id"] for row in self._read(self._visible_ids, params) if node_id_problem(row["id"]) is None}

    def links(
        self, frontier: Sequence[str], *, scope: AccessScope, edge_types: Sequence[str], max_degree: int
    ) -> Neighborhood:
        found = self.reach(frontier, scope=scope, edge_types=edge_types, max_degree=max_degree)
        return Neighborhood({**dict.fromkeys(frontier, 0), **found.degrees}, found.links)

    def candidates(
        self,
        index_queries: Sequence[Mapping[str, Any]],
        candidate_ids: Sequence[str],
        *,
        scope: AccessScope,
        seed_filter: SeedFilter,
        keep: int,
        untimed_sources: Sequence[Mapping[str, Any]] = (),
    ) -> Candidates:
        """:meth:`MappedStatements.candidates` in one read (none when there is nothing to read): per
        profile of ``index_queries`` the ``keep`` nearest of its visible candidates that pass
        ``seed_filter``, the visible ids among ``candidate_ids`` that pass it, and, with
        ``untimed_sources``, :meth:`untimed` of them."""
        by_profile: dict[str, list[tuple[str, Any]]] = {str(query["profile"]): [] for query in index_queries}
        visible: set[str] = set()
        untimed = False
        if not index_queries and not candidate_ids and not untimed_sources:
            return Candidates(by_profile, visible, untimed)
        params = self.filter_params(
            scope,
            seed_filter,
            indexQueries=list(index_queries),
            candidateIds=list(dict.fromkeys(candidate_ids)),
            keep=keep,
            untimedSources=list(untimed_sources),
        )
        for row in self._read(self._candidates, params):
            node_id = row["id"]
            if node_id_problem(node_id) is not None:
                continue
            if row["kind"] == "untimed":
                untimed = True
            elif row["kind"] == "visible":
                visible.add(node_id)
            else:
                by_profile[row["profile"]].append((node_id, row["vector"]))
        return Candidates(by_profile, visible, untimed)

    def untimed(self, sources: Sequence[Mapping[str, Any]], *, scope: AccessScope, seed_filter: SeedFilter) -> bool:
        """Whether a visible node of ``sources`` (``labels``: it has one of them, ``property``: it
        holds it; null: any) passes ``seed_filter`` but for having no update time, when it has a
        recency part (:meth:`MappedStatements.untimed`; one read, none without sources or recency)."""
        if not sources or seed_filter.updated_after is None:
            return False
        (row,) = self._read(self._untimed, self.filter_params(scope, seed_filter, untimedSources=list(sources)))
        return bool(row["untimed"])

    def filter_params(self, scope: AccessScope, seed_filter: SeedFilter, **values: Any) -> dict[str, Any]:
        """:meth:`params` with the project and the facet parts of ``seed_filter``
        (:meth:`.facets.MappedFacets.params`)."""
        return self.params(
            scope, projectKey=seed_filter.project_key, **self.statements.facets.params(seed_filter), **values
        )

    def reach(
        self,
        frontier: Sequence[str],
        *,
        scope: AccessScope,
        edge_types: Sequence[str],
        max_degree: int,
        vector_properties: Sequence[str] = (),
        metadata: bool = False,
    ) -> Reach:
        """The visible nodes of ``frontier`` (their records when ``metadata``), their degrees and
        :meth:`links` over ``edge_types``, and the values of ``vector_properties`` of every node those
        links reach, in one read (none without a frontier, or without edge types and ``metadata``)."""
        ids = list(dict.fromkeys(frontier))
        types = self.rel_types(edge_types)
        if not ids or (not types and not metadata):
            return Reach({}, {}, [], {})
        statement = self._statement(
            ("reach", metadata, *types), lambda: self.statements.reach(types, metadata=metadata)
        )
        params = self.params(scope, frontier=ids, maxDegree=max_degree, vectorProperties=list(vector_properties))
        nodes: dict[str, NodeRecord] = {}
        degrees: dict[str, int] = {}
        links: set[Link] = set()
        reached: dict[str, list[Any]] = {}
        for row in self._read(statement, params):
            source = row["frontierId"]
            if metadata:
                record = self.record(row["node"], scope.tenant_id)
                if record is None:
                    continue
                nodes[record.node_id] = record
            degrees[source] = int(row["degree"])
            links.update(Link(source, self.edge_type(t), neighbor, bool(out)) for t, neighbor, out in row["links"])
            reached.update((node_id, list(values)) for node_id, values in row["reached"])
        return Reach(nodes, degrees, sorted(links), reached)

    def _statement(self, key: tuple[Any, ...], build: Callable[[], str]) -> str:
        """The statement of ``key`` (its kind and relationship types), built once."""
        statement = self._statements.get(key)
        if statement is None:
            statement = self._statements.setdefault(key, build())
        return statement

    def edges_among(
        self, node_ids: Sequence[str], *, scope: AccessScope, edge_types: Sequence[str]
    ) -> list[EdgeRecord]:
        types = self.rel_types(edge_types)
        if not node_ids or not types:
            return []
        params = self.params(scope, nodeIds=sorted(set(node_ids)))
        rows = self._read(self._statement(("edges", *types), lambda: self.statements.edges_among(types)), params)
        return self._edges([(row["type"], row["fromId"], row["toId"]) for row in rows], scope.tenant_id)

    def _edges(self, rows: Sequence[Sequence[Any]], tenant_id: str) -> list[EdgeRecord]:
        """Edge records of ``[relationship type, from id, to id]`` rows, each once, in edge order."""
        ends = {(self.edge_type(rel_type), source, target) for rel_type, source, target in rows}
        return [EdgeRecord(tenant_id, *end) for end in sorted(ends)]

    def cluster_memberships(
        self, node_ids: Sequence[str], *, scope: AccessScope, known: Sequence[str] = ()
    ) -> list[ClusterMembership]:
        if not node_ids or self._memberships is None:
            return []
        rows = self._read(self._memberships, self.params(scope, nodeIds=sorted(set(node_ids))))
        return self._memberships_of([(row["memberId"], row["cluster"], row["size"]) for row in rows], scope, known)

    def _memberships_of(
        self, rows: Sequence[Sequence[Any]], scope: AccessScope, known: Sequence[str]
    ) -> list[ClusterMembership]:
        """Memberships of ``[member id, cluster meta, size]`` rows, ordered by cluster then member; the
        records of clusters in ``known`` left out."""
        skip = set(known)
        found: dict[tuple[str, str], ClusterMembership] = {}
        for member_id, data, size in rows:
            cluster = self.record(data, scope.tenant_id)
            if cluster is None or cluster.node_type != CLUSTER:
                continue
            found[(cluster.node_id, member_id)] = ClusterMembership(
                member_id, cluster.node_id, int(size), None if cluster.node_id in skip else cluster
            )
        return [found[key] for key in sorted(found)]

    def count(self, tenant_id: str) -> TenantCounts:
        """The tenant's mapped nodes and the followed relationships among them, whoever may see them
        (one read). Vectors are not counted: they are in the team's own sources."""
        types = sorted({edge.type for edge in self.mapping.edges} | set(self.rel_types([IN_CLUSTER])))
        (row,) = self._read(self.statements.count(types), self.params(AccessScope(tenant_id)))
        return TenantCounts(nodes=int(row["nodes"]), edges=int(row["edges"]), vectors={})

    # -- PassageSource -----------------------------------------------------------------------------

    def _text_rows(self, node_ids: Sequence[str], scope: AccessScope) -> list[tuple[str, str, dict[str, str]]]:
        """``(id, node type, text fields)`` of the visible mapped nodes among ``node_ids``."""
        if not node_ids:
            return []
        rows = self._read(self._get_texts, self.params(scope, nodeIds=list(dict.fromkeys(node_ids))))
        return self._texts([(row["id"], row["labels"], row["text"]) for row in rows])

    def _texts(self, rows: Sequence[Sequence[Any]]) -> list[tuple[str, str, dict[str, str]]]:
        """``(id, node type, text fields)`` of ``[id, labels, text map]`` rows of mapped nodes."""
        found = []
        for node_id, labels, values in rows:
            label = self._label(labels)
            if label is None:
                continue
            fields = self._text_of.get(label, {})
            text = {field: value for field, prop in fields.items() if isinstance(value := values.get(prop), str)}
            found.append((node_id, self.mapping.node_type_of(label, values), text))
        return found

    def context_rest(
        self,
        admitted: Sequence[str],
        edge_types: Sequence[str],
        members: Sequence[str],
        known: Sequence[str],
        cited: Sequence[str],
        *,
        scope: AccessScope,
        whole: bool,
    ) -> tuple[list[EdgeRecord], list[ClusterMembership], dict[str, Mapping[str, FieldHead]]]:
        """:meth:`edges_among` of ``admitted``, :meth:`cluster_memberships` of ``members`` (records of
        ``known`` left out) and :meth:`get_passage_heads` of ``cited``, in one statement (none when
        all three are empty)."""
        types = self.rel_types(edge_types)
        if not (admitted and types) and not (members and self._memberships) and not cited:
            return [], [], {}
        params = self.params(
            scope,
            edgeIds=sorted(set(admitted)),
            memberIds=sorted(set(members)),
            textIds=list(dict.fromkeys(cited)),
        )
        (row,) = self._read(self._statement(("context", *types), lambda: self.statements.context(types)), params)
        heads: dict[str, Mapping[str, FieldHead]] = {
            node_id: read_heads(node_type, None, text, whole=whole)
            for node_id, node_type, text in self._texts(row["texts"])
        }
        return self._edges(row["edges"], scope.tenant_id), self._memberships_of(row["clusters"], scope, known), heads

    def get_texts(self, node_ids: Sequence[str], *, scope: AccessScope) -> dict[str, Mapping[str, str]]:
        return {node_id: text for node_id, _, text in self._text_rows(node_ids, scope)}

    def get_passage_heads(
        self, node_ids: Sequence[str], *, scope: AccessScope, whole: bool = False
    ) -> dict[str, Mapping[str, FieldHead]]:
        return {
            node_id: read_heads(node_type, None, text, whole=whole)
            for node_id, node_type, text in self._text_rows(node_ids, scope)
        }
