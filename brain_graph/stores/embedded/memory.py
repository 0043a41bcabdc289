"""The memory this process may use, and the default budget of the vector cache derived from it.

The default budget is a quarter of what the process may use: the physical memory, or the container's
limit when one is set (cgroup v2 ``memory.max``, cgroup v1 ``memory.limit_in_bytes``), and never
below :data:`MIN_DEFAULT_CACHE_MB`, so it grows with the machine (why not a fixed budget:
docs/internals/embedded-store.md).
"""

from __future__ import annotations

import os
from pathlib import Path

MiB = 1024 * 1024
MIN_DEFAULT_CACHE_MB = 512
CACHE_SHARE = 4  # the default budget is 1 / CACHE_SHARE of the available memory
CGROUP_ROOT = Path("/sys/fs/cgroup")
_CGROUP_FILES = ("memory.max", "memory/memory.limit_in_bytes")  # v2, then v1
_UNLIMITED_V1 = 1 << 60  # v1 reports "no limit" as a huge number (about 2**63 rounded to pages)


def physical_memory() -> int | None:
    """Bytes of physical memory (None where the platform does not say)."""
    try:
        pages, page_size = os.sysconf("SC_PHYS_PAGES"), os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        return None
    return pages * page_size if pages > 0 and page_size > 0 else None


def container_limit(root: Path | None = None) -> int | None:
    """The memory limit of this process's cgroup in bytes (None: no limit, or no cgroup file), read
    under ``root`` (default :data:`CGROUP_ROOT`)."""
    for name in _CGROUP_FILES:
        try:
            text = ((root or CGROUP_ROOT) / name).read_text(encoding="ascii").strip()
        except (OSError, UnicodeDecodeError):
            continue
        if text.isdigit() and 0 < int(text) < _UNLIMITED_V1:
            return int(text)
        return None  # "max", or v1's "unlimited"
    return None


def available_memory(root: Path | None = None) -> int | None:
    """What this process may use: the smaller of physical memory and the container limit."""
    known = [value for value in (physical_memory(), container_limit(root)) if value is not None]
    return min(known) if known else None


def default_cache_mb(available: int | None = None) -> int:
    """The default vector cache budget in MiB: ``available`` (default: :func:`available_memory`)
    divided by :data:`CACHE_SHARE`, at least :data:`MIN_DEFAULT_CACHE_MB`."""
    memory = available if available is not None else available_memory()
    if memory is None:
        return MIN_DEFAULT_CACHE_MB
    return max(MIN_DEFAULT_CACHE_MB, memory // CACHE_SHARE // MiB)
