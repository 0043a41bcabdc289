"""The Neo4j half of the Neo4j + Weaviate backend: one client (:mod:`.client`), the search reads
(:mod:`.graph`), the generations (:mod:`.generations`) and every Cypher statement (:mod:`.cypher`)."""

from brain_graph.stores.neo4j_weaviate.neo4j.client import Neo4jClient
from brain_graph.stores.neo4j_weaviate.neo4j.generations import Flip, Neo4jGenerations
from brain_graph.stores.neo4j_weaviate.neo4j.graph import Neo4jGraphStore

__all__ = ["Flip", "Neo4jClient", "Neo4jGenerations", "Neo4jGraphStore"]
