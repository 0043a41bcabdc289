"""A sentence-transformers folder's output dimension read from its files, without loading the model."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from brain_graph.core.errors import ConfigurationError
from brain_graph.embedding import providers
from brain_graph.embedding.model_dimension import declared_dimension

TRANSFORMER = {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"}
POOLING = {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"}
DENSE = {"idx": 2, "name": "2", "path": "2_Dense", "type": "sentence_transformers.models.Dense"}
NORMALIZE = {"idx": 3, "name": "3", "path": "3_Normalize", "type": "sentence_transformers.models.Normalize"}
MEAN_384 = {"word_embedding_dimension": 384, "pooling_mode_mean_tokens": True, "pooling_mode_cls_token": False}


def model_folder(root: Path, modules: list[dict[str, Any]], configs: dict[str, Any], **top: Any) -> Path:
    """A model folder holding only the JSON files the dimension is read from."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "modules.json").write_text(json.dumps(modules), encoding="utf-8")
    for path, config in configs.items():
        (root / path).mkdir(parents=True, exist_ok=True)
        (root / path / "config.json").write_text(json.dumps(config), encoding="utf-8")
    if top:
        (root / "config_sentence_transformers.json").write_text(json.dumps(top), encoding="utf-8")
    return root


@pytest.mark.parametrize(
    ("modules", "configs", "expected"),
    [
        ([TRANSFORMER, POOLING, NORMALIZE], {"1_Pooling": MEAN_384}, 384),
        ([TRANSFORMER, POOLING], {"1_Pooling": {"word_embedding_dimension": 768}}, 768),  # no mode: mean
        (
            [TRANSFORMER, POOLING],
            {"1_Pooling": {**MEAN_384, "pooling_mode_max_tokens": True}},  # two modes, concatenated
            768,
        ),
        ([TRANSFORMER, POOLING], {"1_Pooling": {"embedding_dimension": 256, "pooling_mode": ["cls", "mean"]}}, 512),
        ([TRANSFORMER, POOLING], {"1_Pooling": {"embedding_dimension": 256, "pooling_mode": "lasttoken"}}, 256),
        (
            [TRANSFORMER, POOLING, DENSE, NORMALIZE],
            {"1_Pooling": MEAN_384, "2_Dense": {"in_features": 384, "out_features": 128}},
            128,
        ),
        ([TRANSFORMER], {}, None),  # a last module it does not read: the model is asked
        ([TRANSFORMER, POOLING], {"1_Pooling": {"pooling_mode": "mean"}}, None),  # no token dimension
        ([TRANSFORMER, POOLING], {"1_Pooling": {"word_embedding_dimension": "384"}}, None),
        ([TRANSFORMER, POOLING], {"1_Pooling": {"word_embedding_dimension": 384, "pooling_mode": 3}}, None),
        ([TRANSFORMER, POOLING, DENSE], {"1_Pooling": MEAN_384, "2_Dense": {"out_features": True}}, None),
    ],
)
def test_the_declared_dimension(
    tmp_path: Path, modules: list[dict[str, Any]], configs: dict[str, Any], expected: int | None
) -> None:
    assert declared_dimension(model_folder(tmp_path / "m", modules, configs)) == expected


def test_a_truncating_model_is_asked(tmp_path: Path) -> None:
    folder = model_folder(tmp_path / "m", [TRANSFORMER, POOLING], {"1_Pooling": MEAN_384}, truncate_dim=64)
    assert declared_dimension(folder) is None


@pytest.mark.parametrize("modules_json", ["", "{not json", '{"a": 1}', "[1]", '[{"path": "x"}]'])
def test_unreadable_files_give_none(tmp_path: Path, modules_json: str) -> None:
    (tmp_path / "modules.json").write_text(modules_json, encoding="utf-8")
    assert declared_dimension(tmp_path) is None


def test_no_folder_gives_none(tmp_path: Path) -> None:
    assert declared_dimension(tmp_path / "missing") is None


class _Model:
    """A loaded model that reports a dimension (a fake: the real model is tested in tests/models)."""

    def __init__(self, dimension: int) -> None:
        self.size = dimension

    def get_embedding_dimension(self) -> int:
        return self.size


def test_the_dimension_needs_no_model_and_the_model_must_agree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = model_folder(tmp_path / "m", [TRANSFORMER, POOLING, NORMALIZE], {"1_Pooling": MEAN_384})
    loads: list[Path] = []

    def load(path: Path) -> _Model:
        loads.append(path)
        return _Model(100)

    monkeypatch.setattr(providers, "sentence_transformers_installed", lambda: True)
    monkeypatch.setattr(providers, "_load_model", load)
    embedder = providers.SentenceTransformerEmbeddings(folder)
    assert embedder.dimension == 384
    assert loads == []
    with pytest.raises(ConfigurationError, match="outputs 100 dimensions, its files declare 384"):
        embedder.max_seq_length  # noqa: B018 - the property loads the model


def test_a_model_whose_files_do_not_say_is_loaded_and_asked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = model_folder(tmp_path / "m", [TRANSFORMER], {})
    monkeypatch.setattr(providers, "sentence_transformers_installed", lambda: True)
    monkeypatch.setattr(providers, "_load_model", lambda path: _Model(100))
    assert providers.SentenceTransformerEmbeddings(folder).dimension == 100
