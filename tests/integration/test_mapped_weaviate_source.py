"""The mapped backend's Weaviate vector source on the real Weaviate, over collections "someone else"
wrote: created here with the official client (unique names, deleted at the end), then read through
:class:`~brain_graph.stores.mapped.weaviate_source.WeaviateSource`.

Two shapes: (1) no multi-tenancy, the tenant in a ``word``-tokenized property (so the filter also
matches a tenant whose value shares its tokens: ``acme corp`` for ``acme``) and two NAMED vectors;
(2) native multi-tenancy, Weaviate tenants ``team_{tenant}``, the default vector (as the current API
creates it, and the unnamed vector of older collections). Every test also checks the source wrote
nothing: the object counts, configs and tenants of the collections, and the collection list.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
import weaviate
from weaviate.classes.config import Configure, DataType, Property, Tokenization, VectorDistances
from weaviate.classes.tenants import Tenant, TenantActivityStatus

from brain_graph.core.errors import BackendUnavailableError, ConfigurationError
from brain_graph.stores.identity import EmbeddingMismatchError
from brain_graph.stores.mapped.mapping import WeaviateVectors, parse_mapping
from brain_graph.stores.mapped.sources import VectorSource
from brain_graph.stores.mapped.weaviate_source import QUERY_MAX_RESULTS, WeaviateSource
from tests.helpers import closed_port
from tests.integration.servers import server_settings, team_weaviate

pytestmark = pytest.mark.integration

DIM = 8
PROFILE = "cdm.doc.body"
ORIGIN = "mapping team"
RUN = uuid.uuid4().hex[:8]
NAMED = f"MappedNamed{RUN}"
TENANTS = f"MappedTenants{RUN}"
UNNAMED = f"MappedUnnamed{RUN}"
MISSING = f"MappedMissing{RUN}"
OURS = (NAMED, TENANTS, UNNAMED, MISSING)


@dataclass(frozen=True)
class Stored:
    """An object as written: its tenant, node id (None: no id property) and vector (None: none)."""

    tenant: str
    key: str | None
    vector: list[float] | None


def vec(rng: np.random.Generator) -> list[float]:
    return [float(x) for x in rng.standard_normal(DIM)]  # float64 values: Weaviate keeps float32


RNG = np.random.default_rng(20_240_611)
QUERY = vec(RNG)
NEAR_QUERY = [x + 0.01 for x in QUERY]  # nearer the query than any random vector

# (1) tenant property ``team`` (word tokenization), named vectors ``body`` (searched) and ``title``.
NAMED_OBJECTS = [
    *(Stored("acme", key, vec(RNG)) for key in ("k", "k-1", "k-2", "k-3")),
    Stored("acme", "k-novec", None),  # a title vector only
    Stored("acme", None, NEAR_QUERY),  # no id property, nearest of all
    Stored("acme corp", "k", NEAR_QUERY),  # the same node id in another tenant, matched by the filter
    *(Stored("acme corp", key, vec(RNG)) for key in ("c-1", "c-2")),
    *(Stored("beta", key, vec(RNG)) for key in ("b-1", "b-2", "b-3")),
]
# (2) Weaviate tenants team_{tenant}; other_acme is no brain-graph tenant's.
MT_OBJECTS = [
    *(Stored("team_acme", key, vec(RNG)) for key in ("a-1", "a-2", "a-3", "a-4")),
    Stored("team_acme", "a-novec", None),
    Stored("team_acme", None, NEAR_QUERY),
    Stored("team_beta", "a-1", NEAR_QUERY),
    *(Stored("team_beta", key, vec(RNG)) for key in ("b-1", "b-2")),
    Stored("other_acme", "a-2", NEAR_QUERY),
]


def f32(values: Any) -> np.ndarray[Any, np.dtype[np.float32]]:
    return np.asarray(values, dtype=np.float32)


def expected_nearest(objects: list[Stored], tenant: str, query: list[float]) -> list[tuple[str, list[float]]]:
    """The tenant's objects with an id and a vector, by cosine distance to ``query`` over the stored
    float32 vectors (no ties in this data), the vectors as Weaviate stores them."""
    found = [(o.key, f32(o.vector)) for o in objects if o.tenant == tenant and o.key is not None and o.vector]
    q = f32(query).astype(np.float64)

    def distance(stored: np.ndarray[Any, Any]) -> float:
        v = stored.astype(np.float64)
        return float(1 - v @ q / (np.linalg.norm(v) * np.linalg.norm(q)))

    ordered = sorted(found, key=lambda item: distance(item[1]))
    return [(str(key), [float(x) for x in stored]) for key, stored in ordered]


def stored_vectors(objects: list[Stored], tenant: str) -> dict[str, list[float]]:
    return {o.key: [float(x) for x in f32(o.vector)] for o in objects if o.tenant == tenant and o.key and o.vector}


def assert_same(found: list[tuple[str, list[float]]], expected: list[tuple[str, list[float]]]) -> None:
    assert [node_id for node_id, _ in found] == [node_id for node_id, _ in expected]
    for (_, got), (_, want) in zip(found, expected, strict=True):
        assert all(type(x) is float for x in got)
        assert np.array_equal(f32(got), f32(want))
        assert got == want  # float32 values, exactly


@pytest.fixture(scope="module")
def admin() -> Iterator[weaviate.WeaviateClient]:
    """The official client of "the team" that owns the collections; drops them at the end."""
    client = team_weaviate()
    try:
        create_named(client)
        create_tenants(client, TENANTS, legacy=False)
        create_tenants(client, UNNAMED, legacy=True)
        yield client
    finally:
        try:
            for name in OURS:
                client.collections.delete(name)
        finally:
            client.close()


def flat() -> Any:
    return Configure.VectorIndex.flat(distance_metric=VectorDistances.COSINE)  # exact: a known order


def create_named(client: weaviate.WeaviateClient) -> None:
    client.collections.create(
        NAMED,
        properties=[Property(name="key", data_type=DataType.TEXT), Property(name="team", data_type=DataType.TEXT)],
        vector_config=[
            Configure.Vectors.self_provided(name="body", vector_index_config=flat()),
            Configure.Vectors.self_provided(name="title", vector_index_config=flat()),
        ],
    )
    collection = client.collections.use(NAMED)
    for obj in NAMED_OBJECTS:
        properties = {"team": obj.tenant, **({"key": obj.key} if obj.key is not None else {})}
        vectors = {"title": vec(RNG), **({"body": obj.vector} if obj.vector is not None else {})}
        collection.data.insert(properties, vector=vectors)


def create_tenants(client: weaviate.WeaviateClient, name: str, *, legacy: bool) -> None:
    """The multi-tenant collection; tenants created automatically on write (so a write through a
    tenant would show), one inactive tenant."""
    vectors: dict[str, Any] = (
        {"vectorizer_config": Configure.Vectorizer.none(), "vector_index_config": flat()}
        if legacy
        else {"vector_config": Configure.Vectors.self_provided(vector_index_config=flat())}
    )
    client.collections.create(
        name,
        properties=[Property(name="key", data_type=DataType.TEXT, tokenization=Tokenization.FIELD)],
        multi_tenancy_config=Configure.multi_tenancy(enabled=True, auto_tenant_creation=True),
        **vectors,
    )
    collection = client.collections.use(name)
    collection.tenants.create(
        [*(Tenant(name=t) for t in ("team_acme", "team_beta", "other_acme")), Tenant(name="team_cold")]
    )
    for obj in MT_OBJECTS:
        properties = {"key": obj.key} if obj.key is not None else {}
        collection.with_tenant(obj.tenant).data.insert(properties, vector=obj.vector)
    collection.with_tenant("team_cold").data.insert({"key": "cold-1"}, vector=vec(RNG))
    collection.tenants.update([Tenant(name="team_cold", activity_status=TenantActivityStatus.INACTIVE)])


def state(client: weaviate.WeaviateClient) -> dict[str, Any]:
    """What a write would change: our collections (present, config, tenants, object counts per tenant)."""
    names = sorted(name for name in client.collections.list_all(simple=True) if name in OURS)
    found: dict[str, Any] = {"collections": names}
    for name in names:
        collection = client.collections.use(name)
        config = collection.config.get()
        found[name] = {"config": config.to_dict()}
        if config.multi_tenancy_config.enabled:
            tenants = collection.tenants.get()
            found[name]["tenants"] = {t: str(tenants[t].activity_status) for t in sorted(tenants)}
            found[name]["counts"] = {
                t: collection.with_tenant(t).aggregate.over_all(total_count=True).total_count
                for t in sorted(tenants)
                if tenants[t].activity_status == TenantActivityStatus.ACTIVE
            }
        else:
            found[name]["counts"] = collection.aggregate.over_all(total_count=True).total_count
    return found


@contextmanager
def writes_nothing(client: weaviate.WeaviateClient) -> Iterator[None]:
    before = state(client)
    assert before["collections"] == sorted([NAMED, TENANTS, UNNAMED])
    yield
    assert state(client) == before


@contextmanager
def opened(config: dict[str, Any], *, fixed_tenant: str | None = None, **settings: Any) -> Iterator[WeaviateSource]:
    """A source over the real Weaviate (``settings`` override the connection keywords); closed after."""
    server = server_settings()
    connection = {
        "host": server.weaviate_host,
        "http_port": server.weaviate_http_port,
        "grpc_port": server.weaviate_grpc_port,
        "api_key": server.weaviate_api_key,
        "secure": server.weaviate_secure,
        "timeout_s": 5.0,
        **settings,
    }
    vectors = WeaviateVectors(profile=PROFILE, source="weaviate", **config)
    built = WeaviateSource(vectors, fixed_tenant=fixed_tenant, origin=ORIGIN, **connection)
    try:
        yield built
    finally:
        built.close()


NAMED_CONFIG = {"collection": NAMED, "id_property": "key", "tenant_property": "team", "vector": "body"}


def mt_config(collection: str) -> dict[str, Any]:
    return {"collection": collection, "id_property": "key", "tenant_name": "team_{tenant}"}


@pytest.fixture
def named(admin: weaviate.WeaviateClient) -> Iterator[WeaviateSource]:
    with writes_nothing(admin), opened(NAMED_CONFIG) as built:
        yield built


@pytest.fixture(params=[TENANTS, UNNAMED], ids=["default-vector", "unnamed-vector"])
def tenants(request: pytest.FixtureRequest, admin: weaviate.WeaviateClient) -> Iterator[WeaviateSource]:
    with writes_nothing(admin), opened(mt_config(request.param)) as built:
        yield built


# -- (1) tenant property, named vector ---------------------------------------------------------------


def test_the_source_is_a_vector_source(named: WeaviateSource) -> None:
    assert isinstance(named, VectorSource)
    assert named.profile_id == PROFILE


@pytest.mark.parametrize("tenant", ["acme", "acme corp", "beta"])
def test_nearest_returns_the_tenants_objects_in_order_with_their_stored_vectors(
    named: WeaviateSource, tenant: str
) -> None:
    found = named.nearest(QUERY, tenant_id=tenant, limit=50)
    assert_same(found, expected_nearest(NAMED_OBJECTS, tenant, QUERY))


def test_nearest_never_returns_another_tenants_object_of_the_same_id(named: WeaviateSource) -> None:
    # "acme corp" matches the word-tokenized filter team = "acme" and holds a "k" nearer than acme's
    found = dict(named.nearest(NEAR_QUERY, tenant_id="acme", limit=50))
    assert set(found) == {"k", "k-1", "k-2", "k-3"}
    assert found["k"] == stored_vectors(NAMED_OBJECTS, "acme")["k"]


def test_nearest_stops_at_the_limit(named: WeaviateSource) -> None:
    expected = expected_nearest(NAMED_OBJECTS, "beta", QUERY)
    assert_same(named.nearest(QUERY, tenant_id="beta", limit=2), expected[:2])
    assert named.nearest(QUERY, tenant_id="beta", limit=0) == []


def test_one_request_a_call_once_the_collection_is_read(named: WeaviateSource) -> None:
    counter = named.connection
    named.nearest(QUERY, tenant_id="beta", limit=3)
    assert counter.round_trips == 3  # connect (/v1/meta), the collection's config, the query
    named.nearest(QUERY, tenant_id="acme", limit=3)
    named.vectors_of(["k", "b-1"], tenant_id="acme")
    assert counter.round_trips == 5


def test_vectors_of_returns_exactly_the_asked_ids_of_the_tenant(named: WeaviateSource) -> None:
    asked = ["k", "k-2", "k-novec", "c-1", "b-1", "nope", "k-2", ""]
    found = named.vectors_of(asked, tenant_id="acme")
    stored = stored_vectors(NAMED_OBJECTS, "acme")
    assert found == {"k": stored["k"], "k-2": stored["k-2"]}
    assert np.array_equal(f32(found["k"]), f32(next(o.vector for o in NAMED_OBJECTS if o.key == "k")))
    corp = named.vectors_of(["k", "c-1", "c-2", "k-1"], tenant_id="acme corp")
    assert corp == {key: stored_vectors(NAMED_OBJECTS, "acme corp")[key] for key in ("k", "c-1", "c-2")}


def test_an_unknown_tenant_has_nothing(named: WeaviateSource) -> None:
    assert named.nearest(QUERY, tenant_id="gamma", limit=10) == []
    assert named.vectors_of(["k", "b-1"], tenant_id="gamma") == {}
    assert named.nearest(QUERY, tenant_id="corp", limit=10) == []  # a token of "acme corp", not a tenant


def test_dimension_of_the_named_vector_is_read_once(named: WeaviateSource) -> None:
    assert named.dimension() == DIM
    sent = named.connection.round_trips
    assert named.dimension() == DIM
    assert named.connection.round_trips == sent


def test_a_query_of_another_dimension_is_an_embedding_mismatch(named: WeaviateSource) -> None:
    with pytest.raises(EmbeddingMismatchError, match=rf"^profile {PROFILE}: query vector has dimension 3, "):
        named.nearest([0.1, 0.2, 0.3], tenant_id="acme", limit=3)


def test_a_fixed_tenant_reads_the_whole_collection_and_nothing_for_another_id(admin: weaviate.WeaviateClient) -> None:
    config = {"collection": NAMED, "id_property": "key", "vector": "body"}
    with writes_nothing(admin), opened(config, fixed_tenant="solo") as solo:
        found = solo.nearest(QUERY, tenant_id="solo", limit=50)
        every = {o.key for o in NAMED_OBJECTS if o.key is not None and o.vector is not None}
        assert [node_id for node_id, _ in found].count("k") == 1  # the nearest of its two objects
        assert {node_id for node_id, _ in found} == every
        assert dict(found)["k"] == [float(x) for x in f32(NEAR_QUERY)]
        sent = solo.connection.round_trips
        assert solo.nearest(QUERY, tenant_id="acme", limit=50) == []
        assert solo.vectors_of(["k"], tenant_id="acme") == {}
        assert solo.connection.round_trips == sent  # not asked at all


# -- (2) native multi-tenancy, default vector --------------------------------------------------------


@pytest.mark.parametrize("tenant", ["acme", "beta"])
def test_multi_tenant_nearest_reads_the_tenants_weaviate_tenant(tenants: WeaviateSource, tenant: str) -> None:
    found = tenants.nearest(QUERY, tenant_id=tenant, limit=50)
    assert_same(found, expected_nearest(MT_OBJECTS, f"team_{tenant}", QUERY))


def test_multi_tenant_nearest_never_returns_another_tenants_objects(tenants: WeaviateSource) -> None:
    found = dict(tenants.nearest(NEAR_QUERY, tenant_id="acme", limit=50))
    assert set(found) == {"a-1", "a-2", "a-3", "a-4"}
    assert found == stored_vectors(MT_OBJECTS, "team_acme")


def test_multi_tenant_vectors_of_returns_exactly_the_asked_ids(tenants: WeaviateSource) -> None:
    found = tenants.vectors_of(["a-1", "a-3", "a-novec", "b-1", "nope"], tenant_id="acme")
    stored = stored_vectors(MT_OBJECTS, "team_acme")
    assert found == {"a-1": stored["a-1"], "a-3": stored["a-3"]}
    assert tenants.vectors_of(["a-1", "b-2"], tenant_id="beta") == {
        key: stored_vectors(MT_OBJECTS, "team_beta")[key] for key in ("a-1", "b-2")
    }


def test_more_ids_than_one_query_returns_take_one_query_per_chunk(tenants: WeaviateSource) -> None:
    tenants.check()
    sent = tenants.connection.round_trips
    asked = [f"0-{i:05d}" for i in range(QUERY_MAX_RESULTS)] + ["a-4", "b-1"]  # sorted: a-4 in the second chunk
    assert tenants.vectors_of(asked, tenant_id="acme") == {"a-4": stored_vectors(MT_OBJECTS, "team_acme")["a-4"]}
    assert tenants.connection.round_trips == sent + 2


@pytest.mark.parametrize("tenant", ["gamma", "other", "bad name/é", "x" * 100])
def test_a_tenant_without_a_weaviate_tenant_has_nothing(tenants: WeaviateSource, tenant: str) -> None:
    assert tenants.nearest(QUERY, tenant_id=tenant, limit=10) == []
    assert tenants.vectors_of(["a-1", "a-2"], tenant_id=tenant) == {}


def test_multi_tenant_dimension(tenants: WeaviateSource) -> None:
    assert tenants.dimension() == DIM
    sent = tenants.connection.round_trips
    assert tenants.dimension() == DIM
    assert tenants.connection.round_trips == sent


def test_an_inactive_weaviate_tenant_is_unavailable(tenants: WeaviateSource) -> None:
    with pytest.raises(BackendUnavailableError, match=r"'team_cold' .* is not active"):
        tenants.nearest(QUERY, tenant_id="cold", limit=3)


# -- a mapping that does not fit the collection ------------------------------------------------------


@pytest.mark.parametrize(
    ("config", "message"),
    [
        (
            {**NAMED_CONFIG, "collection": MISSING},
            rf"vectors\.{PROFILE}\.collection: Weaviate collection '{MISSING}' does not exist at ",
        ),
        (
            {**NAMED_CONFIG, "vector": "summary"},
            rf"vectors\.{PROFILE}\.vector: Weaviate collection '{NAMED}' has no named vector 'summary' "
            r"\(named vectors: body, title\)$",
        ),
        (
            {**NAMED_CONFIG, "vector": None},
            rf"vectors\.{PROFILE}\.vector: Weaviate collection '{NAMED}' has several named vectors",
        ),
        ({**NAMED_CONFIG, "id_property": "nodeId"}, rf"vectors\.{PROFILE}\.id_property: .* no property 'nodeId'"),
        ({**NAMED_CONFIG, "tenant_property": "tenantId"}, rf"vectors\.{PROFILE}\.tenant_property: .* 'tenantId'"),
        (
            {**NAMED_CONFIG, "tenant_property": None, "tenant_name": "t_{tenant}"},
            rf"vectors\.{PROFILE}\.tenant_name: Weaviate collection '{NAMED}' has no multi-tenancy",
        ),
        (
            {"collection": TENANTS, "id_property": "key", "tenant_property": "key"},
            rf"vectors\.{PROFILE}\.tenant_name: Weaviate collection '{TENANTS}' has multi-tenancy",
        ),
        (
            {**mt_config(TENANTS), "vector": "body"},
            rf"vectors\.{PROFILE}\.vector: Weaviate collection '{TENANTS}' has no named vector 'body'",
        ),
    ],
)
def test_a_mapping_that_does_not_fit_is_one_configuration_line(
    admin: weaviate.WeaviateClient, config: dict[str, Any], message: str
) -> None:
    with writes_nothing(admin), opened(config) as misfit:
        for call in (
            lambda: misfit.nearest(QUERY, tenant_id="acme", limit=3),
            lambda: misfit.vectors_of(["k"], tenant_id="acme"),
            misfit.dimension,
            misfit.check,
        ):
            with pytest.raises(ConfigurationError, match=f"^{ORIGIN}: {message}") as raised:
                call()
            assert "\n" not in str(raised.value)


def test_a_collection_dropped_after_it_was_read_is_a_configuration_line(admin: weaviate.WeaviateClient) -> None:
    name = f"MappedDropped{RUN}"
    admin.collections.create(
        name,
        properties=[Property(name="key", data_type=DataType.TEXT)],
        vector_config=Configure.Vectors.self_provided(),
    )
    try:
        admin.collections.use(name).data.insert({"key": "k"}, vector=QUERY)
        with opened({"collection": name, "id_property": "key"}, fixed_tenant="solo") as dropped:
            assert [node_id for node_id, _ in dropped.nearest(QUERY, tenant_id="solo", limit=3)] == ["k"]
            admin.collections.delete(name)
            with pytest.raises(ConfigurationError, match=rf"^{ORIGIN}: vectors\.{PROFILE}\.collection: .*'{name}'"):
                dropped.nearest(QUERY, tenant_id="solo", limit=3)
    finally:
        admin.collections.delete(name)


def test_a_mapping_whose_tenant_is_a_property_needs_the_collection_to_keep_tenants_apart() -> None:
    config = WeaviateVectors(profile=PROFILE, source="weaviate", collection=NAMED, id_property="key")
    with pytest.raises(ConfigurationError, match=rf"^{ORIGIN}: vectors\.{PROFILE}: the mapping's tenant is a node"):
        WeaviateSource(config, origin=ORIGIN)


def test_from_mapping_takes_the_fixed_tenant_and_the_mapping_name() -> None:
    mapping = parse_mapping(
        {
            "name": "team",
            "tenant": {"fixed": "solo"},
            "nodes": [{"label": "Doc", "node_type": "cdm.doc"}],
            "vectors": [{"profile": PROFILE, "source": "weaviate", "collection": MISSING, "id_property": "key"}],
        }
    )
    config = mapping.vectors[0]
    assert isinstance(config, WeaviateVectors)
    server = server_settings()
    built = WeaviateSource.from_mapping(
        mapping,
        config,
        host=server.weaviate_host,
        http_port=server.weaviate_http_port,
        grpc_port=server.weaviate_grpc_port,
    )
    try:
        assert built.fixed_tenant == "solo"
        with pytest.raises(ConfigurationError, match=rf"^mapping team: vectors\.{PROFILE}\.collection: "):
            built.nearest(QUERY, tenant_id="solo", limit=3)
    finally:
        built.close()


# -- a server that cannot be reached -----------------------------------------------------------------


@pytest.mark.parametrize("closed", ["both", "grpc"])
def test_a_server_that_cannot_be_reached_is_unavailable_within_the_timeout(
    admin: weaviate.WeaviateClient, closed: str
) -> None:
    port = closed_port()
    other = next(p for p in iter(closed_port, None) if p != port)  # the client refuses one port for both
    ports = {"grpc_port": port} if closed == "grpc" else {"http_port": port, "grpc_port": other}
    with opened(NAMED_CONFIG, timeout_s=2.0, **ports) as down:
        for call in (
            lambda: down.nearest(QUERY, tenant_id="acme", limit=3),
            lambda: down.vectors_of(["k"], tenant_id="acme"),
            down.dimension,
        ):
            started = time.monotonic()
            with pytest.raises(BackendUnavailableError, match=r"^weaviate unavailable: ") as raised:
                call()
            assert time.monotonic() - started < 4.0
            assert "\n" not in str(raised.value)
