"""A dataset file's JSON read piece by piece: its top-level scalars whole, the items of its arrays one
at a time, so that neither the file's text nor its parsed value is ever in memory as a whole.

:func:`stream_dataset` understands only the happy path of the format: a JSON object whose values are
read whole, except arrays under :data:`STREAMED_KEYS`, whose items are yielded one by one. Anything
else (text that is not UTF-8 or not JSON, a key given twice, a number a hook refuses) is a
:class:`UnstreamableError`: the caller reads the file the whole way instead, which words the error.
"""

from __future__ import annotations

import codecs
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

CHUNK_BYTES = 1 << 22  # bytes read at a time
STREAMED_KEYS = frozenset({"nodes", "edges"})
WHITESPACE = " \t\n\r"


class UnstreamableError(Exception):
    """The file is not a dataset this reader can stream (see the module docstring)."""


class _Text:
    """The file's text, decoded a chunk at a time, with a read position."""

    def __init__(self, path: Path) -> None:
        self.file = path.open("rb")
        self.decoder = codecs.getincrementaldecoder("utf-8-sig")()
        self.buffer = ""
        self.pos = 0
        self.eof = False

    def more(self) -> bool:
        """Append the next chunk (dropping what was read); False at the end of the file."""
        if self.eof:
            return False
        data = self.file.read(CHUNK_BYTES)
        try:
            text = self.decoder.decode(data, final=not data)
        except UnicodeDecodeError:
            raise UnstreamableError from None
        self.eof = not data
        self.buffer = self.buffer[self.pos :] + text
        self.pos = 0
        return True

    def peek(self) -> str:
        """The next character that is not white space ("" at the end of the file)."""
        while True:
            buffer, pos = self.buffer, self.pos
            while pos < len(buffer) and buffer[pos] in WHITESPACE:
                pos += 1
            self.pos = pos
            if pos < len(buffer):
                return buffer[pos]
            if not self.more():
                return ""

    def expect(self, char: str) -> None:
        if self.peek() != char:
            raise UnstreamableError
        self.pos += 1

    def value(self, decode: Callable[[str, int], tuple[Any, int]]) -> Any:
        """The JSON value at the position (after white space); one that ends where the text read so far
        ends is read again with more text (a number may go on)."""
        self.peek()
        while True:
            try:
                value, end = decode(self.buffer, self.pos)
            except (json.JSONDecodeError, StopIteration):  # StopIteration: no value where one must be
                if self.more():
                    continue
                raise UnstreamableError from None
            if end < len(self.buffer) or self.eof or not self.more():
                self.pos = end
                return value

    def close(self) -> None:
        self.file.close()


Event = tuple[str, bool, Any]  # (key, whether the value is an item of the key's array, value)


def stream_dataset(path: Path, decoder: json.JSONDecoder) -> Iterator[Event]:
    """The file's top level as events: ``(key, False, value)`` for a value read whole, ``(key, True,
    item)`` for each item of an array under :data:`STREAMED_KEYS`, then ``(key, True, STREAM_END)``. Raises
    :class:`UnstreamableError` (at any point: items already yielded are then to be thrown away), or
    ``OSError`` opening the file. Parse hooks of ``decoder`` that raise make it :class:`UnstreamableError`."""
    text = _Text(path)
    # the scanner raw_decode calls, without raw_decode's wrapper around each item
    decode: Callable[[str, int], tuple[Any, int]] = decoder.scan_once  # type: ignore[attr-defined]
    seen: set[str] = set()
    try:
        text.expect("{")
        if text.peek() == "}":
            text.pos += 1
        else:
            while True:
                key = text.value(decode)
                if type(key) is not str or key in seen:
                    raise UnstreamableError
                seen.add(key)
                text.expect(":")
                if key in STREAMED_KEYS and text.peek() == "[":
                    text.pos += 1
                    yield from _items(text, key, decode)
                else:
                    yield key, False, text.value(decode)
                if text.peek() == "}":
                    text.pos += 1
                    break
                text.expect(",")
        if text.peek() != "":
            raise UnstreamableError
    except UnstreamableError:
        raise
    except Exception:  # a parse hook's refusal, a nesting too deep: the whole read words it
        raise UnstreamableError from None
    finally:
        text.close()


STREAM_END = object()  # the event value after an array's last item


def _items(text: _Text, key: str, decode: Callable[[str, int], tuple[Any, int]]) -> Iterator[Event]:
    if text.peek() == "]":
        text.pos += 1
        yield key, True, STREAM_END
        return
    while True:
        yield key, True, text.value(decode)
        char = text.peek()
        text.pos += 1
        if char == "]":
            yield key, True, STREAM_END
            return
        if char != ",":
            raise UnstreamableError
