"""A read-only sequence of strings over two arrays, so that an index file's node ids and terms are
used where they are mapped instead of being decoded into Python objects when the file is opened."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from functools import cached_property
from itertools import pairwise
from typing import overload

import numpy as np
import numpy.typing as npt


class StringTable(Sequence[str]):
    """The strings whose UTF-8 bytes are ``data[offsets[i]:offsets[i + 1]]``. Strings sorted by code
    point are sorted by their UTF-8 bytes too, so :func:`bisect.bisect_left` works over a table built
    from a sorted list."""

    def __init__(self, data: npt.NDArray[np.uint8], offsets: npt.NDArray[np.int64]) -> None:
        self.data = data
        self.offsets = offsets

    @classmethod
    def of(cls, strings: Sequence[str]) -> StringTable:
        encoded = [text.encode("utf-8") for text in strings]
        offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
        np.cumsum([len(item) for item in encoded], out=offsets[1:])
        return cls(np.frombuffer(b"".join(encoded), dtype=np.uint8), offsets)

    def fits(self) -> bool:
        """Whether the offsets are bounds into the data: ascending, from 0 to its end."""
        offsets = self.offsets
        return (
            self.data.dtype == np.uint8
            and self.data.ndim == 1
            and offsets.dtype == np.int64
            and offsets.ndim == 1
            and len(offsets) >= 1
            and int(offsets[0]) == 0
            and int(offsets[-1]) == len(self.data)
            and bool(np.all(np.diff(offsets) >= 0))
        )

    def __len__(self) -> int:
        return len(self.offsets) - 1

    @overload
    def __getitem__(self, index: int) -> str: ...

    @overload
    def __getitem__(self, index: slice) -> list[str]: ...

    def __getitem__(self, index: int | slice) -> str | list[str]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(index)
        text, bounds = self._decoded
        piece = text[bounds[index] : bounds[index + 1]]
        return piece if isinstance(piece, str) else piece.decode("utf-8")

    def __iter__(self) -> Iterator[str]:
        text, bounds = self._decoded
        if isinstance(text, str):
            return (text[start:end] for start, end in pairwise(bounds))
        return (text[start:end].decode("utf-8") for start, end in pairwise(bounds))

    @cached_property
    def _decoded(self) -> tuple[str | bytes, list[int]]:
        """The data (as text when it is ASCII, whose byte offsets are character offsets) and the
        offsets, copied once: indexing mapped arrays item by item costs more than the copy."""
        data = self.data.tobytes()
        return (data.decode("ascii") if data.isascii() else data), self.offsets.tolist()
