"""The vector changes that bring nodes in step with their embedding profiles."""

from __future__ import annotations

from collections.abc import MutableMapping, Sequence

from brain_graph.core.bm25 import lexical_document
from brain_graph.embedding.profiles import EmbeddingProfile, ProfileRegistry, profile_text
from brain_graph.indexing.batches import embed_texts
from brain_graph.indexing.hashing import content_hash, is_current
from brain_graph.indexing.report import IndexReport
from brain_graph.stores.base import ChangeSet, NodeRecord, VectorKey, VectorRecord, VectorState, node_facets

EMBED_BATCH = 64  # texts per embedder call


def vector_changes(
    nodes: Sequence[NodeRecord],
    profile: EmbeddingProfile,
    registry: ProfileRegistry,
    states: MutableMapping[str, VectorState],
    *,
    full: bool,
    report: IndexReport,
) -> ChangeSet:
    """The vector changes that bring ``nodes`` in step in ``profile``: new and changed nodes embedded
    (all of them when ``full``), vectors of nodes without text (or of another type) deleted, and the
    stale vector of a changed node the embedder failed on deleted (the node is counted ``pending``; a
    current vector is kept when re-embedding it fails). ``truncated`` counts the embedded texts cut
    to the profile's ``max_chars`` plus those the embedder cuts to its input limit.
    A stored vector that searches do not see as stored (not ``searchable``) is re-embedded and both
    deleted and upserted, so the change writes it anew: a store may keep an upserted vector equal to
    the stored one where it is (Weaviate does not index it again), which would leave it unreachable.
    ``states`` (the stored vectors' states by node id) loses the entries of ``nodes``; ``report``
    gets the counts."""
    identity = registry.identity(profile)
    deletes: list[VectorKey] = []
    rewritten: set[str] = set()  # unsearchable: deleted, then written again
    work: list[tuple[NodeRecord, str, str, bool]] = []
    for node in nodes:
        state = states.pop(node.node_id, None)
        text, cut = profile_text(node, profile) if node.node_type in profile.node_types else ("", False)
        if not text:
            if state is not None:
                deletes.append(VectorKey(node.tenant_id, profile.profile_id, node.node_id))
                report.deleted += 1
            continue
        text_hash = content_hash(identity, text)
        # a stored vector without a document is stale unless its document would be empty (an id and a
        # text without letters or digits); the document is made only then, not for every current vector
        lexical = state is not None and not state.lexical and bool(lexical_document(node.node_id, text))
        if not full and is_current(state, node, text_hash, lexical=lexical):
            report.unchanged += 1
            continue
        work.append((node, text, text_hash, cut))
        if state is not None and not is_current(state, node, text_hash, lexical=lexical):
            deletes.append(VectorKey(node.tenant_id, profile.profile_id, node.node_id))  # stale: gone if not replaced
            if not state.searchable:
                rewritten.add(node.node_id)
    upserts: list[VectorRecord] = []
    embedder = registry.embedders[profile.embedder_id]
    for start in range(0, len(work), EMBED_BATCH):
        batch = work[start : start + EMBED_BATCH]
        done = embed_texts(
            embedder, [text for _, text, _, _ in batch], dimension=profile.dimension, profile_id=profile.profile_id
        )
        report.truncated += done.truncated
        for (node, text, text_hash, cut), row in zip(batch, done.rows, strict=True):
            if row is None:
                report.pending += 1
                continue
            report.truncated += int(cut)
            upserts.append(
                VectorRecord(
                    node.tenant_id,
                    node.node_id,
                    profile.profile_id,
                    node.project_key,
                    node.secured,
                    node.acl,
                    row,
                    text_hash,
                    lexical_document(node.node_id, text),
                    node_facets(node),
                )
            )
    report.embedded += len(upserts)
    written = {record.node_id for record in upserts}
    deletes = [key for key in deletes if key.node_id not in written or key.node_id in rewritten]
    return ChangeSet(upsert_vectors=upserts, delete_vectors=deletes, profiles=[identity] if upserts else [])
