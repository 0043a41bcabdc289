"""The Weaviate half of the Neo4j + Weaviate backend, by concern: names (:mod:`.naming`), error
classification (:mod:`.errors`), the client and its loop thread (:mod:`.client`), collections and the
profile cache (:mod:`.schema`), search and re-scoring (:mod:`.search`), writes (:mod:`.writes`), and
the index that combines them (:mod:`.index`)."""

from brain_graph.stores.neo4j_weaviate.weaviate.index import WeaviateVectorIndex
from brain_graph.stores.neo4j_weaviate.weaviate.schema import VectorIndexKind

__all__ = ["VectorIndexKind", "WeaviateVectorIndex"]
