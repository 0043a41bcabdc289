"""A mapped profile's vectors in a Neo4j vector index (a graph built by neo4j-graphrag, LangChain's
``Neo4jVector`` or LlamaIndex keeps them there): read in read transactions, never written."""

from __future__ import annotations

from collections.abc import Sequence

from brain_graph.core.errors import ConfigurationError
from brain_graph.stores.mapped.cypher import MappedStatements, quoted
from brain_graph.stores.mapped.mapping import Neo4jVectors
from brain_graph.stores.neo4j_weaviate.neo4j.client import Neo4jClient

SHOW_INDEX = (
    "SHOW VECTOR INDEXES YIELD name, labelsOrTypes, properties, options WHERE name = $index "
    "RETURN labelsOrTypes, properties, options"
)


class Neo4jIndexSource:
    """:class:`~brain_graph.stores.mapped.sources.VectorSource` over ``CALL db.index.vector.queryNodes``."""

    def __init__(self, client: Neo4jClient, statements: MappedStatements, config: Neo4jVectors) -> None:
        self._client = client
        self.config = config
        self.profile_id = config.profile
        prop = quoted(config.property)
        tenant = statements.tenant("n")
        self._nearest = (
            "CALL db.index.vector.queryNodes($index, $limit, $vector) YIELD node AS n "
            f"WITH n WHERE {tenant} AND {statements.has_id('n')} "
            f"RETURN {statements.node_id('n')} AS id, n.{prop} AS vector"
        )
        self._vectors_of = (
            statements.seek("n", "$nodeIds") + f"WITH n WHERE {tenant} AND n.{prop} IS NOT NULL "
            f"RETURN {statements.node_id('n')} AS id, n.{prop} AS vector"
        )
        self._fixed = statements.mapping.tenant.fixed
        self._dimension: int | None = None
        self._labels: tuple[str, ...] | None = None

    def _params(self, tenant_id: str, **values: object) -> dict[str, object]:
        return {"tenantId": tenant_id, "fixedTenant": self._fixed, **values}

    def query_parameters(self, vector: Sequence[float], limit: int) -> dict[str, object]:
        """This source's entry of :meth:`MappedStatements.candidates`'s ``$indexQueries``."""
        return {
            "profile": self.profile_id,
            "index": self.config.index,
            "limit": limit,
            "vector": [float(x) for x in vector],
            "property": self.config.property,
        }

    def nearest(self, vector: Sequence[float], *, tenant_id: str, limit: int) -> list[tuple[str, list[float]]]:
        self.dimension()  # a missing index is a configuration error, not an empty result
        params = self._params(tenant_id, index=self.config.index, limit=limit, vector=[float(x) for x in vector])
        rows = self._client.read(self._nearest, params)
        return [(row["id"], list(row["vector"])) for row in rows if isinstance(row["vector"], list)]

    def vectors_of(self, node_ids: Sequence[str], *, tenant_id: str) -> dict[str, list[float]]:
        if not node_ids:
            return {}
        rows = self._client.read(self._vectors_of, self._params(tenant_id, nodeIds=list(dict.fromkeys(node_ids))))
        return {row["id"]: list(row["vector"]) for row in rows if isinstance(row["vector"], list)}

    def dimension(self) -> int | None:
        if self._labels is None:
            rows = self._client.read(SHOW_INDEX, {"index": self.config.index})
            if not rows:
                raise ConfigurationError(
                    f"vectors.{self.profile_id}.index: Neo4j has no vector index {self.config.index!r}"
                )
            config = rows[0]["options"].get("indexConfig", {})
            self._dimension = int(config.get("vector.dimensions") or 0) or None
            self._labels = tuple(str(label) for label in rows[0]["labelsOrTypes"] or ())
        return self._dimension

    def held(self) -> dict[str, object]:
        """Which nodes hold this profile's vectors, as an entry of ``$untimedSources``
        (:meth:`MappedStatements.untimed_node`): those with one of the index's labels and its property
        (read with the dimension, once)."""
        self.dimension()
        return {"labels": list(self._labels or ()), "property": self.config.property}

    def close(self) -> None:
        """The Neo4j client is the backend's; nothing of its own to release."""
