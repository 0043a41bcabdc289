"""brain-graph's MCP server: the ``brain_search``, ``search_nodes``, ``get_node`` and ``neighbours``
tools over streamable HTTP at ``/brain/mcp`` on the LangGraph server, behind its bearer tokens and
tenant rules (see docs/mcp.md)."""

from brain_graph.serving.mcp.app import MCP_PATH, BrainMCP, create_mcp_app
from brain_graph.serving.mcp.tools import build_mcp_server

__all__ = ["MCP_PATH", "BrainMCP", "build_mcp_server", "create_mcp_app"]
