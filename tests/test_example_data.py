"""The bundled example graph: reproducible from its generator and consistent."""

from __future__ import annotations

from collections import Counter

from brain_graph.indexing.dataset import Dataset, example_dataset_path
from examples import generate_example_graph


def test_the_committed_file_is_what_the_generator_writes() -> None:
    assert example_dataset_path().read_text(encoding="utf-8") == generate_example_graph.render()
    assert generate_example_graph.OUT.resolve() == example_dataset_path().resolve()


def test_the_example_has_what_the_tests_rely_on(example_dataset: Dataset) -> None:
    types = Counter(node.node_type for node in example_dataset.nodes)
    assert len(example_dataset.nodes) >= 200
    assert {"cdm.work_item", "cdm.doc", "code.file", "signal.instance", "kg.cluster", "cdm.person"} <= set(types)
    assert {node.tenant_id for node in example_dataset.nodes} == {"acme", "globex"}
    assert sum(node.secured for node in example_dataset.nodes) >= 3
    shared = [node for node in example_dataset.nodes if node.id == "shared:doc:onboarding"]
    assert {node.tenant_id for node in shared} == {"acme", "globex"}
