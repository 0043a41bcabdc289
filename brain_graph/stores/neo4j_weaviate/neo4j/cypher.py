"""Every Cypher statement of the Neo4j graph store.

All values are parameters. The only interpolated text is relationship types: one in the per-type
edge MERGE and DELETE, and a search's edge types in the patterns of the statements that follow edges
(:func:`rel_types`); each is validated with :func:`brain_graph.core.vocabulary.check_edge_type` first
(the cluster membership type is a constant of :mod:`brain_graph.core.vocabulary`).
Every MATCH names the tenant on both ends, so no statement can cross tenants.

Generations: a tenant's data is a set of ``:BrainNode`` of one ``generation``; the pointer
``(:BrainTenant {tenantId, generation, nextGeneration})`` names the one searches see. Every read joins
the pointer in the same statement (:data:`TENANT` then ``n.generation = t.generation``), so a read
sees exactly one generation, and a tenant without a pointer (or whose pointer has no generation yet)
has no data. A replace-load writes a new generation (:data:`TAKE_GENERATIONS`), then flips the pointer
(:data:`FLIP`), then deletes the older generations (:data:`DELETE_OLDER`).

Visibility is :func:`brain_graph.stores.access.cypher_visible` (the access rule in Cypher, with the
parameters of :func:`~brain_graph.stores.access.cypher_params`).

Design notes and measurements: docs/internals/neo4j-statements.md.
"""

from __future__ import annotations

from functools import lru_cache
from typing import LiteralString

from brain_graph.core.vocabulary import IN_CLUSTER, check_edge_type
from brain_graph.stores.access import cypher_visible as visible

LABEL = "BrainNode"
MEMBERSHIP: LiteralString = f"[:{check_edge_type(IN_CLUSTER)}]"

# The index every lookup of a node by id seeks (``USING INDEX SEEK <var>:`` + this): the node key,
# nodeId first, so a seek hint can only be met by seeking the ids (a range of the leading property
# alone would be a scan, which the hint rules out), never a whole (tenantId, generation) range.
NODE_KEY: LiteralString = "BrainNode(nodeId, tenantId, generation)"


# -- schema ----------------------------------------------------------------------------------

SCHEMA: tuple[LiteralString, ...] = (
    # A (tenantId, nodeId) key cannot hold: nodes of two generations share a nodeId.
    "DROP CONSTRAINT brain_node_key IF EXISTS",
    "CREATE CONSTRAINT brain_tenant_key IF NOT EXISTS FOR (t:BrainTenant) REQUIRE t.tenantId IS UNIQUE",
    "CREATE CONSTRAINT brain_profile_epoch_key IF NOT EXISTS FOR (e:BrainProfileEpoch) REQUIRE e.profileId IS UNIQUE",
    # One copies clock: concurrent first drops must not MERGE two (reads would pick either).
    "CREATE CONSTRAINT brain_copies_clock_key IF NOT EXISTS FOR (c:BrainCopiesClock) REQUIRE c.key IS UNIQUE",
    # The node key, nodeId first (see NODE_KEY); a (tenantId, generation, nodeId) key is dropped only
    # once this one exists, so uniqueness is enforced throughout.
    "CREATE CONSTRAINT brain_node_id_key IF NOT EXISTS "
    "FOR (n:BrainNode) REQUIRE (n.nodeId, n.tenantId, n.generation) IS UNIQUE",
    "DROP CONSTRAINT brain_node_generation_key IF EXISTS",
    "CREATE INDEX brain_node_generation IF NOT EXISTS FOR (n:BrainNode) ON (n.tenantId, n.generation)",
    "CREATE INDEX brain_node_type IF NOT EXISTS FOR (n:BrainNode) ON (n.nodeType)",
    "CREATE INDEX brain_node_tenant IF NOT EXISTS FOR (n:BrainNode) ON (n.tenantId)",
    # Pages of a generation in id order (write side): an index range, never a scan and sort.
    "CREATE INDEX brain_node_sort IF NOT EXISTS FOR (n:BrainNode) ON (n.tenantId, n.generation, n.sortKey)",
    # Reads hint these indexes: wait until a new one is ONLINE (populating on a large database).
    "CALL db.awaitIndexes(300)",
)

# -- generations -----------------------------------------------------------------------------

# A fresh generation per tenant, atomically (the SET reads what it writes, so Neo4j takes the write
# lock first: concurrent loads get distinct numbers). Tenants are sorted by the caller (lock order).
TAKE_GENERATIONS: LiteralString = (
    "UNWIND $tenants AS tenantId "
    "MERGE (t:BrainTenant {tenantId: tenantId}) "
    "SET t.nextGeneration = coalesce(t.nextGeneration, 0) + 1 "
    "RETURN tenantId, t.nextGeneration AS generation"
)

CURRENT_GENERATIONS: LiteralString = (
    "UNWIND $tenants AS tenantId "
    "MATCH (t:BrainTenant {tenantId: tenantId}) WHERE t.generation IS NOT NULL "
    "RETURN tenantId, t.generation AS generation"
)

CURRENT_GENERATION: LiteralString = "MATCH (t:BrainTenant {tenantId: $tenantId}) RETURN t.generation AS generation"

# The switch: each pointer moves to the row's generation only if that is newer (monotonic, so a slow
# load never hides a newer one) and was taken after the tenant's last drop (``droppedThrough``: a load
# a drop overtook is not made visible), in one transaction for all tenants of a load. Returns the
# current generation after it (null: dropped), whether legacy nodes (no ``generation``) may remain,
# and the last generation a drop covered.
# A pointer that moves also records when its generation's vector copies started (``row.clock``, see
# VECTOR COPIES below); one that stays keeps its own.
FLIP: LiteralString = (
    "UNWIND $rows AS row "
    "MATCH (t:BrainTenant {tenantId: row.tenantId}) "
    "WITH row, t, coalesce(t.generation, 0) < row.generation "
    "AND coalesce(t.droppedThrough, 0) < row.generation AS moves "
    "SET t.generation = CASE WHEN moves THEN row.generation ELSE t.generation END, "
    "t.vectorCopiesClock = CASE WHEN moves THEN row.clock ELSE t.vectorCopiesClock END, "
    "t.vectorCopiesGeneration = CASE WHEN moves THEN row.generation ELSE t.vectorCopiesGeneration END "
    "RETURN row.tenantId AS tenantId, t.generation AS current, t.legacyRemoved IS NULL AS legacy, "
    "coalesce(t.droppedThrough, 0) AS droppedThrough"
)

# The tenants of a load a drop overtook: dropped after the load read or took its generation.
DROPPED_SINCE: LiteralString = (
    "UNWIND $rows AS row "
    "MATCH (t:BrainTenant {tenantId: row.tenantId}) WHERE coalesce(t.droppedThrough, 0) >= row.generation "
    "RETURN row.tenantId AS tenantId"
)

# -- writes ----------------------------------------------------------------------------------

# Generations older than the current one (never the current one, never a newer one being staged).
DELETE_OLDER: LiteralString = (
    "MATCH (n:BrainNode) USING INDEX SEEK n:BrainNode(tenantId, generation) "
    "WHERE n.tenantId = $tenantId AND n.generation < $current "
    "WITH n LIMIT $batch DETACH DELETE n RETURN count(*) AS deleted"
)

# Legacy nodes (no ``generation`` property): invisible, removed once per tenant.
DELETE_LEGACY: LiteralString = (
    "MATCH (n:BrainNode) USING INDEX n:BrainNode(tenantId) "
    "WHERE n.tenantId = $tenantId AND n.generation IS NULL "
    "WITH n LIMIT $batch DETACH DELETE n RETURN count(*) AS deleted"
)

LEGACY_REMOVED: LiteralString = "MATCH (t:BrainTenant {tenantId: $tenantId}) SET t.legacyRemoved = true"

# A drop: the pointer stays as a tombstone (no current generation, ``nextGeneration`` kept, so numbers
# are never taken twice) recording the last generation taken so far; the nodes of those generations
# (and legacy nodes) are then deleted, never those of a load that took its generation after.
TOMBSTONE_POINTERS: LiteralString = (
    "MATCH (t:BrainTenant) WHERE t.tenantId IN $tenants "
    "SET t.generation = null, t.droppedThrough = coalesce(t.nextGeneration, 0), t.legacyRemoved = true "
    "RETURN t.tenantId AS tenantId, t.droppedThrough AS through"
)

DELETE_DROPPED: LiteralString = (
    "UNWIND $rows AS row MATCH (n:BrainNode) USING INDEX n:BrainNode(tenantId) WHERE n.tenantId = row.tenantId "
    "AND (n.generation IS NULL OR n.generation <= row.through) "
    "WITH n LIMIT $batch DETACH DELETE n RETURN count(*) AS deleted"
)

MERGE_NODES: LiteralString = (
    "UNWIND $rows AS row "
    "MERGE (n:BrainNode {tenantId: row.tenantId, generation: row.generation, nodeId: row.nodeId}) "
    "SET n.sortKey = row.sortKey, n.nodeType = row.nodeType, n.projectKey = row.projectKey, n.title = row.title, "
    "n.url = row.url, "
    "n.secured = row.secured, n.acl = row.acl, n.text = row.text, n.properties = row.properties, "
    "n.namespace = row.namespace, n.tags = row.tags, n.updatedAt = row.updatedAt, n.heads = row.heads"
)


def merge_edges(edge_type: str) -> str:
    """MERGE of edges of one type (the type is validated, then interpolated: Cypher cannot bind it)."""
    safe = check_edge_type(edge_type)
    return (
        "UNWIND $rows AS row "
        # WHERE + SEEK hints: the lookup of ``b`` must be a seek per row, never a scan.
        "MATCH (a:BrainNode) USING INDEX SEEK a:" + NODE_KEY + " "
        "WHERE a.tenantId = row.tenantId AND a.generation = row.generation AND a.nodeId = row.fromNodeId "
        "MATCH (b:BrainNode) USING INDEX SEEK b:" + NODE_KEY + " "
        "WHERE b.tenantId = row.tenantId AND b.generation = row.generation AND b.nodeId = row.toNodeId "
        f"MERGE (a)-[r:`{safe}`]->(b) "
        "SET r.properties = row.properties "
        "RETURN count(*) AS merged"  # rows whose two ends exist (the rest are not written)
    )


# -- loads: one tenant and generation per statement ($tenantId, $generation) -------------------
# Rows are lists, not maps (no keys to encode per row): a node is [nodeId, sortKey, nodeType,
# projectKey, title, url, secured, acl, text, properties, namespace, tags, updatedAt, heads, copies]
# (copies: the properties of its vector copies, VECTOR COPIES, written with it), an edge [fromNodeId,
# toNodeId, properties].
# Into a fresh generation nothing exists yet: nodes and edges are CREATEd (no lookup, no scan of a
# node's relationships; the caller gives each node and edge once); into an existing one, MERGEd.

_LOAD_NODE_FIELDS: LiteralString = (
    "SET n.sortKey = row[1], n.nodeType = row[2], n.projectKey = row[3], n.title = row[4], n.url = row[5], "
    "n.secured = row[6], n.acl = row[7], n.text = row[8], n.properties = row[9], n.namespace = row[10], "
    "n.tags = row[11], n.updatedAt = row[12], n.heads = row[13], n += row[14]"
)
CREATE_LOAD_NODES: LiteralString = (
    "UNWIND $rows AS row CREATE (n:BrainNode {tenantId: $tenantId, generation: $generation, nodeId: row[0]}) "
    + _LOAD_NODE_FIELDS
)
MERGE_LOAD_NODES: LiteralString = (
    "UNWIND $rows AS row MERGE (n:BrainNode {tenantId: $tenantId, generation: $generation, nodeId: row[0]}) "
    + _LOAD_NODE_FIELDS
)


def load_edges(edge_type: str, *, fresh: bool) -> str:
    """CREATE (``fresh``) or MERGE of a load's edges of one type (validated, then interpolated); an
    edge whose ends are not both nodes of the generation is not written."""
    safe = check_edge_type(edge_type)
    return (
        "UNWIND $rows AS row "
        "MATCH (a:BrainNode) USING INDEX SEEK a:" + NODE_KEY + " "
        "WHERE a.tenantId = $tenantId AND a.generation = $generation AND a.nodeId = row[0] "
        "MATCH (b:BrainNode) USING INDEX SEEK b:" + NODE_KEY + " "
        "WHERE b.tenantId = $tenantId AND b.generation = $generation AND b.nodeId = row[1] "
        f"{'CREATE' if fresh else 'MERGE'} (a)-[r:`{safe}`]->(b) SET r.properties = row[2]"
    )


# -- vector copies -----------------------------------------------------------------------------
# Each node keeps a copy of each of its vectors (float32 bytes, with the vector's own secured flag and
# ACL) in properties named after the profile (:mod:`brain_graph.stores.neo4j_weaviate.neo4j.vector_copies`), so each
# hop of a search is scored in the statement that reads its links instead of in a Weaviate round of
# its own. Weaviate stays the vector index. A load writes the copies after its nodes, a change in its
# transaction (rolled back with it). A search trusts copies only where they match Weaviate:
# - a generation made by a replace-load or by a change records the copies clock read before anything
#   was written to it (``vectorCopiesClock``, with ``vectorCopiesGeneration``); one whose load had a
#   vector without its node (written to Weaviate, no copy) records none;
# - a write that could leave the copies apart from Weaviate (a merge-load of vectors, which is not
#   atomic; a change whose commit or restore failed; a drop of the tenant) clears the record first;
# - dropping a profile's vectors (a profile drop, a re-index, a new embedder identity) moves the clock
#   and stamps the profile with it (``droppedAt``), before and after, and a profile's copies count
#   only in a generation whose record is at least its stamp.
# Without a record (one of the cases above, or a generation that has no copies) the hop is scored by
# Weaviate; the next replace-load of the tenant trusts copies again.
# A writer killed between its Weaviate writes and its commit clears nothing: the indexer finds the
# copies apart from the Weaviate objects (COPY_STATES: a copy missing, or made from another content
# hash) and writes those vectors anew. The design: docs/internals/neo4j-weaviate-backend.md.

COPIES_PREFIX: LiteralString = "vector:"  # a copy's float32 bytes
SECURED_PREFIX: LiteralString = "vectorSecured:"  # the vector's own secured flag (the Weaviate object's)
ACL_PREFIX: LiteralString = "vectorAcl:"  # the vector's own ACL
HASH_PREFIX: LiteralString = "vectorHash:"  # the vector's content hash (the Weaviate object's)


def copy_states(nodes: LiteralString) -> LiteralString:
    """The tenant's current generation, whether the copies of ``$profileId`` count in it (as a search
    decides, :data:`COPIED_PROFILES`) and, when they do, ``[nodeId, hash]`` of each node of the
    ``nodes`` clause (a MATCH of ``n`` in generation ``g``) that holds a copy of that profile (hash
    null: a copy without a content hash). One row; none without a pointer."""
    return (
        "MATCH (t:BrainTenant {tenantId: $tenantId}) OPTIONAL MATCH (e:BrainProfileEpoch {profileId: $profileId}) "
        "WITH t, t.generation AS g, coalesce(t.vectorCopiesGeneration = t.generation "
        "AND coalesce(e.droppedAt, 0) <= t.vectorCopiesClock, false) AS counted "
        "CALL (g, counted) { " + nodes + "AND counted AND n[$securedName] IS NOT NULL "
        "RETURN collect([n.nodeId, n[$hashName]]) AS copies } "
        "RETURN g AS generation, counted, copies"
    )


COPY_STATES: LiteralString = copy_states(
    "MATCH (n:BrainNode) USING INDEX SEEK n:BrainNode(tenantId, generation) "
    "WHERE n.tenantId = $tenantId AND n.generation = g "
)
COPY_STATES_OF: LiteralString = copy_states(
    "MATCH (n:BrainNode) USING INDEX SEEK n:" + NODE_KEY + " "
    "WHERE n.tenantId = $tenantId AND n.generation = g AND n.nodeId IN $nodeIds "
)

# Tenants whose current generation's copies must not be trusted any more (a write that could leave
# them apart from Weaviate: a merge-load of vectors, a change whose outcome is unknown, a drop).
UNTRUST_COPIES: LiteralString = (
    "UNWIND $tenants AS tenantId MATCH (t:BrainTenant {tenantId: tenantId}) SET t.vectorCopiesGeneration = null"
)

COPIES_CLOCK: LiteralString = "OPTIONAL MATCH (c:BrainCopiesClock {key: 'clock'}) RETURN coalesce(c.value, 0) AS clock"

DROP_COPIES: LiteralString = (
    "MERGE (c:BrainCopiesClock {key: 'clock'}) SET c.value = coalesce(c.value, 0) + 1 "
    "WITH c UNWIND $profiles AS profileId MERGE (e:BrainProfileEpoch {profileId: profileId}) "
    "SET e.droppedAt = c.value"
)

# The copies of a load's vectors (rows ``[nodeId, {property: bytes}]``) into its tenant and generation.
SET_LOAD_COPIES: LiteralString = (
    "UNWIND $rows AS row MATCH (n:BrainNode) USING INDEX SEEK n:" + NODE_KEY + " "
    "WHERE n.tenantId = $tenantId AND n.generation = $generation AND n.nodeId = row[0] SET n += row[1]"
)

# -- changes (apply: statements of ONE transaction) --------------------------------------------

# The pointers of the changed tenants, write-locked for the transaction (the first SET takes the lock
# before the generation is read, so concurrent changes of a tenant queue here), with the generation the
# change goes to: the current one, or for a tenant with upserts and no current generation a fresh one,
# made current right here (``fresh``: the flip is this transaction's commit; until then, reads see the
# tenant without data). A tenant with deletions only and no pointer gets none. This is the only
# statement of the transaction that touches pointers: a second one (a separate flip) deadlocks with a
# concurrent change queued on the lock. A fresh generation records the copies clock read here, before
# the change writes anything (see VECTOR COPIES).
LOCK_POINTERS: LiteralString = (
    "OPTIONAL MATCH (c:BrainCopiesClock {key: 'clock'}) WITH coalesce(c.value, 0) AS clock "
    "UNWIND $rows AS row "
    "OPTIONAL MATCH (found:BrainTenant {tenantId: row.tenantId}) "
    "WITH clock, row WHERE found IS NOT NULL OR row.upsert "
    "MERGE (t:BrainTenant {tenantId: row.tenantId}) "
    "SET t.nextGeneration = coalesce(t.nextGeneration, 0) "
    "WITH clock, row, t, row.upsert AND t.generation IS NULL AS fresh "
    "WITH clock, row, t, fresh, t.nextGeneration + CASE WHEN fresh THEN 1 ELSE 0 END AS next "
    "SET t.nextGeneration = next, t.generation = CASE WHEN fresh THEN next ELSE t.generation END, "
    "t.vectorCopiesClock = CASE WHEN fresh THEN clock ELSE t.vectorCopiesClock END, "
    "t.vectorCopiesGeneration = CASE WHEN fresh THEN next ELSE t.vectorCopiesGeneration END "
    "RETURN row.tenantId AS tenantId, t.generation AS generation, fresh, t.legacyRemoved IS NULL AS legacy"
)


def _row_node(var: LiteralString, node_id: LiteralString) -> LiteralString:
    """MATCH of node ``var`` of the row's tenant and generation whose id is ``row.<node_id>``."""
    return (
        f"MATCH ({var}:BrainNode) USING INDEX SEEK {var}:{NODE_KEY} "
        f"WHERE {var}.tenantId = row.tenantId AND {var}.generation = row.generation AND {var}.nodeId = row.{node_id} "
    )


def delete_edges(edge_type: str) -> str:
    """DELETE of edges of one type matched by their ends (type validated, then interpolated). Both ends
    are sought by the node key, then the edge between them in a subquery importing both, so it is an
    expansion into the two nodes, checked from the end with fewer edges: a hub's edges of the type are
    never all read to delete one of them."""
    safe = check_edge_type(edge_type)
    return (
        "UNWIND $rows AS row "
        + _row_node("a", "fromNodeId")
        + _row_node("b", "toNodeId")
        + f"CALL (a, b) {{ MATCH (a)-[r:`{safe}`]->(b) DELETE r }}"
    )


DELETE_NODES: LiteralString = "UNWIND $rows AS row " + _row_node("n", "nodeId") + "DETACH DELETE n"

# The rows (tenantId, generation, nodeId) that are nodes: which end of an edge is missing (error path).
EXISTING_NODES: LiteralString = (
    "UNWIND $rows AS row " + _row_node("n", "nodeId") + "RETURN row.tenantId AS tenantId, n.nodeId AS nodeId"
)

# Vector copies set or removed (null) by a change.
# Rows are lists [nodeId, {property: value}, tenantId, generation] (batched by size: a copy is bytes).
SET_COPIES: LiteralString = (
    "UNWIND $rows AS row MATCH (n:BrainNode) USING INDEX SEEK n:" + NODE_KEY + " "
    "WHERE n.tenantId = row[2] AND n.generation = row[3] AND n.nodeId = row[0] SET n += row[1]"
)

# The filter metadata of nodes (read in an apply's transaction: vectors take it from the graph).
NODE_FILTERS: LiteralString = (
    "UNWIND $rows AS row " + _row_node("n", "nodeId") + "RETURN row.tenantId AS tenantId, n.nodeId AS nodeId, "
    "n.projectKey AS projectKey, n.secured AS secured, n.acl AS acl"
)

# -- reads -----------------------------------------------------------------------------------
# Every read joins the tenant's pointer, then enters the graph through the node key (NODE_KEY) with
# a USING INDEX SEEK hint, so the plan never depends on index statistics (a plan cached on an empty
# database, or made from stale statistics, would scan). Then it expands, keeping to the same generation.

TENANT: LiteralString = "MATCH (t:BrainTenant {tenantId: $tenantId}) "


def seek(var: LiteralString, ids: LiteralString) -> LiteralString:
    """MATCH of node ``var`` of the current generation whose id is ``ids`` (an expression)."""
    return (
        f"MATCH ({var}:BrainNode) USING INDEX SEEK {var}:{NODE_KEY} "
        f"WHERE {var}.tenantId = $tenantId AND {var}.generation = t.generation AND {var}.nodeId {ids} "
    )


def same_generation(var: LiteralString) -> LiteralString:
    """The predicate keeping node ``var`` to the tenant and its current generation."""
    return f"{var}.tenantId = $tenantId AND {var}.generation = t.generation"


# A node's metadata: every property but ``text`` (read by GET_TEXTS alone).
META_MAP: LiteralString = (
    "{.tenantId, .nodeId, .nodeType, .projectKey, .title, .url, .secured, .acl, .properties, .namespace, .tags, "
    ".updatedAt}"
)

GET_NODES: LiteralString = (
    TENANT + seek("n", "IN $nodeIds") + "AND " + visible("n") + " RETURN n " + META_MAP + " AS node"
)

GET_TEXTS: LiteralString = (
    TENANT + seek("n", "IN $nodeIds") + "AND " + visible("n") + " RETURN n.nodeId AS nodeId, n.text AS text"
)


def passage_source(var: LiteralString) -> LiteralString:
    """``[nodeId, nodeType, heads, text]`` of node ``var`` for passages: its stored heads when usable
    (this encoding, and not ``$wholeTexts``) and no text, else no heads and its text. The text is never
    read to check the heads against it (see :mod:`brain_graph.core.passage_heads`)."""
    usable = f"{var}.heads IS NOT NULL AND NOT $wholeTexts AND {var}.heads STARTS WITH $headsPrefix"
    return (
        f"[{var}.nodeId, {var}.nodeType, CASE WHEN {usable} THEN {var}.heads END, "
        f"CASE WHEN {usable} THEN null ELSE {var}.text END]"
    )


GET_PASSAGE_HEADS: LiteralString = (
    TENANT + seek("n", "IN $nodeIds") + "AND " + visible("n") + " RETURN " + passage_source("n") + " AS source"
)


# Edge types: the statements that follow edges are made for a search's sorted, distinct edge types,
# which are validated (check_edge_type) and written into their patterns (:func:`rel_types`), so a node
# is expanded over those types only: edges of types a search does not follow are never read. The hub
# tests read degrees from the store, never expanding: first the degree of all types (one read, an
# upper bound), then, only when that is too high, the degree of the types. ``type(r) IN $edgeTypes``
# stays (the parameter is the list the pattern was made of). Neo4j caches a plan per statement, so per
# set of edge types a search uses.
STATEMENTS_CACHED = 256  # statements kept per kind (sets of edge types)


def rel_types(edge_types: tuple[str, ...]) -> str:
    """The type part of a relationship pattern for ``edge_types`` (``:`A`|`B```, each validated), empty
    without types (the statements then read no edges: ``size($edgeTypes) > 0`` guards them)."""
    return ":" + "|".join(f"`{check_edge_type(edge_type)}`" for edge_type in edge_types) if edge_types else ""


# The links of each frontier node (matched by tenant; deduplicated by the caller) and its degree
# (distinct visible neighbours other than itself over the edge types, either direction). A node with
# at most ``$maxDegree`` edges in the store (``getDegree`` of all types: one read of its degree, no
# expansion; an upper bound of its degree) cannot be a hub: its edges are expanded once, giving its
# links and its exact degree. Any other node's degree is first counted no further than
# ``$maxDegree + 1`` (DISTINCT then LIMIT stream: a hub's edges are not all read), and only a node of
# at most ``$maxDegree`` is then expanded for its links: a hub is counted, never collected (a small
# node skips the count, which would read each neighbour twice). The neighbour pattern has no label, so no index
# applies to it and the plan expands from the frontier node (with ``:BrainNode`` the planner seeks
# every node of the tenant and joins); the tests are UNWINDs of a list that is empty unless they
# hold, which the planner cannot move after the expansion.
def linked(var: str, edge_types: tuple[str, ...]) -> str:
    """MATCH of the edges of ``edge_types`` from node ``var`` to visible nodes ``n`` other than itself."""
    return (
        f"MATCH ({var})-[r{rel_types(edge_types)}]-(n) WHERE type(r) IN $edgeTypes AND n <> {var} AND "
        + same_generation("n")
        + " AND "
        + visible("n")
        + " "
    )


def frontier_links(sources: str, edge_types: tuple[str, ...]) -> str:
    """For each frontier node ``s`` (the rows of the ``sources`` clause, :func:`sought` or
    :func:`unwound`): its ``degree`` and ``links`` over ``edge_types`` (the subqueries described
    above); ``s``, ``degree`` and ``links`` are in scope after it."""
    return (
        sources + "WITH t, s, COUNT { (s)--() } <= $maxDegree AS small "
        "CALL (t, s, small) { UNWIND CASE WHEN small THEN [] ELSE [s] END AS large "
        + linked("large", edge_types)
        + "WITH DISTINCT n LIMIT $maxDegree + 1 RETURN count(n) AS counted } "
        "CALL (t, s, small, counted) { UNWIND CASE WHEN small OR counted <= $maxDegree THEN [s] ELSE [] END AS open "
        + linked("open", edge_types)
        + "RETURN collect([type(r), n.nodeId, startNode(r) = open]) AS links, count(DISTINCT n) AS seen } "
        "WITH t, s, CASE WHEN small THEN seen ELSE counted END AS degree, links "
    )


def sought(ids: str) -> str:
    """Frontier rows ``s``: the visible nodes of the current generation whose ids are the list expression
    ``ids`` (an invisible id is no frontier: its edges are never read)."""
    return "UNWIND " + ids + " AS sourceId " + seek("s", "= sourceId") + "AND " + visible("s") + " "


def unwound(nodes: str) -> str:
    """Frontier rows ``s``: the nodes of the list expression ``nodes`` (already sought)."""
    return "UNWIND " + nodes + " AS s "


@lru_cache(maxsize=STATEMENTS_CACHED)
def links(edge_types: tuple[str, ...]) -> str:
    """The links of each node of ``$frontier`` over ``edge_types``: ``frontierId, degree, links`` rows."""
    return TENANT + frontier_links(sought("$frontier"), edge_types) + "RETURN s.nodeId AS frontierId, degree, links"


def edges_within(nodes: str, edge_types: tuple[str, ...]) -> str:
    """The edges ``(a)-[r]->(b)`` of ``edge_types`` whose two ends are in the list variable ``nodes``
    (nodes already sought in the tenant's current generation); ``a``, ``r`` and ``b`` are in scope after
    it. The degrees it tests are read from the store (``getDegree``), never expanded.

    The far end is tested by identity (``b IN nodes``), not by its properties: the list holds only
    nodes of the tenant's current generation, and no property is read. ``b`` has no label: with
    ``:BrainNode`` the planner seeks every ``b`` and hash-joins, whose memory grows with the square of
    the ids.

    A source with at least |nodes| x |types| out-edges in the store (all types: one read of its
    degree per source, an upper bound of its out-edges of ``edge_types``), an admitted hub, is joined
    to each other ``b`` of the list, which Neo4j checks from the end with fewer edges, so the hub's
    out-edges are never all read. Both ways give the same edges; the test only chooses the cheaper.
    A hub's self-loops, found by their count (out + in - either direction, of ``edge_types``), are
    read only when it has one: matching a node to itself reads all its edges. The hub tests are
    UNWINDs of a list that is empty unless the test holds, which the planner cannot move after the
    expansion."""
    types = rel_types(edge_types)
    hub = f"out >= size({nodes}) * size($edgeTypes)"
    loop = f"COUNT {{ (a)-[{types}]->() }} + COUNT {{ (a)<-[{types}]-() }} > COUNT {{ (a)-[{types}]-() }}"
    return (
        f"UNWIND CASE WHEN size($edgeTypes) > 0 THEN {nodes} ELSE [] END AS a "
        f"WITH {nodes}, a, COUNT {{ (a)-->() }} AS out "
        f"CALL ({nodes}, a, out) {{ "
        f"WITH a WHERE NOT {hub} "
        f"MATCH (a)-[r{types}]->(b) WHERE type(r) IN $edgeTypes AND b IN {nodes} "
        "RETURN r, b "
        "UNION ALL "
        f"UNWIND CASE WHEN {hub} THEN [a] ELSE [] END AS hub "
        f"UNWIND {nodes} AS b WITH hub, b WHERE b <> hub "
        f"MATCH (hub)-[r{types}]->(b) WHERE type(r) IN $edgeTypes "
        "RETURN r, b "
        "UNION ALL "
        f"UNWIND CASE WHEN {hub} AND {loop} THEN [a] ELSE [] END AS hub "
        f"MATCH (hub)-[r{types}]->(hub) WHERE type(r) IN $edgeTypes "
        "RETURN r, hub AS b } "
    )


def clusters_of(members: LiteralString) -> LiteralString:
    """The visible clusters (of the cluster node type) of the visible nodes matching ``members`` (an
    ``IN`` condition on their ids), one row per cluster ``c`` with ``members`` (their ids) and ``size``,
    its visible members counted by expanding from the cluster.

    Neither the cluster nor the counted members carry a label in the pattern (as in :func:`linked`):
    with ``:BrainNode`` the planner may read the ``(tenantId, generation)`` index once per cluster and
    join (its choice while index statistics are stale, right after a load). Without a label only an
    expansion from the matched node is cheap, whatever the statistics."""
    return (
        seek("m", members) + "AND " + visible("m") + " MATCH (m)-" + MEMBERSHIP + "->(c) "
        "WHERE " + same_generation("c") + " AND c.nodeType = $clusterType AND " + visible("c") + " "
        "WITH t, c, collect(m.nodeId) AS members "
        "WITH c, members, size([(c)<-"
        + MEMBERSHIP
        + "-(x) WHERE "
        + same_generation("x")
        + " AND "
        + visible("x")
        + " | 1]) AS size "
    )


@lru_cache(maxsize=STATEMENTS_CACHED)
def edges_among(edge_types: tuple[str, ...]) -> str:
    """The edges of ``edge_types`` among the visible nodes of ``$nodeIds`` (:func:`edges_within`)."""
    return (
        TENANT
        + "CALL (t) { "
        + seek("n", "IN $nodeIds")
        + "AND "
        + visible("n")
        + " RETURN collect(n) AS among } "
        + edges_within("among", edge_types)
        + "RETURN type(r) AS edgeType, a.nodeId AS fromNodeId, b.nodeId AS toNodeId, r.properties AS properties"
    )


# Clusters (visible, of the cluster node type) the given visible nodes belong to, with the number of
# visible members of each cluster (counted by expanding from the cluster). The metadata of clusters in
# ``$known`` is not returned.
CLUSTER_MEMBERSHIPS: LiteralString = (
    TENANT + clusters_of("IN $nodeIds") + "UNWIND members AS memberId "
    "RETURN memberId, c.nodeId AS clusterId, size, "
    "CASE WHEN c.nodeId IN $known THEN null ELSE c " + META_MAP + " END AS cluster"
)

# -- combined reads of a search (SearchReads) ---------------------------------------------------
# Each is ONE statement answering several reads above, in subqueries that aggregate without a grouping
# key (so each yields exactly one row, empty lists included) and the same predicates as the single reads.


def links_of(sources: str, edge_types: tuple[str, ...]) -> str:
    """The :func:`links` of the frontier rows of the ``sources`` clause (:func:`sought`,
    :func:`unwound`), collected as ``[frontierId, degree, links]`` rows."""
    return frontier_links(sources, edge_types) + "RETURN collect([s.nodeId, degree, links]) AS links"


# The profiles of ``$profiles`` whose vector copies count in the tenant's current generation (see
# VECTOR COPIES): one row, ``copied``.
COPIED_PROFILES: LiteralString = (
    "CALL (t) { UNWIND CASE WHEN t.vectorCopiesGeneration = t.generation THEN $profiles ELSE [] END AS p "
    "OPTIONAL MATCH (e:BrainProfileEpoch {profileId: p}) "
    "WITH t, p, coalesce(e.droppedAt, 0) AS droppedAt WHERE droppedAt <= t.vectorCopiesClock "
    "RETURN collect(p) AS copied } "
)


# Node ``v``'s copy of profile ``p`` when the vector's own access metadata lets the caller see it
# (the rule Weaviate applies to the object), else null.
COPY_IF_VISIBLE: LiteralString = (
    "head([m IN [{tenantId: v.tenantId, secured: v[$securedPrefix + p], acl: v[$aclPrefix + p]}] | "
    "CASE WHEN v[$copiesPrefix + p] IS NOT NULL AND " + visible("m") + " THEN v[$copiesPrefix + p] END])"
)


def reached_copies(scored: LiteralString) -> LiteralString:
    """After ``t``, ``links`` (collected :func:`links_of` rows) and ``copied`` (:data:`COPIED_PROFILES`):
    ``trusted``, ``copied`` emptied when the links reach more than ``$maxCopied`` nodes (a bound on the
    bytes of the statement's result, :func:`.vector_copies.max_copied`), and ``vectors``,
    the copies in those profiles of every node the links reach whose id is not in the list ``scored``
    (``[nodeId, [bytes or null per copied profile]]``, each node once, null where the node has no vector
    or the vector's access metadata hides it, :data:`COPY_IF_VISIBLE`)."""
    return (
        "CALL (links) { UNWIND links AS row UNWIND row[2] AS link WITH link[1] AS reachedId "
        "WHERE NOT reachedId IN " + scored + " RETURN collect(DISTINCT reachedId) AS reached } "
        "WITH *, CASE WHEN size(reached) <= $maxCopied THEN copied ELSE [] END AS trusted "
        "CALL (t, trusted, reached) { WITH t, trusted, CASE WHEN size(trusted) > 0 THEN reached ELSE [] END AS wanted "
        + seek("v", "IN wanted")
        + "RETURN collect([v.nodeId, [p IN trusted | "
        + COPY_IF_VISIBLE
        + "]]) AS vectors } "
    )


@lru_cache(maxsize=STATEMENTS_CACHED)
def seeds(edge_types: tuple[str, ...]) -> str:
    """The tenant's current generation (null without a pointer: the caller compares it with the one its
    vector search used), the metadata of the visible hits (GET_NODES), with ``edge_types`` the links
    of those visible hits (:func:`links`), and of ``$profiles`` those whose copies are trusted
    (``copied``, :data:`COPIED_PROFILES`) with the copies of the nodes the links reach other than the
    hits (:func:`reached_copies`). The hits are sought once; their links expand from the found nodes."""
    return (
        "OPTIONAL " + TENANT + "CALL (t) { " + seek("n", "IN $nodeIds") + "AND " + visible("n") + " "
        "RETURN collect(n) AS hits } "
        "CALL (t, hits) { "
        + links_of(unwound("CASE WHEN size($edgeTypes) > 0 THEN hits ELSE [] END"), edge_types)
        + " } "
        + COPIED_PROFILES
        + reached_copies("$nodeIds")
        + "RETURN t.generation AS generation, [n IN hits | n "
        + META_MAP
        + "] AS nodes, links, trusted AS copied, vectors"
    )


@lru_cache(maxsize=STATEMENTS_CACHED)
def hop(edge_types: tuple[str, ...]) -> str:
    """A later hop of a search: the :func:`links` of ``$frontier`` (collected) and, as in :func:`seeds`,
    the copies of the nodes they reach other than the frontier in the trusted profiles of ``$profiles``."""
    return (
        "OPTIONAL "
        + TENANT
        + "CALL (t) { "
        + links_of(sought("CASE WHEN size($edgeTypes) > 0 THEN $frontier ELSE [] END"), edge_types)
        + " } "
        + COPIED_PROFILES
        + reached_copies("$frontier")
        + "RETURN links, trusted AS copied, vectors"
    )


@lru_cache(maxsize=STATEMENTS_CACHED)
def context(edge_types: tuple[str, ...]) -> str:
    """After an expansion: the visible nodes of ``$newIds`` and of ``$knownIds`` are sought once
    (``among``; ``ids``: their ids), then the edges of ``edge_types``
    among them (:func:`edges_within`), the clusters of ``$members`` (CLUSTER_MEMBERSHIPS; records of
    ``$records`` and ``ids`` not returned), the texts (GET_PASSAGE_HEADS) of ``cited``, the first
    ``$passages`` of ``$ranked`` among ``ids``, and last the metadata of the visible new nodes
    (GET_NODES), projected from the found nodes: the rows before carry nodes and ids, not metadata maps."""
    return (
        TENANT + "CALL (t) { " + seek("n", "IN $newIds") + "AND " + visible("n") + " "
        "RETURN collect(n) AS added } "
        "CALL (t) { " + seek("k", "IN $knownIds") + "AND " + visible("k") + " RETURN collect(k) AS known } "
        "WITH t, added, known + added AS among, [n IN known + added | n.nodeId] AS ids "
        "WITH t, added, among, ids, [id IN $ranked WHERE id IN ids][..$passages] AS cited "
        "CALL (among) { "
        + edges_within("among", edge_types)
        + "RETURN collect([type(r), a.nodeId, b.nodeId, r.properties]) AS edges } "
        "CALL (t, ids) { " + clusters_of("IN $members") + "RETURN collect([members, c.nodeId, size, "
        "CASE WHEN c.nodeId IN $records OR c.nodeId IN ids THEN null ELSE c " + META_MAP + " END]) AS clusters } "
        "CALL (among, cited) { UNWIND among AS p WITH p WHERE p.nodeId IN cited AND " + visible("p") + " "
        "RETURN collect(" + passage_source("p") + ") AS texts } "
        "RETURN [n IN added | n " + META_MAP + "] AS nodes, edges, clusters, cited, texts"
    )


# -- write-side reads (IndexStore) -----------------------------------------------------------

# A node's full record: its metadata and its text.
RECORD_MAP: LiteralString = (
    "{.tenantId, .nodeId, .nodeType, .projectKey, .title, .url, .secured, .acl, .properties, .namespace, .tags, "
    ".updatedAt, .text}"
)

TENANTS_WITH_NODES: LiteralString = (
    "MATCH (t:BrainTenant) WHERE t.generation IS NOT NULL "
    "AND EXISTS { MATCH (n:BrainNode) WHERE n.tenantId = t.tenantId AND n.generation = t.generation } "
    "RETURN t.tenantId AS tenantId"
)

# One page in id order: a range of the (tenantId, generation, sortKey) index read in its order, filtered
# by type, stopped at the limit (no sort of the tenant). The planner reads the index in order only for
# a SEEK in a subquery ordered by every property of the index (otherwise it sorts the whole range, or
# scans the index of every tenant in order).
NODE_PAGE: LiteralString = (
    TENANT + "CALL (t) { MATCH (n:BrainNode) USING INDEX SEEK n:BrainNode(tenantId, generation, sortKey) "
    "WHERE n.tenantId = $tenantId AND n.generation = t.generation AND n.sortKey > $after "
    "AND n.nodeType IN $nodeTypes "
    "RETURN n ORDER BY n.tenantId, n.generation, n.sortKey LIMIT $limit } "
    "RETURN n " + RECORD_MAP + " AS node ORDER BY n.sortKey"
)

COUNT_TYPED: LiteralString = (
    TENANT + "MATCH (n:BrainNode) USING INDEX SEEK n:BrainNode(tenantId, generation) "
    "WHERE n.tenantId = $tenantId AND n.generation = t.generation AND n.nodeType IN $nodeTypes "
    "RETURN count(n) AS count"
)

GET_RECORDS: LiteralString = TENANT + seek("n", "IN $nodeIds") + "RETURN n " + RECORD_MAP + " AS node"

# -- inspection (tests, operations) ----------------------------------------------------------

COUNT_NODES: LiteralString = (
    "UNWIND $tenants AS tenantId MATCH (t:BrainTenant {tenantId: tenantId}) "
    "MATCH (n:BrainNode) USING INDEX SEEK n:BrainNode(tenantId, generation) "
    "WHERE n.tenantId = tenantId AND n.generation = t.generation RETURN count(n) AS count"
)
COUNT_EDGES: LiteralString = (
    "UNWIND $tenants AS tenantId MATCH (t:BrainTenant {tenantId: tenantId}) "
    "MATCH (a:BrainNode) USING INDEX SEEK a:BrainNode(tenantId, generation) "
    "WHERE a.tenantId = tenantId AND a.generation = t.generation "
    "MATCH (a)-[r]->(b:BrainNode) WHERE b.tenantId = a.tenantId AND b.generation = a.generation "
    "RETURN count(r) AS count"
)
STORED_GENERATIONS: LiteralString = (
    "MATCH (n:BrainNode) WHERE n.tenantId = $tenantId RETURN DISTINCT coalesce(n.generation, 0) AS generation"
)
