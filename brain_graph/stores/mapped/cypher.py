"""The Cypher statements of the mapped backend, built from a :class:`~.mapping.Mapping`.

Every label, property key and relationship type comes from the mapping (checked there as plain
identifiers) and is backtick-quoted here; every value is a parameter. Each statement reads only
nodes with a mapped label, of the scope's tenant (``$tenantId``), visible to the scope
(``$allSecured``, ``$identities``): a node whose secured property is anything but ``false`` or
absent is secured, and an ACL that is not a list of strings matches nobody (fail closed). A node's
seed-filter facets are the expressions of :mod:`.facets`.
"""

from __future__ import annotations

from collections.abc import Sequence

from brain_graph.stores.mapped.facets import MappedFacets
from brain_graph.stores.mapped.mapping import ELEMENT_ID, Mapping, quoted

__all__ = ["MappedStatements", "quoted"]


class MappedStatements:
    """The statements of one mapping (built once)."""

    def __init__(self, mapping: Mapping) -> None:
        self.mapping = mapping
        self.facets = MappedFacets(mapping)

    # -- ids ---------------------------------------------------------------------------------------

    def _by_label(self, var: str, of: dict[tuple[str, str], str], otherwise: str) -> str:
        """One expression per id kind (``of``: kind -> expression): the expression itself when every
        mapped label has that kind, else a ``CASE`` on ``var``'s first mapped label."""
        kinds = [self.mapping.id_of(label) for label in self.mapping.labels]
        if len(set(kinds)) == 1:
            return of[kinds[0]]
        cases = " ".join(
            f"WHEN {var}:{quoted(label)} THEN {of[kind]}"
            for label, kind in zip(self.mapping.labels, kinds, strict=True)
        )
        return f"CASE {cases} ELSE {otherwise} END"

    def _kinds(self) -> set[tuple[str, str]]:
        return {self.mapping.id_of(label) for label in self.mapping.labels}

    @staticmethod
    def id_expression(var: str, kind: tuple[str, str]) -> str:
        """The id of ``var`` as a string, for an id kind (:meth:`Mapping.id_of`)."""
        prop, id_type = kind
        if prop == ELEMENT_ID:
            return f"elementId({var})"
        return f"toString({var}.{quoted(prop)})" if id_type == "integer" else f"{var}.{quoted(prop)}"

    @staticmethod
    def _has_id_expression(var: str, kind: tuple[str, str]) -> str:
        prop, id_type = kind
        if prop == ELEMENT_ID:
            return "true"
        return f"{var}.{quoted(prop)} IS :: {'INTEGER' if id_type == 'integer' else 'STRING'} NOT NULL"

    def node_id(self, var: str) -> str:
        """``var``'s node id as a string: its label's id property, an integer id in decimal, or its
        element id."""
        return self._by_label(var, {k: self.id_expression(var, k) for k in self._kinds()}, "null")

    def has_id(self, var: str) -> str:
        """``var`` has an id of its label's kind (a node without one is never read)."""
        return "(" + self._by_label(var, {k: self._has_id_expression(var, k) for k in self._kinds()}, "false") + ")"

    def _seek_label(self, var: str, label: str, ids: str) -> str:
        prop, id_type = self.mapping.id_of(label)
        if prop == ELEMENT_ID:
            return (
                f"UNWIND {ids} AS soughtId MATCH ({var}:{quoted(label)}) WHERE elementId({var}) = soughtId RETURN {var}"
            )
        if id_type == "integer":  # integer ids only from their decimal form ("01" names no node)
            ids = f"[x IN {ids} WHERE toString(toInteger(x)) = x | toInteger(x)]"
        return (
            f"UNWIND {ids} AS soughtId MATCH ({var}:{quoted(label)}) WHERE {var}.{quoted(prop)} = soughtId RETURN {var}"
        )

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
        checks = [self.tenant(var), self.has_id(var)]
        secured = self.mapping.secured_property
        if secured is not None:
            entries = "".join(
                f" OR ({var}.{quoted(acl)} IS :: LIST<STRING NOT NULL> NOT NULL"
                f" AND any(entry IN {var}.{quoted(acl)} WHERE {self._entry(prefix)} IN $identities))"
                for acl, prefix in self.mapping.acl_properties
            )
            checks.append(f"(coalesce({var}.{quoted(secured)}, false) = false OR $allSecured{entries})")
        return "(" + " AND ".join(checks) + ")"

    @staticmethod
    def _entry(prefix: str) -> str:
        return f"'{prefix}' + entry" if prefix else "entry"

    def acl(self, var: str) -> str:
        """``var``'s ACL entries as typed strings (``user:<id>``, ``group:<name>``); an ACL property that
        is not a list of strings gives none."""
        parts = [
            f"CASE WHEN {var}.{quoted(acl)} IS :: LIST<STRING NOT NULL> NOT NULL "
            f"THEN [entry IN {var}.{quoted(acl)} | {self._entry(prefix)}] ELSE [] END"
            for acl, prefix in self.mapping.acl_properties
        ]
        return " + ".join(parts) if parts else "[]"

    def seek(self, var: str, ids: str) -> str:
        """A ``CALL`` giving the mapped nodes ``var`` whose id is in the list expression ``ids``, each
        once, whoever may see them: one index (or element id) seek per label, their union. When labels
        differ in their ids, a node found by one label's id but named by another is left out."""
        branches = " UNION ".join(self._seek_label(var, label, ids) for label in self.mapping.labels)
        named = f"WITH {var} WHERE {self.node_id(var)} IN {ids} " if len(self._kinds()) > 1 else ""
        return f"CALL {{ {branches} }} {named}"

    def sought(self, var: str, ids: str) -> str:
        """:meth:`seek`, then only the nodes the scope may see (:meth:`visible`)."""
        return self.seek(var, ids) + f"WITH {var} WHERE {self.visible(var)} "

    # -- projections -------------------------------------------------------------------------------

    def meta(self, var: str) -> str:
        """A node's metadata as a map: id, labels, project, title, url, secured, acl, properties, the
        values of the properties node types are read from, and its facets (namespace, tags, updatedAt)."""
        m = self.mapping
        title = (
            "coalesce(" + ", ".join(f"{var}.{quoted(p)}" for p in m.title_properties) + ")"
            if m.title_properties
            else "null"
        )
        fields = [
            f"id: {self.node_id(var)}",
            f"labels: labels({var})",
            f"project: {var}.{quoted(m.project_property)}" if m.project_property else "project: null",
            f"title: {title}",
            f"url: {var}.{quoted(m.url_property)}" if m.url_property else "url: null",
            f"secured: {var}.{quoted(m.secured_property)}" if m.secured_property else "secured: false",
            f"acl: {self.acl(var)}",
            "properties: {" + ", ".join(f"{quoted(p)}: {var}.{quoted(p)}" for p in m.properties) + "}",
            "types: {" + ", ".join(f"{quoted(p)}: {var}.{quoted(p)}" for p in m.type_properties) + "}",
            *self.facets.fields(var),
        ]
        return "{" + ", ".join(fields) + "}"

    def text(self, var: str) -> str:
        """Every property any mapped label reads passage text or its node type from, as a map (absent
        ones null)."""
        texts = [node.text for node in self.mapping.nodes]
        if self.mapping.clusters is not None:
            texts.append(self.mapping.clusters.text)
        props = sorted({prop for text in texts for prop in text.values()} | set(self.mapping.type_properties))
        return "{" + ", ".join(f"{quoted(p)}: {var}.{quoted(p)}" for p in props) + "}"

    # -- statements --------------------------------------------------------------------------------

    def get_nodes(self) -> str:
        """``node`` (the :meth:`meta` map) of each visible node of ``$nodeIds``."""
        return self.sought("n", "$nodeIds") + f"RETURN {self.meta('n')} AS node"

    def visible_ids(self) -> str:
        """``id`` of each visible node of ``$nodeIds`` in project ``$projectKey`` (any when null)."""
        return self.sought("n", "$nodeIds") + f"WITH n WHERE {self.in_project('n')} RETURN {self.node_id('n')} AS id"

    def get_texts(self, ids: str = "$nodeIds") -> str:
        """``id``, ``labels`` and ``text`` (the :meth:`text` map) of each visible node of ``ids``."""
        returned = f"RETURN {self.node_id('n')} AS id, labels(n) AS labels, {self.text('n')} AS text"
        return self.sought("n", ids) + returned

    def rel_pattern(self, rel_types: Sequence[str]) -> str:
        """The type part of a relationship pattern for ``rel_types`` (at least one)."""
        return ":" + "|".join(quoted(t) for t in rel_types)

    def neighbours(self, var: str, rel_types: Sequence[str]) -> str:
        """MATCH of the relationships of ``rel_types`` from ``var`` to visible mapped nodes ``m`` other than itself."""
        return (
            f"MATCH ({var})-[r{self.rel_pattern(rel_types)}]-(m) "
            f"WHERE m <> {var} AND {self.has_label('m')} AND {self.visible('m')} "
        )

    def in_project(self, var: str) -> str:
        """``var`` is in project ``$projectKey`` (any when it is null)."""
        project = self.mapping.project_property
        if project is None:
            return "$projectKey IS NULL"
        return f"($projectKey IS NULL OR {var}.{quoted(project)} = $projectKey)"

    def candidates(self) -> str:
        """The candidates of a vector query in one statement, under the project ``$projectKey`` and the
        facet filter ``$filter`` (:meth:`.facets.MappedFacets.admitted`, applied once to every
        candidate). Rows of ``kind`` ``index``: per entry of ``$indexQueries`` (``profile``,
        ``index``, ``limit``, ``vector``, ``property``) the visible admitted mapped nodes among the
        ``limit`` its Neo4j vector index finds nearest, the ``$keep`` nearest of them by Neo4j's
        cosine of their stored vector (ties by id), with that vector; ``visible``: the visible
        admitted nodes of ``$candidateIds`` (other sources' candidates); ``untimed``: at most one
        row, :meth:`untimed_node`. Columns: ``kind``, ``profile``, ``id``, ``vector``."""
        checked = (
            f"{self.has_label('n')} AND {self.visible('n')} AND {self.in_project('n')} AND {self.facets.admitted('n')}"
        )
        near = (
            "CASE WHEN n[prop] IS :: LIST<FLOAT NOT NULL> AND size(n[prop]) = size(query) "
            "THEN vector.similarity.cosine(n[prop], query) END"
        )
        return (
            "CALL () { UNWIND $indexQueries AS q "
            "CALL (q) { CALL db.index.vector.queryNodes(q.index, q.limit, q.vector) YIELD node AS n RETURN n } "
            "RETURN q.profile AS profile, q.property AS prop, q.vector AS query, n UNION ALL "
            + self.seek("n", "$candidateIds")
            + "RETURN null AS profile, null AS prop, null AS query, n } "
            f"WITH profile, prop, query, n WHERE {checked} "
            f"WITH profile, prop, n, CASE WHEN profile IS NULL THEN null ELSE {near} END AS near "
            f"ORDER BY profile, coalesce(near, -1.0) DESC, {self.node_id('n')} "
            "WITH profile, prop, collect(n) AS ranked "
            "UNWIND CASE WHEN profile IS NULL THEN ranked ELSE ranked[..$keep] END AS n "
            "RETURN CASE WHEN profile IS NULL THEN 'visible' ELSE 'index' END AS kind, profile, "
            f"{self.node_id('n')} AS id, CASE WHEN profile IS NULL THEN null ELSE n[prop] END AS vector "
            "UNION ALL "
            + self.untimed_node()
            + f"RETURN 'untimed' AS kind, null AS profile, {self.node_id('n')} AS id, null AS vector"
        )

    def untimed_node(self) -> str:
        """Clauses giving at most one node ``n``: a visible mapped node in project ``$projectKey``
        that passes every part of ``$filter`` but its recency, and has no update time
        (:meth:`.facets.MappedFacets.untimed`), of one of ``$untimedSources`` (each ``labels``: the
        node has one of them, ``property``: it holds it; null: any); none without sources. The
        mapped labels are read in order until the first such node."""
        held = (
            "any(bgSource IN $untimedSources WHERE (bgSource.labels IS NULL OR "
            "any(bgLabel IN labels(n) WHERE bgLabel IN bgSource.labels)) "
            "AND (bgSource.property IS NULL OR n[bgSource.property] IS NOT NULL))"
        )
        found = f"{self.visible('n')} AND {self.in_project('n')} AND {held} AND {self.facets.untimed('n')}"
        scans = " UNION ALL ".join(f"MATCH (n:{quoted(label)}) RETURN n" for label in self.mapping.labels)
        return (
            "UNWIND CASE WHEN size($untimedSources) > 0 THEN [true] ELSE [] END AS scanned "
            f"CALL () {{ {scans} }} WITH n WHERE {found} WITH n LIMIT 1 "
        )

    def untimed(self) -> str:
        """``untimed``: whether :meth:`untimed_node` finds a node (one row)."""
        return f"CALL () {{ {self.untimed_node()}RETURN n }} RETURN count(n) > 0 AS untimed"

    def reach(self, rel_types: Sequence[str], *, metadata: bool) -> str:
        """Per visible node ``s`` of ``$frontier``: ``frontierId``, its ``node`` (:meth:`meta`, when
        ``metadata``, else null), and over ``rel_types`` (none: degree 0, no links): ``degree`` (its
        distinct visible neighbours, counted no further than ``$maxDegree + 1``); when the degree is at
        most ``$maxDegree``, ``links`` as ``[relationship type, neighbour id, outgoing]``; and
        ``reached``: each neighbour those links reach, once, as ``[id, [its value of each property of
        $vectorProperties]]`` (the stored vectors of the reached nodes, read with them)."""
        node = self.meta("s") if metadata else "null"
        head = self.sought("s", "$frontier")
        if not rel_types:
            return (
                head
                + f"RETURN {self.node_id('s')} AS frontierId, {node} AS node, 0 AS degree, [] AS links, [] AS reached"
            )
        return (
            head
            + "CALL (s) { "
            + self.neighbours("s", rel_types)
            + "WITH DISTINCT m LIMIT $maxDegree + 1 RETURN count(m) AS degree } "
            "CALL (s, degree) { UNWIND CASE WHEN degree <= $maxDegree THEN [s] ELSE [] END AS o "
            + self.neighbours("o", rel_types)
            + f"RETURN collect([type(r), {self.node_id('m')}, startNode(r) = o]) AS links, "
            "collect(DISTINCT m) AS near } "
            f"RETURN {self.node_id('s')} AS frontierId, {node} AS node, degree, links, "
            f"[m IN near | [{self.node_id('m')}, [p IN $vectorProperties | m[p]]]] AS reached"
        )

    def edges_among(self, rel_types: Sequence[str], ids: str = "$nodeIds") -> str:
        """``type``, ``fromId``, ``toId`` of the relationships of ``rel_types`` among the visible nodes
        of ``ids``."""
        return (
            "CALL { " + self.sought("n", ids) + "RETURN collect(n) AS among } "
            f"UNWIND among AS a MATCH (a)-[r{self.rel_pattern(rel_types)}]->(b) WHERE b IN among "
            f"RETURN type(r) AS type, {self.node_id('a')} AS fromId, {self.node_id('b')} AS toId"
        )

    def count(self, rel_types: Sequence[str]) -> str:
        """``nodes``: the tenant's mapped nodes with an id, whoever may see them; ``edges``: the
        relationships of ``rel_types`` from one of them to another (one per type and pair of nodes)."""
        own = f"{self.tenant('n')} AND {self.has_id('n')}"
        branches = " UNION ".join(f"MATCH (n:{quoted(label)}) WHERE {own} RETURN n" for label in self.mapping.labels)
        out = (
            f"MATCH (n)-[r{self.rel_pattern(rel_types)}]->(m) WHERE {self.has_label('m')} "
            f"AND {self.tenant('m')} AND {self.has_id('m')} RETURN count(DISTINCT [type(r), m]) AS out"
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
            f"RETURN {self.node_id('m')} AS memberId, {self.meta('c')} AS cluster, size"
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
