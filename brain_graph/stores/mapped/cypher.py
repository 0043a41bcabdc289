"""The Cypher statements of the mapped backend, built from a :class:`~.mapping.Mapping`.

Every label, property key and relationship type comes from the mapping (checked there as plain
identifiers) and is backtick-quoted here; every value is a parameter. Each statement reads only
nodes with a mapped label, of the scope's tenant (``$tenantId``), visible to the scope
(``$allSecured``, ``$identities``): a node whose secured property is anything but ``false`` or
absent is secured, and an ACL that is not a list of strings matches nobody (fail closed).
"""

from __future__ import annotations

from collections.abc import Sequence

from brain_graph.stores.mapped.mapping import Mapping


def quoted(name: str) -> str:
    """A label, property key or relationship type as a Cypher identifier."""
    return "`" + name.replace("`", "``") + "`"


class MappedStatements:
    """The statements of one mapping (built once)."""

    def __init__(self, mapping: Mapping) -> None:
        self.mapping = mapping
        self.id = quoted(mapping.id_property)

    # -- predicates -------------------------------------------------------------------------------

    def has_label(self, var: str) -> str:
        """``var`` carries a mapped label (a searched node or a cluster)."""
        return "(" + " OR ".join(f"{var}:{quoted(label)}" for label in self.mapping.labels) + ")"

    def tenant(self, var: str) -> str:
        """``var`` belongs to ``$tenantId`` (a mapping with one fixed tenant: every node does)."""
        if self.mapping.tenant.property is not None:
            return f"{var}.{quoted(self.mapping.tenant.property)} = $tenantId"
        return "$tenantId = $fixedTenant"

    def visible(self, var: str) -> str:
        """``var`` is of the scope's tenant and the scope may see it."""
        checks = [self.tenant(var), f"{var}.{self.id} IS :: STRING NOT NULL"]
        secured = self.mapping.secured_property
        if secured is not None:
            acl = self.mapping.acl_property
            entries = (
                f" OR ({var}.{quoted(acl)} IS :: LIST<STRING NOT NULL> NOT NULL"
                f" AND any(entry IN {var}.{quoted(acl)} WHERE entry IN $identities))"
                if acl is not None
                else ""
            )
            checks.append(f"(coalesce({var}.{quoted(secured)}, false) = false OR $allSecured{entries})")
        return "(" + " AND ".join(checks) + ")"

    def sought(self, var: str, ids: str) -> str:
        """A ``CALL`` giving the visible mapped nodes ``var`` whose id is in the list expression ``ids``:
        one index seek per label (label + id property), their union (each node once)."""
        branches = " UNION ".join(
            f"UNWIND {ids} AS soughtId MATCH ({var}:{quoted(label)}) WHERE {var}.{self.id} = soughtId RETURN {var}"
            for label in self.mapping.labels
        )
        return f"CALL {{ {branches} }} WITH {var} WHERE {self.visible(var)} "

    # -- projections -------------------------------------------------------------------------------

    def meta(self, var: str) -> str:
        """A node's metadata as a map: id, labels, project, title, url, secured, acl, properties."""
        m = self.mapping
        title = (
            "coalesce(" + ", ".join(f"{var}.{quoted(p)}" for p in m.title_properties) + ")"
            if m.title_properties
            else "null"
        )
        fields = [
            f"id: {var}.{self.id}",
            f"labels: labels({var})",
            f"project: {var}.{quoted(m.project_property)}" if m.project_property else "project: null",
            f"title: {title}",
            f"url: {var}.{quoted(m.url_property)}" if m.url_property else "url: null",
            f"secured: {var}.{quoted(m.secured_property)}" if m.secured_property else "secured: false",
            f"acl: {var}.{quoted(m.acl_property)}" if m.acl_property else "acl: []",
            "properties: {" + ", ".join(f"{quoted(p)}: {var}.{quoted(p)}" for p in m.properties) + "}",
        ]
        return "{" + ", ".join(fields) + "}"

    def text(self, var: str) -> str:
        """Every property any mapped label reads passage text from, as a map (absent ones null)."""
        texts = [node.text for node in self.mapping.nodes]
        if self.mapping.clusters is not None:
            texts.append(self.mapping.clusters.text)
        props = sorted({prop for text in texts for prop in text.values()})
        return "{" + ", ".join(f"{quoted(p)}: {var}.{quoted(p)}" for p in props) + "}"

    # -- statements --------------------------------------------------------------------------------

    def get_nodes(self) -> str:
        """``node`` (the :meth:`meta` map) of each visible node of ``$nodeIds``."""
        return self.sought("n", "$nodeIds") + f"RETURN {self.meta('n')} AS node"

    def visible_ids(self) -> str:
        """``id`` of each visible node of ``$nodeIds`` in project ``$projectKey`` (any when null)."""
        project = self.mapping.project_property
        in_project = (
            f" WHERE $projectKey IS NULL OR n.{quoted(project)} = $projectKey"
            if project
            else (" WHERE $projectKey IS NULL")
        )
        return self.sought("n", "$nodeIds") + f"WITH n{in_project} RETURN n.{self.id} AS id"

    def get_texts(self, ids: str = "$nodeIds") -> str:
        """``id``, ``labels`` and ``text`` (the :meth:`text` map) of each visible node of ``ids``."""
        return self.sought("n", ids) + f"RETURN n.{self.id} AS id, labels(n) AS labels, {self.text('n')} AS text"

    def rel_pattern(self, rel_types: Sequence[str]) -> str:
        """The type part of a relationship pattern for ``rel_types`` (at least one)."""
        return ":" + "|".join(quoted(t) for t in rel_types)

    def neighbours(self, var: str, rel_types: Sequence[str]) -> str:
        """MATCH of the relationships of ``rel_types`` from ``var`` to visible mapped nodes ``m`` other than itself."""
        return (
            f"MATCH ({var})-[r{self.rel_pattern(rel_types)}]-(m) "
            f"WHERE m <> {var} AND {self.has_label('m')} AND {self.visible('m')} "
        )

    def links(self, rel_types: Sequence[str]) -> str:
        """Per visible frontier node of ``$frontier``: ``frontierId``, ``degree`` (distinct visible
        neighbours, counted no further than ``$maxDegree + 1``) and, when the degree is at most
        ``$maxDegree``, ``links`` as ``[relationship type, neighbour id, outgoing]``."""
        return (
            self.sought("s", "$frontier")
            + "CALL (s) { "
            + self.neighbours("s", rel_types)
            + "WITH DISTINCT m LIMIT $maxDegree + 1 RETURN count(m) AS degree } "
            "CALL (s, degree) { UNWIND CASE WHEN degree <= $maxDegree THEN [s] ELSE [] END AS o "
            + self.neighbours("o", rel_types)
            + f"RETURN collect([type(r), m.{self.id}, startNode(r) = o]) AS links }} "
            f"RETURN s.{self.id} AS frontierId, degree, links"
        )

    def edges_among(self, rel_types: Sequence[str], ids: str = "$nodeIds") -> str:
        """``type``, ``fromId``, ``toId`` of the relationships of ``rel_types`` among the visible nodes
        of ``ids``."""
        return (
            "CALL { " + self.sought("n", ids) + "RETURN collect(n) AS among } "
            f"UNWIND among AS a MATCH (a)-[r{self.rel_pattern(rel_types)}]->(b) WHERE b IN among "
            f"RETURN type(r) AS type, a.{self.id} AS fromId, b.{self.id} AS toId"
        )

    def count(self, rel_types: Sequence[str]) -> str:
        """``nodes``: the tenant's mapped nodes with an id, whoever may see them; ``edges``: the
        relationships of ``rel_types`` from one of them to another (one per type and pair of nodes)."""
        own = f"{self.tenant('n')} AND n.{self.id} IS :: STRING NOT NULL"
        branches = " UNION ".join(f"MATCH (n:{quoted(label)}) WHERE {own} RETURN n" for label in self.mapping.labels)
        out = (
            f"MATCH (n)-[r{self.rel_pattern(rel_types)}]->(m) WHERE {self.has_label('m')} "
            f"AND {self.tenant('m')} AND m.{self.id} IS :: STRING NOT NULL RETURN count(DISTINCT [type(r), m]) AS out"
            if rel_types
            else "RETURN 0 AS out"
        )
        return f"CALL {{ {branches} }} CALL (n) {{ {out} }} RETURN count(n) AS nodes, sum(out) AS edges"

    def cluster_memberships(self, ids: str = "$nodeIds") -> str:
        """Per visible member of ``ids`` and visible cluster it belongs to: ``memberId``, the
        cluster's ``cluster`` (:meth:`meta`) and ``size`` (its visible members)."""
        clusters = self.mapping.clusters
        assert clusters is not None
        membership, label = quoted(clusters.membership), quoted(clusters.label)
        members = " OR ".join(f"x:{quoted(node.label)}" for node in self.mapping.nodes)
        return (
            self.sought("m", ids) + f"MATCH (m)-[:{membership}]->(c:{label}) WHERE {self.visible('c')} "
            f"WITH m, c, COUNT {{ MATCH (c)<-[:{membership}]-(x) WHERE ({members}) AND {self.visible('x')} }} AS size "
            f"RETURN m.{self.id} AS memberId, {self.meta('c')} AS cluster, size"
        )

    def context(self, rel_types: Sequence[str]) -> str:
        """The reads of a search after its expansion, in one statement: ``edges`` (:meth:`edges_among`
        of ``$edgeIds``, as ``[type, fromId, toId]``), ``clusters`` (:meth:`cluster_memberships` of
        ``$memberIds``, as ``[memberId, cluster, size]``) and ``texts`` (:meth:`get_texts` of
        ``$textIds``, as ``[id, labels, text]``); each subquery aggregates to exactly one row."""
        edges = (
            "CALL () { CALL () { "
            + self.edges_among(rel_types, "$edgeIds")
            + " } RETURN collect([type, fromId, toId]) AS edges } "
            if rel_types
            else "CALL () { RETURN [] AS edges } "
        )
        clusters = (
            "CALL () { CALL () { "
            + self.cluster_memberships("$memberIds")
            + " } RETURN collect([memberId, cluster, size]) AS clusters } "
            if self.mapping.clusters is not None
            else "CALL () { RETURN [] AS clusters } "
        )
        texts = (
            "CALL () { CALL () { " + self.get_texts("$textIds") + " } RETURN collect([id, labels, text]) AS texts } "
        )
        return edges + clusters + texts + "RETURN edges, clusters, texts"
