"""What a write of the write side did, counted."""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any


@dataclass
class IndexReport:
    """Counts of one indexing run or hook call (vectors, per node and profile).

    ``embedded``: vectors (re)computed and written; ``unchanged``: current vectors left alone;
    ``deleted``: vectors removed (their node is gone, has no text any more, or is no longer of the
    profile's types); ``pending``: nodes left without a current vector because the embedder failed
    on them (the next run retries them); ``truncated``: embedded texts cut to the profile's or the
    embedder's input limit; ``nodes``/``edges``: graph records written or deleted (hooks and loads).
    """

    embedded: int = 0
    unchanged: int = 0
    deleted: int = 0
    pending: int = 0
    truncated: int = 0
    nodes: int = 0
    edges: int = 0
    seconds: float = 0.0

    def add(self, other: IndexReport) -> None:
        """Add another report's counts to this one."""
        for field in fields(self):
            setattr(self, field.name, getattr(self, field.name) + getattr(other, field.name))

    def to_json(self) -> dict[str, Any]:
        """The counts as JSON (``seconds`` rounded to milliseconds)."""
        return asdict(self) | {"seconds": round(self.seconds, 3)}

    def summary(self) -> str:
        """One line for people."""
        if self.embedded == self.deleted == self.pending == 0:
            head = f"nothing to do: {self.unchanged} vector(s) already current"
        else:
            head = (
                f"embedded {self.embedded}, unchanged {self.unchanged}, deleted {self.deleted}, "
                f"pending {self.pending}, truncated {self.truncated}"
            )
        return f"{head} ({self.seconds:.1f} s)"
