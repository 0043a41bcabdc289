"""The wheel holds every package of the source tree: ``tool.setuptools.packages`` in pyproject.toml
names each folder of ``brain_graph`` with an ``__init__.py`` (a non-editable install, such as the
LangGraph server image's ``pip install .``, would otherwise lack it and fail at import)."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_every_package_is_listed() -> None:
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]["packages"])
    found = {".".join(init.parent.relative_to(ROOT).parts) for init in (ROOT / "brain_graph").rglob("__init__.py")}
    assert found - listed == set()
