"""Content hashes: what a stored vector was made from.

A vector is current when the hash of (embedder identity, dimension, embedded text) is the one stored
with it, it carries the node's filter metadata (project, secured, ACL, facets) and its lexical document
(:attr:`~brain_graph.stores.base.VectorState.lexical`: a vector stored before lexical documents were
has none), and searches see it as stored (:attr:`~brain_graph.stores.base.VectorState.searchable`);
anything else is re-embedded. The lexical document is made of the node id and the embedded text, so
the hash covers it.
"""

from __future__ import annotations

import hashlib

from brain_graph.stores.base import NodeRecord, ProfileIndexInfo, VectorState, node_facets

HASH_CHARS = 32  # 128 bits of sha256


def content_hash(identity: ProfileIndexInfo, text: str) -> str:
    """The hash of a profile's embedder identity and dimension and the text it embeds."""
    digest = hashlib.sha256()
    for part in (identity.embedder_name, str(identity.dimension), text):
        encoded = part.encode("utf-8", "surrogatepass")
        digest.update(len(encoded).to_bytes(8, "big"))
        digest.update(encoded)
    return digest.hexdigest()[:HASH_CHARS]


def is_current(state: VectorState | None, node: NodeRecord, text_hash: str, *, lexical: bool = True) -> bool:
    """Whether a stored vector needs no new embedding for ``node`` (same hash, same filter metadata,
    a lexical document when ``lexical`` says it has a non-empty one, searchable)."""
    return (
        state is not None
        and state.searchable
        and (state.lexical or not lexical)
        and state.content_hash == text_hash
        and state.project_key == node.project_key
        and state.secured == node.secured
        and tuple(sorted(state.acl)) == tuple(sorted(node.acl))
        and state.facets == node_facets(node)
    )
