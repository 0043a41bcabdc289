"""The pages "Your own node types" and "Embedding providers": their worked examples parse, and their
key tables name every key of the profiles file."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest
from pydantic import BaseModel

from brain_graph.embedding.profiles_file import (
    EmbedderEntry,
    NodeTypeEntry,
    PassageEntry,
    ProfileEntry,
    ProfilesFile,
    parse_profiles,
)

DOCS = Path(__file__).resolve().parents[2] / "docs"
NODE_TYPES = (DOCS / "node-types.md").read_text(encoding="utf-8")
PROVIDERS = (DOCS / "embedding-providers.md").read_text(encoding="utf-8")
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "node_types" / "profiles.toml"


def toml_blocks(text: str) -> list[str]:
    return re.findall(r"```toml\n(.*?)```", text, flags=re.DOTALL)


def test_the_node_types_example_is_the_shipped_example_file() -> None:
    (block,) = toml_blocks(NODE_TYPES)
    assert tomllib.loads(block) == tomllib.loads(EXAMPLE.read_text(encoding="utf-8"))
    parse_profiles(block, "docs/node-types.md")


def test_the_providers_example_parses() -> None:
    (block,) = toml_blocks(PROVIDERS)
    parsed = parse_profiles(block + '\n[nodeTypes."cdm.doc"]\n', "docs/embedding-providers.md")  # a fragment
    gateway = parsed.embedder("cdm.doc.body")
    assert gateway is not None
    assert (gateway.name, gateway.dimension) == ("openai:bge-m3", 1024)  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("model", "page"),
    [
        (ProfilesFile, NODE_TYPES),
        (NodeTypeEntry, NODE_TYPES),
        (PassageEntry, NODE_TYPES),
        (ProfileEntry, NODE_TYPES),
        (EmbedderEntry, PROVIDERS),
    ],
)
def test_the_reference_names_every_key(model: type[BaseModel], page: str) -> None:
    for name, field in model.model_fields.items():
        assert re.search(rf"`[^`]*\b{re.escape(field.alias or name)}\b[^`]*`", page), field.alias or name
