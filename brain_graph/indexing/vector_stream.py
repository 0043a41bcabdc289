"""The vectors of a replace-load, made while they are written instead of all before.

:class:`VectorStream` yields, for each profile in turn, the vectors of the nodes its types cover in
the nodes' order, embedded a page at a time: the vectors :func:`brain_graph.indexing.dataset.embed_nodes`
returns, in the same order, without ever holding more than a page of them. Each is checked as
:func:`~brain_graph.stores.write_checks.check_load` checks vectors when it is made, so a writer that
takes the stream (:class:`~brain_graph.stores.base.StreamedLoad`) need not iterate it twice. Iterating
it to the end when the embedder failed on every text raises the :class:`DatasetError` of a load
that writes nothing: the writer's transaction is rolled back.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence

from brain_graph.core.errors import DatasetError
from brain_graph.embedding.profiles import EmbeddingProfile, ProfileRegistry
from brain_graph.indexing.changes import vector_changes
from brain_graph.indexing.report import IndexReport
from brain_graph.indexing.spool import RecordSpool
from brain_graph.stores.base import NodeRecord, VectorRecord
from brain_graph.stores.write_checks import check_vector, record_tenants

PAGE_SIZE = 1_000  # nodes embedded per batch of progress

Progress = Callable[[int], None]


def all_failed_error(report: IndexReport) -> DatasetError | None:
    """The error of a load whose embedder failed on every text (``None`` when it did not)."""
    if report.pending and not report.embedded:
        return DatasetError(
            f"the embedder failed on every text ({report.pending} node(s)); nothing was written: check the "
            "embedder (its error is logged) and load again"
        )
    return None


def _covered(nodes: Sequence[NodeRecord], profile: EmbeddingProfile) -> Iterable[NodeRecord]:
    """The nodes of the profile's types, in order (read from disk only when of those types)."""
    if isinstance(nodes, RecordSpool):
        return nodes.of_kinds(profile.node_types)
    return (n for n in nodes if n.node_type in profile.node_types)


def profile_pages(nodes: Sequence[NodeRecord], profile: EmbeddingProfile) -> Iterator[list[NodeRecord]]:
    """The nodes a profile covers, :data:`PAGE_SIZE` at a time."""
    page: list[NodeRecord] = []
    for node in _covered(nodes, profile):
        page.append(node)
        if len(page) == PAGE_SIZE:
            yield page
            page = []
    if page:
        yield page


def made_vectors(
    nodes: Sequence[NodeRecord], registry: ProfileRegistry, report: IndexReport, progress: Progress | None = None
) -> Iterator[VectorRecord]:
    """Every node's vectors of every profile covering its type (see the module docstring); nodes with
    no text are skipped, a node the embedder fails on is counted ``pending`` in ``report``."""
    for profile in registry.profiles:
        for page in profile_pages(nodes, profile):
            yield from vector_changes(page, profile, registry, {}, full=True, report=report).upsert_vectors
            if progress is not None:
                progress(len(page))


class VectorStream:
    """The checked vectors of ``nodes``, made as they are iterated (see the module docstring)."""

    checked = True  # each vector is checked as it is made

    def __init__(
        self,
        nodes: Sequence[NodeRecord],
        registry: ProfileRegistry,
        report: IndexReport,
        progress: Progress | None = None,
    ) -> None:
        self.nodes = nodes
        self.registry = registry
        self.report = report
        self.progress = progress
        self.tenants = frozenset(record_tenants(nodes))  # the tenants its vectors can be of

    def __iter__(self) -> Iterator[VectorRecord]:
        dimensions = {info.profile_id: info.dimension for info in map(self.registry.identity, self.registry.profiles)}
        for vector in made_vectors(self.nodes, self.registry, self.report, self.progress):
            check_vector(vector, dimensions)
            yield vector
        error = all_failed_error(self.report)
        if error is not None:
            raise error
