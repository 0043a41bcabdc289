"""The output dimension a sentence-transformers model folder declares, read from its JSON files
without importing sentence-transformers or loading the model.

The dimension is that of the last module that has one (as ``SentenceTransformer.get_embedding_dimension``
computes it): a ``Dense`` module's ``out_features``, or a ``Pooling`` module's token dimension times its
number of pooling modes; ``Normalize`` keeps it. Any other last module, a truncation setting or a file
that does not read as expected gives ``None``: the caller then loads the model and asks it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

LEGACY_POOLING_KEYS = (
    "pooling_mode_cls_token",
    "pooling_mode_max_tokens",
    "pooling_mode_mean_tokens",
    "pooling_mode_mean_sqrt_len_tokens",
    "pooling_mode_weightedmean_tokens",
    "pooling_mode_lasttoken",
)
"""The boolean pooling settings of older model folders, one per mode (none set means ``mean``)."""


def declared_dimension(folder: Path) -> int | None:
    """The vector size the model in ``folder`` (the one holding ``modules.json``) outputs, or ``None``
    when its files do not say it plainly."""
    try:
        if _json(folder / "config_sentence_transformers.json").get("truncate_dim") is not None:
            return None
        modules = json.loads((folder / "modules.json").read_text(encoding="utf-8"))
        for module in reversed(modules):
            kind = str(module["type"]).rsplit(".", 1)[-1]
            if kind == "Normalize":
                continue
            config = _json(folder / str(module.get("path", "")) / "config.json")
            if kind == "Dense":
                return _positive(config.get("out_features"))
            if kind == "Pooling":
                return _pooled(config)
            return None
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    return None


def _json(path: Path) -> dict[str, Any]:
    """A JSON object file, or ``{}`` when there is no such file."""
    if not path.is_file():
        return {}
    value = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(value, dict):
        raise ValueError(f"{path} is not a JSON object")
    return value


def _pooled(config: dict[str, Any]) -> int | None:
    """A Pooling module's output size: the token dimension times the number of pooling modes."""
    size = _positive(config.get("embedding_dimension", config.get("word_embedding_dimension")))
    mode = config.get("pooling_mode")
    if mode is None:
        modes = sum(1 for key in LEGACY_POOLING_KEYS if config.get(key) is True) or 1
    elif isinstance(mode, str):
        modes = 1
    elif isinstance(mode, list) and mode and all(isinstance(m, str) for m in mode):
        modes = len(mode)
    else:
        return None
    return None if size is None else size * modes


def _positive(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None
