"""The embedder-identity rule, the same on every backend.

A profile's embedder identity (embedder name + dimension) belongs to the index and is shared by all
its tenants. A query must match it (:func:`check_query_matches`). A load with another identity is
refused (:func:`profile_conflict`) unless every tenant holding vectors of the profile is replaced by
that load; then the new identity is recorded (re-indexing the profile).
"""

from __future__ import annotations

from collections.abc import Sequence

from brain_graph.core.errors import ConfigurationError
from brain_graph.stores.base import ProfileIndexInfo, VectorQuery


class EmbeddingMismatchError(ConfigurationError):
    """A query vector does not match the embedder or dimension a profile was indexed with."""

    code = "EMBEDDING_MISMATCH"


def check_query_matches(query: VectorQuery, indexed: ProfileIndexInfo | None) -> None:
    """Raise :class:`EmbeddingMismatchError` unless ``query`` fits the indexed profile (or none is indexed)."""
    if indexed is None:
        return
    if len(query.vector) != indexed.dimension or query.embedder_name != indexed.embedder_name:
        raise EmbeddingMismatchError(
            f"profile {query.profile_id}: the query was embedded by {query.embedder_name!r} (dimension "
            f"{len(query.vector)}), the index was built by {indexed.embedder_name!r} (dimension "
            f"{indexed.dimension}); configure the same embedder, or re-index: brain-graph index --full"
        )


def profile_conflict(
    recorded: ProfileIndexInfo, loading: ProfileIndexInfo, holders: Sequence[str]
) -> ConfigurationError:
    """The error of a load that would change a profile's embedder identity while ``holders`` (tenants
    this load does not replace) still hold vectors of the recorded one."""
    shown = ", ".join(repr(tenant[:80]) for tenant in holders[:5])
    more = f" and {len(holders) - 5} more" if len(holders) > 5 else ""
    return ConfigurationError(
        f"profile {loading.profile_id}: the index records embedder {recorded.embedder_name!r} "
        f"(dimension {recorded.dimension}), this load has {loading.embedder_name!r} (dimension "
        f"{loading.dimension}); tenant(s) {shown}{more} still hold vectors of the recorded embedder: "
        "replace them in the same load, or drop them, to re-index the profile"
    )


def identity_change_refused(recorded: ProfileIndexInfo, given: ProfileIndexInfo) -> EmbeddingMismatchError:
    """The error of an incremental write (:meth:`~brain_graph.stores.base.StorageBackend.apply`) whose
    vectors were made by another embedder than the one the profile records."""
    return EmbeddingMismatchError(
        f"profile {given.profile_id}: the index records embedder {recorded.embedder_name!r} (dimension "
        f"{recorded.dimension}), these vectors come from {given.embedder_name!r} (dimension {given.dimension}); "
        "re-index every tenant of the profile with the new embedder: brain-graph index --full"
    )
