"""The canonical JSON text the stores keep maps and lists in (node text, properties, ACLs)."""

from __future__ import annotations

import json
from typing import Any


def canonical_json(value: Any) -> str:
    """Sorted keys, no white space, non-ASCII kept: equal values give equal text."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
