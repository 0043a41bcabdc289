"""Deterministic synthetic knowledge graphs of any size, in the dataset format of ``examples/data``.

Each tenant gets projects with work items, docs, code files, signals, people and clusters; texts are
drawn from topic vocabularies so the lexical embedder finds real neighbours. About 15% of the
nodes are secured with user or group ACLs. Edges: REFERENCES, DEPENDS_ON, IMPLEMENTED_BY, DOCUMENTS,
HAS_SIGNAL, IN_CLUSTER and ASSIGNED_TO (the last is never traversed).

Written as a dataset file (what ``brain-graph load`` reads), the same seed giving the same bytes::

    python -m benchmarks.synthetic --nodes 10000 [--seed 7] [--tenants 2] [--tenant-prefix P] --out graph.json
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from brain_graph import Dataset
from brain_graph.indexing.dataset_items import FORMAT_VERSION

TOPICS = {
    "auth": "token refresh session login oauth expiry credential rotation",
    "billing": "invoice payment charge refund ledger currency subscription",
    "search": "index query ranking relevance vector embedding latency",
    "storage": "disk replication backup snapshot compaction quota",
    "network": "timeout retry gateway proxy certificate dns latency",
    "mobile": "android ios release crash notification offline sync",
}
USERS = ("alice", "bob", "carol", "dave", "erin")
GROUPS = ("security", "finance", "sre")
MIX = (("cdm.work_item", 0.4), ("cdm.doc", 0.2), ("code.file", 0.12), ("signal.instance", 0.14), ("cdm.person", 0.04))


def _text(rng: random.Random, topic: str, words: int) -> str:
    vocabulary = TOPICS[topic].split() + TOPICS[rng.choice(sorted(TOPICS))].split()[:3]
    return " ".join(rng.choice(vocabulary) for _ in range(words))


def synthetic_graph(
    nodes: int, *, tenants: int = 2, projects: int = 4, seed: int = 7, tenant_prefix: str = ""
) -> dict[str, Any]:
    """The JSON value of a dataset of about ``nodes`` nodes (10% of them clusters) and ~3 edges per
    node, in tenants ``<tenant_prefix>tenant0``, ``<tenant_prefix>tenant1``, ..."""
    rng = random.Random(seed)
    raw_nodes: list[dict[str, Any]] = []
    raw_edges: list[dict[str, Any]] = []
    per_tenant = max(10, nodes // tenants)
    for t in range(tenants):
        tenant = f"{tenant_prefix}tenant{t}"
        by_type: dict[str, list[dict[str, Any]]] = {}
        clusters: list[dict[str, Any]] = []
        for i in range(per_tenant):
            topic = rng.choice(sorted(TOPICS))
            project = f"P{rng.randrange(projects)}"
            if i % 10 == 9:
                node_type = "kg.cluster"
            else:
                pick = rng.random() * sum(w for _, w in MIX)
                node_type = MIX[-1][0]
                for name, weight in MIX:
                    if pick < weight:
                        node_type = name
                        break
                    pick -= weight
            node: dict[str, Any] = {
                "tenantId": tenant,
                "id": f"{node_type.split('.')[-1]}-{t}-{i:06d}",
                "nodeType": node_type,
                "projectKey": project,
                "title": f"{topic} {_text(rng, topic, 4)}",
                "url": f"https://example.test/{tenant}/{i}",
                "text": {},
                "properties": {"topic": topic, "rank": i % 7},
            }
            if node_type == "cdm.work_item":
                node["text"] = {"summary": _text(rng, topic, 12), "description": _text(rng, topic, 60)}
            elif node_type == "cdm.doc":
                node["text"] = {"body": _text(rng, topic, 200)}
            elif node_type == "code.file":
                node["text"] = {"summary": _text(rng, topic, 10), "body": f"def f_{i}():\n    return {i}\n"}
            elif node_type == "signal.instance":
                node["text"] = {"summary": _text(rng, topic, 6)}
            elif node_type == "kg.cluster":
                node["properties"]["clusterKind"] = rng.choice(("episode", "theme"))
            if node_type != "cdm.person" and rng.random() < 0.15:
                node["secured"] = True
                node["acl"] = [rng.choice([f"user:{u}" for u in USERS] + [f"group:{g}" for g in GROUPS])]
            raw_nodes.append(node)
            (clusters if node_type == "kg.cluster" else by_type.setdefault(node_type, [])).append(node)
        seen: set[tuple[str, str, str]] = set()

        def link(
            edge_type: str,
            source: dict[str, Any],
            target: dict[str, Any],
            tenant: str = tenant,
            seen: set[tuple[str, str, str]] = seen,
        ) -> None:
            key = (edge_type, source["id"], target["id"])
            if source is not target and key not in seen:
                seen.add(key)
                raw_edges.append(
                    {"tenantId": tenant, "edgeType": edge_type, "fromNodeId": source["id"], "toNodeId": target["id"]}
                )

        work = by_type.get("cdm.work_item", [])
        docs = by_type.get("cdm.doc", [])
        code = by_type.get("code.file", [])
        signals = by_type.get("signal.instance", [])
        people = by_type.get("cdm.person", [])
        for item in work:
            if docs:
                link("REFERENCES", item, rng.choice(docs))
            if work and rng.random() < 0.5:
                link("DEPENDS_ON", item, rng.choice(work))
            if code and rng.random() < 0.5:
                link("IMPLEMENTED_BY", item, rng.choice(code))
            if signals and rng.random() < 0.4:
                link("HAS_SIGNAL", item, rng.choice(signals))
            if people:
                link("ASSIGNED_TO", item, rng.choice(people))
        for doc in docs:
            if code and rng.random() < 0.4:
                link("DOCUMENTS", doc, rng.choice(code))
        members = work + docs + signals
        for cluster in clusters:
            for member in rng.sample(members, min(len(members), rng.randint(2, 8))):
                link("IN_CLUSTER", member, cluster)
    return {
        "formatVersion": FORMAT_VERSION,
        "description": f"synthetic {nodes} nodes",
        "nodes": raw_nodes,
        "edges": raw_edges,
    }


def synthetic_dataset(nodes: int, *, tenants: int = 2, projects: int = 4, seed: int = 7) -> Dataset:
    """:func:`synthetic_graph` as a validated :class:`~brain_graph.indexing.dataset.Dataset`."""
    return Dataset.model_validate(synthetic_graph(nodes, tenants=tenants, projects=projects, seed=seed))


def write_graph(path: Path, nodes: int, *, seed: int = 7, tenants: int = 2, tenant_prefix: str = "") -> Path:
    """Write :func:`synthetic_graph` as a dataset file (compact JSON, deterministic for a seed)."""
    graph = synthetic_graph(nodes, tenants=tenants, seed=seed, tenant_prefix=tenant_prefix)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as out:
        json.dump(graph, out, separators=(",", ":"))
        out.write("\n")
    return path


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Write a synthetic knowledge graph as a brain-graph dataset file.")
    parser.add_argument("--nodes", type=int, required=True, help="about how many nodes (split over the tenants)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--tenants", type=int, default=2)
    parser.add_argument("--tenant-prefix", default="", help="prefix of the tenant ids (tenant0, tenant1, ...)")
    parser.add_argument("--out", type=Path, required=True, help="dataset file to write")
    args = parser.parse_args(argv)
    if args.nodes < 1 or args.tenants < 1:
        parser.error("--nodes and --tenants must be at least 1")
    write_graph(args.out, args.nodes, seed=args.seed, tenants=args.tenants, tenant_prefix=args.tenant_prefix)
    return 0


if __name__ == "__main__":
    sys.exit(main())
