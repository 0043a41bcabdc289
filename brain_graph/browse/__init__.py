"""The read-only graph API over a backend: a node with its relationships, a node's neighbours page by
page, nodes by title and words. Shared by the HTTP routes and the MCP tools (:mod:`brain_graph.serving`)."""
