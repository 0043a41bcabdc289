"""docs/existing-graph.md: every example mapping in it is a valid mapping, and its reference names
every key of the mapping model."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from pydantic import BaseModel

from brain_graph.stores.mapped.mapping import (
    ClusterMapping,
    EdgeMapping,
    Mapping,
    Neo4jVectors,
    NodeMapping,
    TenantMapping,
    WeaviateVectors,
    read_mapping,
)

DOC = Path(__file__).resolve().parents[2] / "docs" / "existing-graph.md"
TOML_BLOCK = re.compile(r"^```toml\n(.*?)^```$", re.DOTALL | re.MULTILINE)


def toml_blocks() -> list[str]:
    return TOML_BLOCK.findall(DOC.read_text(encoding="utf-8"))


def test_the_doc_has_the_three_worked_mappings() -> None:
    assert len(toml_blocks()) == 3


@pytest.mark.parametrize("index", range(3))
def test_each_example_mapping_parses(tmp_path: Path, index: int) -> None:
    path = tmp_path / f"example{index}.toml"
    path.write_text(toml_blocks()[index], encoding="utf-8")
    mapping = read_mapping(path)
    assert mapping.nodes
    assert mapping.vectors


def test_the_examples_are_the_three_shapes(tmp_path: Path) -> None:
    mappings = []
    for index, text in enumerate(toml_blocks()):
        path = tmp_path / f"example{index}.toml"
        path.write_text(text, encoding="utf-8")
        mappings.append(read_mapping(path))
    named, native, lexical = mappings
    assert all(isinstance(v, WeaviateVectors) and v.tenant_property and v.vector for v in named.vectors)
    assert all(isinstance(v, WeaviateVectors) and v.tenant_name and not v.vector for v in native.vectors)
    assert named.tenant.property == native.tenant.property is not None
    assert lexical.tenant.fixed is not None
    assert all(isinstance(v, Neo4jVectors) for v in lexical.vectors)
    assert {edge.type for edge in lexical.edges} == {"FROM_DOCUMENT", "NEXT_CHUNK", "FROM_CHUNK"}
    assert {node.label for node in lexical.nodes} == {"Document", "Chunk", "__Entity__"}


MODELS: list[type[BaseModel]] = [
    Mapping,
    TenantMapping,
    NodeMapping,
    EdgeMapping,
    ClusterMapping,
    Neo4jVectors,
    WeaviateVectors,
]


@pytest.mark.parametrize("model", MODELS, ids=[model.__name__ for model in MODELS])
def test_the_reference_names_every_key(model: type[BaseModel]) -> None:
    text = DOC.read_text(encoding="utf-8")
    for name, field in model.model_fields.items():
        key = field.alias or name
        assert f"`{key}`" in text or f"[[{key}]]" in text or f"[{key}]" in text, f"{model.__name__}.{key}"
