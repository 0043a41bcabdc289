"""What the search steps share: the typed state, request validation, the step binding to LangGraph
(dependencies from the runtime context), the services and their configuration, and the ranking."""
