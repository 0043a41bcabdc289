"""The embedder-identity rule, the same on every backend.

A profile's embedder identity (embedder name + dimension) belongs to the index and is shared by all
its tenants. A load with another identity is refused with a ConfigurationError naming both identities
and the tenants that still hold vectors of the recorded one, unless every such tenant is replaced by
that load; then the new identity is recorded. A refused load writes nothing.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator, Sequence

import pytest

from brain_graph.core.errors import ConfigurationError
from brain_graph.core.filters import SeedFilter
from brain_graph.stores import EmbeddingMismatchError, ProfileIndexInfo, VectorQuery
from tests.conformance.conftest import Harness


@pytest.fixture
def profile(harness: Harness) -> Iterator[str]:
    """A profile id of this test only (its Weaviate collection is deleted afterwards)."""
    profile_id = f"ident{uuid.uuid4().hex[:8]}.work"
    yield profile_id
    harness.backend.admin.drop_profiles([profile_id])


def load(
    harness: Harness,
    profile: str,
    tenants: Sequence[str],
    embedder: str,
    dimension: int,
    *,
    replace: bool = True,
    title: str = "old",
) -> None:
    """One node ``n`` per tenant with a vector of ``profile``."""
    nodes = [harness.node(tenant, "n", title=title) for tenant in tenants]
    vectors = [harness.vector(node, [1.0] + [0.0] * (dimension - 1), profile) for node in nodes]
    info = [ProfileIndexInfo(profile, embedder, dimension)]
    harness.backend.load(nodes, [], vectors, info, replace=replace)


def hits(harness: Harness, profile: str, tenant: str, embedder: str, dimension: int) -> list[tuple[str, float]]:
    query = [VectorQuery(profile, [1.0] + [0.0] * (dimension - 1), embedder)]
    found = harness.backend.vector_index.query(query, scope=harness.scope(tenant), seed_filter=SeedFilter(), top_k=5)
    return [(hit.node_id, hit.score) for hit in found]


def titles(harness: Harness, tenant: str) -> list[str | None]:
    return [node.title for node in harness.backend.graph_store.get_nodes(["n"], scope=harness.scope(tenant))]


def conflict(old: str, old_dim: int, new: str, new_dim: int, holders: Sequence[str]) -> str:
    """The pattern of the refusal: both identities, then the holders."""
    names = ", ".join(repr(holder) for holder in holders)
    return re.escape(
        f"the index records embedder {old!r} (dimension {old_dim}), this load has {new!r} (dimension {new_dim}); "
        f"tenant(s) {names} still hold vectors of the recorded embedder"
    )


@pytest.mark.parametrize(("embedder", "dimension"), [("emb-2", 4), ("emb-1", 6), ("emb-2", 6)])
def test_another_identity_is_refused_while_another_tenant_holds_vectors(
    harness: Harness, profile: str, embedder: str, dimension: int
) -> None:
    load(harness, profile, ["t1"], "emb-1", 4)
    with pytest.raises(ConfigurationError, match=conflict("emb-1", 4, embedder, dimension, [harness.t("t1")])):
        load(harness, profile, ["t2"], embedder, dimension, title="new")
    # nothing was written, and the other tenant searches as before (no mismatch, no raw error)
    assert titles(harness, "t2") == []
    assert hits(harness, profile, "t2", "emb-1", 4) == []
    assert hits(harness, profile, "t1", "emb-1", 4) == [("n", 1.0)]
    assert titles(harness, "t1") == ["old"]


def test_a_merge_load_of_the_holder_itself_is_refused(harness: Harness, profile: str) -> None:
    load(harness, profile, ["t1"], "emb-1", 4)
    with pytest.raises(ConfigurationError, match=conflict("emb-1", 4, "emb-2", 4, [harness.t("t1")])):
        load(harness, profile, ["t1"], "emb-2", 4, replace=False, title="new")
    assert titles(harness, "t1") == ["old"]
    assert hits(harness, profile, "t1", "emb-1", 4) == [("n", 1.0)]


def test_holders_are_named_in_order(harness: Harness, profile: str) -> None:
    load(harness, profile, ["t2", "t1", "t3"], "emb-1", 4)
    holders = [harness.t("t1"), harness.t("t3")]
    with pytest.raises(ConfigurationError, match=conflict("emb-1", 4, "emb-2", 4, holders)):
        load(harness, profile, ["t2"], "emb-2", 4)


@pytest.mark.parametrize(("embedder", "dimension"), [("emb-2", 4), ("emb-2", 6)])
def test_replacing_every_holder_records_the_new_identity(
    harness: Harness, profile: str, embedder: str, dimension: int
) -> None:
    load(harness, profile, ["t1", "t2"], "emb-1", 4)
    load(harness, profile, ["t1", "t2"], embedder, dimension, title="new")
    for tenant in ("t1", "t2"):
        assert hits(harness, profile, tenant, embedder, dimension) == [("n", 1.0)]
        assert titles(harness, tenant) == ["new"]
    with pytest.raises(EmbeddingMismatchError):
        hits(harness, profile, "t1", "emb-1", 4)
    # a tenant loaded later must use the new identity
    with pytest.raises(
        ConfigurationError, match=conflict(embedder, dimension, "emb-1", 4, [harness.t(t) for t in ("t1", "t2")])
    ):
        load(harness, profile, ["t3"], "emb-1", 4)


def test_tenants_without_vectors_of_the_profile_do_not_hold_it(harness: Harness, profile: str) -> None:
    load(harness, profile, ["t1"], "emb-1", 4)
    harness.backend.load([harness.node("t2", "bare")], [], [], [ProfileIndexInfo(profile, "emb-1", 4)], replace=True)
    load(harness, profile, ["t1"], "emb-2", 4)  # t2 has nodes but no vectors: only t1 holds the profile
    assert hits(harness, profile, "t1", "emb-2", 4) == [("n", 1.0)]
