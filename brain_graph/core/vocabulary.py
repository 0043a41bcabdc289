"""The fixed vocabulary of the data model, shared by the pipeline and the stores: the node types the
pipeline treats specially, the edge types it knows, and the grammar of every edge type.

A leaf module (no imports from brain_graph), so stores can know what a cluster is without importing
the embedding profiles or the edge allowlist."""

from __future__ import annotations

import re

from brain_graph.core.errors import ConfigurationError

WORK_ITEM = "cdm.work_item"
DOC = "cdm.doc"
CODE_FILE = "code.file"
SIGNAL = "signal.instance"
CLUSTER = "kg.cluster"

HAS_SIGNAL = "HAS_SIGNAL"
IN_CLUSTER = "IN_CLUSTER"

MAX_EDGE_TYPE_CHARS = 64
_EDGE_TYPE_PATTERN = re.compile(r"^[A-Z][A-Z0-9_]{0,63}$")


def check_edge_type(edge_type: str) -> str:
    """Return ``edge_type`` if it is a plain UPPER_SNAKE identifier, else raise."""
    if not _EDGE_TYPE_PATTERN.match(edge_type):
        raise ConfigurationError(f"edge type {edge_type!r} is not an UPPER_SNAKE_CASE identifier")
    return edge_type
