"""One store-protocol suite, run against every backend.

``harness`` is parameterised over ``embedded`` (a temporary SQLite file) and ``neo4j-weaviate`` (the real
servers; marked ``integration``). Tests name logical tenants (``t1``, ``t2``); the harness maps them
to tenant ids unique to the test, so tests never see each other's data on the shared servers, and
drops them afterwards. Profile ids are unique to the session (their Weaviate collections are deleted
at the end).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from brain_graph.core.filters import SeedFilter
from brain_graph.core.security import AccessScope
from brain_graph.stores.base import (
    EdgeRecord,
    NodeRecord,
    ProfileIndexInfo,
    StorageBackend,
    VectorQuery,
    VectorRecord,
    node_facets,
)
from brain_graph.stores.embedded import EmbeddedStore
from tests.integration.servers import connect

RUN = uuid.uuid4().hex[:6]
WORK = f"conf{RUN}.work"
DOC = f"conf{RUN}.doc"
EMBEDDER = "conformance-embedder"
DIM = 4
PROFILES = (ProfileIndexInfo(WORK, EMBEDDER, DIM), ProfileIndexInfo(DOC, EMBEDDER, DIM))

BACKENDS = [
    pytest.param("embedded", id="embedded"),
    pytest.param("neo4j-weaviate", id="neo4j-weaviate", marks=pytest.mark.integration),
]


@pytest.fixture(scope="session")
def server_backend() -> Iterator[StorageBackend]:
    """One connection to the real servers for the whole session."""
    backend = connect()
    try:
        yield backend
    finally:
        backend.admin.drop_profiles([WORK, DOC])
        backend.close()


@dataclass
class Harness:
    """A backend plus tenant mapping and record builders."""

    backend: StorageBackend
    prefix: str
    tenants: set[str] = field(default_factory=set)

    def t(self, logical: str) -> str:
        """The physical tenant id of a logical tenant."""
        physical = self.prefix + logical
        self.tenants.add(physical)
        return physical

    def scope(self, logical: str, identities: Sequence[str] | None = None, *, all_secured: bool = False) -> AccessScope:
        ids = frozenset(identities) if identities is not None else None
        return AccessScope(self.t(logical), identities=ids, all_secured=all_secured)

    def node(
        self,
        tenant: str,
        node_id: str,
        node_type: str = "cdm.work_item",
        *,
        project: str | None = "P",
        secured: bool = False,
        acl: Sequence[str] = (),
        title: str | None = None,
        url: str | None = None,
        text: Mapping[str, str] | None = None,
        properties: Mapping[str, Any] | None = None,
        namespace: str | None = None,
        tags: Sequence[str] = (),
        updated_at: int | None = None,
    ) -> NodeRecord:
        return NodeRecord(
            tenant_id=self.t(tenant),
            node_id=node_id,
            node_type=node_type,
            project_key=project,
            title=title if title is not None else f"title {node_id}",
            url=url,
            secured=secured,
            acl=tuple(sorted(acl)),
            text=dict(text or {}),
            properties=dict(properties or {}),
            namespace=namespace,
            tags=tuple(sorted(set(tags))),
            updated_at=updated_at,
        )

    def edge(self, tenant: str, edge_type: str, source: str, target: str, **properties: Any) -> EdgeRecord:
        return EdgeRecord(self.t(tenant), edge_type, source, target, properties)

    @staticmethod
    def vector(node: NodeRecord, vector: Sequence[float], profile: str = WORK, lexical: str = "") -> VectorRecord:
        """The node's vector in ``profile``, with its facets (and ``lexical`` document)."""
        return VectorRecord(
            node.tenant_id,
            node.node_id,
            profile,
            node.project_key,
            node.secured,
            node.acl,
            list(vector),
            lexical=lexical,
            facets=node_facets(node),
        )

    def load(
        self,
        nodes: Sequence[NodeRecord],
        edges: Sequence[EdgeRecord] = (),
        vectors: Sequence[VectorRecord] = (),
        *,
        replace: bool = True,
    ) -> None:
        self.backend.load(nodes, edges, vectors, PROFILES, replace=replace)

    def query(
        self,
        scope: AccessScope,
        vector: Sequence[float],
        *,
        profiles: Sequence[str] = (WORK,),
        project_key: str | None = None,
        top_k: int = 10,
        seed_filter: SeedFilter | None = None,
    ) -> list[tuple[str, str, float]]:
        """(profile, node, score) of the hits, in the order returned (``seed_filter`` replaces ``project_key``)."""
        queries = [VectorQuery(profile, list(vector), EMBEDDER) for profile in profiles]
        chosen = seed_filter if seed_filter is not None else SeedFilter(project_key=project_key)
        hits = self.backend.vector_index.query(queries, scope=scope, seed_filter=chosen, top_k=top_k)
        return [(hit.profile_id, hit.node_id, hit.score) for hit in hits]


@pytest.fixture(params=BACKENDS)
def harness(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Harness]:
    """A fresh, empty view of one backend."""
    if request.param == "embedded":
        backend: StorageBackend = EmbeddedStore(tmp_path / "store.sqlite3")
    else:
        backend = request.getfixturevalue("server_backend")
    harness = Harness(backend, prefix=f"cf{uuid.uuid4().hex[:8]}-")
    try:
        yield harness
    finally:
        if harness.tenants:
            backend.admin.drop_tenants(sorted(harness.tenants))
