"""Serving the graphs: the LangGraph server entry points, its auth handler, GraphQL, the remote
client and the LangChain retriever."""
