"""The lowest layer: errors, vocabulary, text handling, the wire format and its contracts, principals
and access scopes, environment settings. It imports nothing else of brain-graph."""
