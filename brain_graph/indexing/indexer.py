"""The incremental indexer: each profile's vectors brought in step with the graph.

For each (tenant, profile) it reads the stored vectors' states once, then pages through the tenant's
nodes of the profile's types (:data:`PAGE_SIZE` at a time, so memory stays bounded whatever the
size): a node whose content hash and filter metadata match its vector, which searches see as stored,
is left alone; a new or changed node is embedded (in batches; a text the embedder fails on is reported
``pending`` and keeps no stale vector); a node without text loses its vector. A stored vector that
searches do not see as stored (:attr:`~brain_graph.stores.base.VectorState.searchable`: what an
interrupted write can leave) is embedded and written anew, so a run after a killed one converges.
Vectors left over at the end belong to nodes that are gone (or no longer of the profile's types) and
are deleted: the reconciliation. Each page is written as one :class:`~brain_graph.stores.base.ChangeSet`.

A profile whose configured embedder differs from the recorded one is re-indexed only by a full run
over every tenant (``full=True`` without a tenant list): its vectors are dropped, then rebuilt;
anything else is an :class:`~brain_graph.stores.identity.EmbeddingMismatchError` naming both.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from brain_graph.core.contracts import MAX_TENANT_CHARS, identifier_problem
from brain_graph.core.errors import InvalidRequestError, shown
from brain_graph.embedding.profiles import EmbeddingProfile, ProfileRegistry
from brain_graph.indexing.changes import vector_changes
from brain_graph.indexing.report import IndexReport
from brain_graph.stores.base import ChangeSet, StorageBackend, VectorKey
from brain_graph.stores.identity import EmbeddingMismatchError

PAGE_SIZE = 1_000  # nodes read, and vectors written, per change
DELETE_BATCH = 1_000

Progress = Callable[[int], None]  # called with the number of nodes just examined


def checked_ids(field: str, values: Sequence[str] | None) -> list[str] | None:
    """``values`` (tenant or profile ids) as a list, or ``None``; a single string (it would be read as
    one id per character), a non-list or an item that is not a string is an
    :class:`InvalidRequestError` naming the field."""
    if values is None:
        return None
    if isinstance(values, str | bytes | bytearray) or not isinstance(values, Iterable):
        raise InvalidRequestError(field, f"must be a list of ids, not a single {type(values).__name__}")
    items = list(values)
    for position, item in enumerate(items):
        if not isinstance(item, str):
            raise InvalidRequestError(f"{field}.{position}", f"must be a string (got {type(item).__name__})")
    return items


def check_tenant_ids(tenants: Sequence[str]) -> None:
    """Refuse a tenant id that search would refuse (the same identifier rule: not blank, at most
    :data:`~brain_graph.core.contracts.MAX_TENANT_CHARS` characters, no white space at either end, no
    control, format, surrogate or line-separator character) with an :class:`InvalidRequestError`
    naming ``tenants.<position>``."""
    for position, tenant in enumerate(tenants):
        problem = identifier_problem(tenant, MAX_TENANT_CHARS)
        if problem is not None:
            raise InvalidRequestError(f"tenants.{position}", f"{problem} (got {shown(tenant)})")


@dataclass(frozen=True)
class IndexPlan:
    """What a run covers: tenants, profiles, whether everything is re-embedded, and which profiles are
    re-indexed from scratch (their embedder changed)."""

    tenants: tuple[str, ...]
    profiles: tuple[EmbeddingProfile, ...]
    full: bool
    reindexed: tuple[str, ...] = ()

    def work(self) -> list[tuple[str, EmbeddingProfile]]:
        """The (tenant, profile) pairs, in the order a run takes them."""
        return [(tenant, profile) for tenant in self.tenants for profile in self.profiles]


class Indexer:
    """Brings vectors in step with the graph of a backend (see the module docstring)."""

    def __init__(self, backend: StorageBackend, profiles: ProfileRegistry) -> None:
        self.backend = backend
        self.profiles = profiles

    def plan(
        self, tenants: Sequence[str] | None = None, profile_ids: Sequence[str] | None = None, *, full: bool = False
    ) -> IndexPlan:
        """Resolve and check what a run covers (malformed tenant ids, unknown profiles and identity
        changes are refused here, before anything is read or written)."""
        tenants = checked_ids("tenants", tenants)
        profile_ids = checked_ids("profiles", profile_ids)
        if tenants:
            check_tenant_ids(tenants)
        chosen = (
            tuple(self.profiles.get(p) for p in sorted(set(profile_ids))) if profile_ids else self.profiles.profiles
        )
        # every stored tenant only when none is named (listing them reads the whole store's index)
        names = tuple(sorted(set(tenants))) if tenants else tuple(self.backend.index_store.tenants())
        recorded = self.backend.index_store.recorded_profiles()
        reindexed = []
        for profile in chosen:
            configured = self.profiles.identity(profile)
            previous = recorded.get(profile.profile_id)
            if previous is None or previous == configured:
                continue
            if not full or tenants:
                raise EmbeddingMismatchError(
                    f"profile {profile.profile_id}: the index records embedder {previous.embedder_name!r} (dimension "
                    f"{previous.dimension}), the configured one is {configured.embedder_name!r} (dimension "
                    f"{configured.dimension}); re-index every tenant with: brain-graph index --full"
                    + (f" --profile {profile.profile_id}" if profile_ids else "")
                )
            reindexed.append(profile.profile_id)
        return IndexPlan(names, tuple(chosen), full, tuple(reindexed))

    def total_nodes(self, plan: IndexPlan) -> int:
        """How many node examinations a plan makes (the total of its progress)."""
        store = self.backend.index_store
        return sum(store.count_nodes(tenant, profile.node_types) for tenant, profile in plan.work())

    def run(
        self,
        tenants: Sequence[str] | None = None,
        profile_ids: Sequence[str] | None = None,
        *,
        full: bool = False,
        progress: Progress | None = None,
    ) -> IndexReport:
        """Index (see the module docstring); returns the counts."""
        return self.execute(self.plan(tenants, profile_ids, full=full), progress=progress)

    def execute(self, plan: IndexPlan, *, progress: Progress | None = None) -> IndexReport:
        """Run a plan: drop the re-indexed profiles, then index each (tenant, profile)."""
        started = time.perf_counter()
        if plan.reindexed:
            self.backend.admin.drop_profiles(plan.reindexed)
        report = IndexReport()
        for tenant, profile in plan.work():
            report.add(self.index_profile(tenant, profile, full=plan.full, progress=progress))
        report.seconds = time.perf_counter() - started
        return report

    def index_profile(
        self, tenant: str, profile: EmbeddingProfile, *, full: bool = False, progress: Progress | None = None
    ) -> IndexReport:
        """Bring one tenant's vectors of one profile in step with its nodes."""
        started = time.perf_counter()
        store = self.backend.index_store
        states = {state.node_id: state for state in store.vector_states(tenant, profile.profile_id)}
        report = IndexReport()
        after: str | None = None
        while True:
            page = store.node_page(tenant, node_types=profile.node_types, after=after, limit=PAGE_SIZE)
            if not page:
                break
            after = page[-1].node_id
            self._write(vector_changes(page, profile, self.profiles, states, full=full, report=report))
            if progress is not None:
                progress(len(page))
        leftover = sorted(states)  # vectors whose node is gone or no longer of the profile's types
        for start in range(0, len(leftover), DELETE_BATCH):
            keys = [
                VectorKey(tenant, profile.profile_id, node_id) for node_id in leftover[start : start + DELETE_BATCH]
            ]
            self._write(ChangeSet(delete_vectors=keys))
            report.deleted += len(keys)
        report.seconds = time.perf_counter() - started
        return report

    def _write(self, changes: ChangeSet) -> None:
        if changes:
            self.backend.apply(changes)
