"""An OpenAI-compatible embeddings endpoint on loopback, for tests that drive the real client.

``POST /v1/embeddings`` answers ``{"data": [{"embedding": ...}]}`` with deterministic vectors: each word
of a text (lowercase letters and digits) adds 1 to the coordinate its SHA-256 picks, and the vector is
scaled to unit length, so texts sharing words are similar. It answers ``encoding_format`` ``float`` or
``base64`` (little-endian float32, what the OpenAI client asks for by default). What it does can be
set between requests: ``dimension`` (the vectors' length), ``fail`` (the next statuses to answer
instead, e.g. ``[429, 429]``), ``hang`` (hold every request until the endpoint closes). It records
each request's inputs and its ``Authorization`` header.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import struct
import threading
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

WORD = re.compile(r"[a-z0-9]+")


def vector(text: str, dimension: int) -> list[float]:
    """The endpoint's vector of a text (see the module docstring)."""
    values = [0.0] * dimension
    for word in WORD.findall(text.lower()):
        values[int.from_bytes(hashlib.sha256(word.encode()).digest()[:4], "big") % dimension] += 1.0
    norm = sum(value * value for value in values) ** 0.5 or 1.0
    return [value / norm for value in values]


class Endpoint:
    """The endpoint, serving in a daemon thread from :meth:`start` until :meth:`close`."""

    def __init__(self, dimension: int = 16, port: int = 0) -> None:
        self.dimension = dimension
        self.fail: deque[int] = deque()
        self.hang = False
        self.inputs: list[list[str]] = []
        self.authorizations: list[str | None] = []
        self.statuses: list[int] = []
        self._closed = threading.Event()
        self._server = ThreadingHTTPServer(("127.0.0.1", port), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> Endpoint:
        self._thread.start()
        return self

    def close(self) -> None:
        self._closed.set()
        self._server.shutdown()
        self._server.server_close()

    def _answer(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        if self.fail:
            status = self.fail.popleft()
            return status, {"error": {"message": f"status {status}", "type": "test", "code": str(status)}}
        texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
        self.inputs.append(list(texts))
        rows = []
        for index, text in enumerate(texts):
            values = vector(str(text), self.dimension)
            if body.get("encoding_format") == "base64":
                encoded: Any = base64.b64encode(struct.pack(f"<{len(values)}f", *values)).decode()
            else:
                encoded = values
            rows.append({"object": "embedding", "index": index, "embedding": encoded})
        usage = {"prompt_tokens": 0, "total_tokens": 0}
        return 200, {"object": "list", "data": rows, "model": body.get("model"), "usage": usage}

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                return

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                endpoint.authorizations.append(self.headers.get("authorization"))
                if endpoint.hang:
                    endpoint._closed.wait()
                    return
                status, answer = (404, {"error": {"message": "not found"}})
                if self.path.rstrip("/") == "/v1/embeddings":
                    status, answer = endpoint._answer(body)
                endpoint.statuses.append(status)
                payload = json.dumps(answer).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(payload)))
                if status == 429:
                    self.send_header("retry-after", "0")
                self.end_headers()
                self.wfile.write(payload)

        return Handler
