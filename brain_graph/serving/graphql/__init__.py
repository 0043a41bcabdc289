"""The ``brainSearch`` GraphQL query (ariadne), resolved by invoking the compiled brain_search graph.

- :mod:`.schema`: the committed SDL (``schema.graphql``) bound to its resolver and the ``JSON`` scalar.
- :mod:`.errors`: stable ``extensions.code`` values and the error formatter.
- :mod:`.app`: the ASGI app (bearer tokens, rate limits), mounted at ``/graphql`` on the LangGraph
  server and runnable alone (``uvicorn brain_graph.serving.graphql.app:app``).
"""

from brain_graph.serving.graphql.app import create_graphql_app
from brain_graph.serving.graphql.schema import SCHEMA_PATH, build_schema

__all__ = ["SCHEMA_PATH", "build_schema", "create_graphql_app"]
