"""Attack class: data leaks across the access rule. Secured items (hits, neighbours, signals, clusters,
episode members and sizes, passages) and other tenants' data (same ids, case or Unicode variants of the
tenant id) never reach any part of the output, whoever asks (embedded store; the server backends run
the same rule: tests/conformance)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from brain_graph import Principal
from tests.probes.support import edge, ids_in_result, make_store, node, request, search

T = "t1"
OTHER = "t2"


def _graph() -> dict[str, Any]:
    """Public hits whose clusters, neighbours and signals are secured, in two tenants with the same ids."""
    nodes = []
    for tenant in (T, OTHER):
        secret = "TOPSECRET" if tenant == T else "OTHERTENANT"
        nodes += [
            node(tenant, "w1", "cdm.work_item", f"Token refresh public {tenant}", text={"summary": "token refresh"}),
            node(
                tenant,
                "w2",
                "cdm.work_item",
                f"Token refresh {secret}",
                secured=True,
                acl=["group:sec"],
                text={"summary": f"token refresh {secret}"},
            ),
            node(
                tenant,
                "d1",
                "cdm.doc",
                f"Token refresh doc {secret}",
                secured=True,
                acl=["user:carol"],
                text={"body": f"token refresh {secret}"},
            ),
            node(tenant, "s1", "signal.instance", f"Signal {secret}", secured=True, acl=["group:sec"]),
            node(
                tenant,
                "k1",
                "kg.cluster",
                f"Episode {secret}",
                secured=True,
                acl=["group:sec"],
                properties={"clusterKind": f"kind-{secret}"},
            ),
            node(tenant, "k2", "kg.cluster", "Public episode", properties={"clusterKind": "episode"}),
            node(
                tenant,
                "x1",
                "cdm.doc",
                f"Hidden neighbour {secret}",
                secured=True,
                acl=["user:carol"],
                text={"body": "unrelated words entirely"},
            ),
            node(tenant, "x2", "cdm.doc", "Public neighbour of hidden", text={"body": "unrelated words again"}),
        ]
    nodes.append(
        node(OTHER, "only-other", "cdm.work_item", "Token refresh OTHERTENANT", text={"summary": "token refresh"})
    )
    edges = []
    for tenant in (T, OTHER):
        edges += [
            edge(tenant, "HAS_SIGNAL", "w1", "s1"),
            edge(tenant, "IN_CLUSTER", "w1", "k1"),
            edge(tenant, "IN_CLUSTER", "w2", "k1"),
            edge(tenant, "IN_CLUSTER", "w1", "k2"),
            edge(tenant, "IN_CLUSTER", "w2", "k2"),
            edge(tenant, "IN_CLUSTER", "d1", "k2"),
            edge(tenant, "REFERENCES", "w1", "x1"),
            edge(tenant, "REFERENCES", "x1", "x2"),
            edge(tenant, "REFERENCES", "w1", "w2"),
        ]
    return {"nodes": nodes, "edges": edges}


SECURED = {"w2", "d1", "s1", "k1", "x1"}


@pytest.mark.parametrize(
    ("principal", "secured", "visible_secured"),
    [
        (None, False, set()),
        (Principal("bob"), True, set()),
        (Principal("bob", ("SEC",)), True, set()),
        (Principal("sec"), True, set()),
        (Principal("bob", ("sec",)), True, {"w2", "s1", "k1"}),
        (Principal("carol"), True, {"d1", "x1"}),
    ],
    ids=["public", "bob", "bob-SEC", "user-sec", "bob-sec", "carol"],
)
def test_nothing_invisible_appears_anywhere(
    tmp_path: Path, principal: Principal | None, secured: bool, visible_secured: set[str]
) -> None:
    services = make_store(tmp_path, _graph())
    raw = request("token refresh", secured=secured, topK=50, expandDepth=3, maxEpisodes=50)
    raw["filter"]["profileKindIn"] = ["work", "doc"]
    result = search(services, raw, principal)
    where = ids_in_result(result)
    for place, ids in where.items():
        assert not (ids & (SECURED - visible_secured)), (place, ids & SECURED)
        assert "only-other" not in ids, place
    text = result.model_dump_json()
    assert "OTHERTENANT" not in text
    if not visible_secured:
        assert "TOPSECRET" not in text
    for episode in result.episodes:
        visible_members = {"w1", "k2"} | visible_secured
        if episode.cluster_node_id == "k2":
            expected = len({"w1", "w2", "d1"} & ({"w1"} | visible_secured))
            assert episode.size == expected, (episode.size, expected)
        assert set(episode.member_node_ids) <= visible_members
    nodes = {n.node_id for n in result.graph_nodes}
    assert where["graphEdges"] <= nodes


def test_tenant_ids_that_differ_only_in_case_or_form_are_isolated(tmp_path: Path) -> None:
    tenants = ["acme", "ACME", "Acme", "acme\u0301", "acm\u00e9", "acme\u00a0x", "acme x"]
    nodes = [
        node(t, "w1", "cdm.work_item", f"Token refresh {i}", text={"summary": f"token refresh marker{i}"})
        for i, t in enumerate(tenants)
    ]
    services = make_store(tmp_path, {"nodes": nodes, "edges": []})
    for i, tenant in enumerate(tenants):
        result = search(services, request("token refresh", tenant))
        assert [h.title for h in result.hits] == [f"Token refresh {i}"]
