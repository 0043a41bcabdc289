"""Filters on both backends: the same result on the embedded store and on Neo4j + Weaviate for node
types, namespaces, tags and recency, alone and combined, in every retrieval mode; every hit passes the
filter; the recency warning on both."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from brain_graph.core.filters import SeedFilter, format_timestamp
from brain_graph.indexing.dataset import Dataset
from brain_graph.stores.base import NodeRecord, node_facets
from tests.integration.conftest import Loaded
from tests.integration.test_parity import search

pytestmark = pytest.mark.integration
MODES = ("vector", "lexical", "hybrid")


def filter_requests(dataset: Dataset) -> list[tuple[str, dict[str, Any], SeedFilter]]:
    """Requests built from the data (its commonest tag, a median update time, a namespace of its code
    paths), each with the store filter its hits must pass."""
    tenant = Counter(node.tenant_id for node in dataset.nodes).most_common(1)[0][0]
    mine = [node.to_record() for node in dataset.nodes if node.tenant_id == tenant]
    tags = Counter(tag.casefold() for node in mine for tag in node.tags)
    tag = tags.most_common(1)[0][0]
    times = sorted(node.updated_at for node in mine if node.updated_at is not None)
    cutoff = times[len(times) // 2]
    namespaces = Counter(facets.namespace for node in mine if (facets := node_facets(node)).namespace)
    namespace = namespaces.most_common(1)[0][0]
    public = sorted((node for node in mine if not node.secured and node.title), key=lambda node: node.node_id)
    after = format_timestamp(cutoff)
    day = 86_400_000_000
    work, doc, code = ("cdm.work_item",), ("cdm.doc",), ("code.file",)
    cases = [
        ("tag", {"tags": [tag.upper()]}, SeedFilter(tags=(tag,))),
        ("docs-after", {"nodeTypes": [*doc], "updatedAfter": after}, SeedFilter(node_types=doc, updated_after=cutoff)),
        ("untimed-types", {"nodeTypes": [*doc, *work], "updatedAfter": after}, SeedFilter(updated_after=cutoff)),
        ("namespace-code", {"nodeTypes": [*code], "namespaces": [namespace]}, SeedFilter(namespaces=(namespace,))),
        ("tag-and-type", {"tags": [tag], "nodeTypes": [*work]}, SeedFilter(tags=(tag,), node_types=work)),
        ("age", {"maxAgeDays": 30, "asOf": after}, SeedFilter(updated_after=cutoff - 30 * day)),
    ]
    requests = []
    for name, fields, seed_filter in cases:
        # the query: words of a node that passes (so that lexical retrieval has hits) and of one that does not
        passing = next(node for node in public if node.node_type in (*work, *doc, *code) and passes(node, seed_filter))
        failing = next(node for node in public if node.node_type in (*work, *doc) and not passes(node, seed_filter))
        query = f"{passing.title} {failing.title}"
        filters = {"tenantId": tenant, "secured": False, **fields}
        requests.append((name, {"queryText": query, "filter": filters, "options": {}}, seed_filter))
    return requests


def passes(node: NodeRecord, seed_filter: SeedFilter) -> bool:
    return seed_filter.matches(node.project_key, node_facets(node))


@pytest.mark.parametrize("mode", MODES)
def test_each_filter_gives_the_same_result_on_both_backends(loaded: Loaded, mode: str) -> None:
    records = {(node.tenant_id, node.id): node.to_record() for node in loaded.dataset.nodes}
    warned = Counter[str]()
    for name, case, seed_filter in filter_requests(loaded.dataset):
        case = {**case, "options": {"retrievalMode": mode}}
        expected = search(loaded.embedded, case, None)
        assert search(loaded.server, case, None) == expected, f"{mode} {name}: neo4j-weaviate differs"
        tenant = case["filter"]["tenantId"]
        assert expected["hits"], f"{mode} {name}: no hits"
        for hit in expected["hits"]:
            node = records[(tenant, hit["nodeId"])]
            assert passes(node, seed_filter), (mode, name, hit["nodeId"])
        warned.update(warning["code"] for warning in expected["warnings"])
        assert "**Filters:**" in expected["promptPack"]["contextMarkdown"]
    assert warned["recency_untimed"] >= 1  # work items have no update time in the example data
