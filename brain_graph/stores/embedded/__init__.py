"""The embedded default backend: one SQLite file holding nodes, edges and vectors.

No server is needed. Every load is checked first (:func:`~brain_graph.stores.write_checks.check_load`), then
written in one SQLite transaction, so a refused, failing or interrupted load leaves the previous
contents intact (:mod:`.writes`). Profiles follow the embedder-identity rule of
:mod:`brain_graph.stores.identity`: one identity per profile for all tenants. Visibility is filtered in
SQL (:func:`brain_graph.stores.access.sql_visible`). Vector search is exact: each tenant's vectors of
a profile are held in memory as a numpy matrix (read once per data version of the file, in a
process-wide cache bounded by ``BRAIN_GRAPH_VECTOR_CACHE_MB``), scanned with one float32
matrix-vector product, and the candidates that could rank in the top ``topK`` are re-scored with the
reference float64 formula (:mod:`.vectors`). Read connections are reused between reads
(:mod:`.connections`).
"""

from brain_graph.stores.embedded.settings import STORE_FILE_NAME, EmbeddedSettings, from_environment
from brain_graph.stores.embedded.store import EmbeddedStore

__all__ = ["STORE_FILE_NAME", "EmbeddedSettings", "EmbeddedStore", "from_environment"]
