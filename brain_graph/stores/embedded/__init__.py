"""The embedded default backend: one SQLite file holding nodes, edges and vectors.

No server is needed. Every load is checked first (:func:`~brain_graph.write_checks.check_load`), then
written in one SQLite transaction, so a refused, failing or interrupted load leaves the previous
contents intact (:mod:`.writes`). Profiles follow the embedder-identity rule of
:mod:`brain_graph.stores.identity`: one identity per profile for all tenants. Visibility is filtered in
SQL (:func:`brain_graph.stores.access.sql_visible`). Vector search is an exact scan of the tenant's
vectors (fine up to tens of thousands of nodes; use the Neo4j + Weaviate backend beyond that).
"""

from brain_graph.stores.embedded.settings import STORE_FILE_NAME, EmbeddedSettings, from_environment
from brain_graph.stores.embedded.store import EmbeddedStore

__all__ = ["STORE_FILE_NAME", "EmbeddedSettings", "EmbeddedStore", "from_environment"]
