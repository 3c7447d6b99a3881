"""A model API on 127.0.0.1 for tests: OpenAI-compatible embeddings and the rerank APIs, with
faults on demand. Nothing downloads; every reply is computed here.

Endpoints (POST, JSON):

* ``/v1/embeddings`` (OpenAI, Ollama, vLLM, TEI, LiteLLM) and Azure's
  ``/openai/deployments/{name}/embeddings?api-version=…``: ``{"model", "input": [...]}`` →
  ``{"data": [{"index", "embedding"}]}``, the vectors of convmem's ``HashingEmbedder`` at
  ``dimensions`` (so similar texts land near each other), unnormalised when ``unit`` is off.
  ``encoding_format: base64`` is answered as OpenAI answers it (base64 of little-endian float32)
  unless ``base64`` says the server ignores the field (floats) or refuses it (HTTP 400).
* ``/v1/rerank`` and ``/v2/rerank`` (Cohere, Jina): ``{"query", "documents"}`` →
  ``{"results": [{"index", "relevance_score"}]}``; ``/rerank`` (TEI): ``{"query", "texts"}`` →
  ``[{"index", "score"}]``. The score is the share of the query's words the text holds.

Faults: ``mode`` is what every request gets — ``"ok"``, ``"500"``, ``"429"`` (with
``Retry-After: 0``) or ``"hang"`` (no answer until the server closes or ``release()``);
``script([...])`` queues modes for the next requests, one each, before ``mode`` applies again.
Every request is recorded (path, headers, body) in ``requests``.

Use it as a context manager: ``with ModelServer() as server: server.url`` (``http://127.0.0.1:PORT``).
"""

from __future__ import annotations

import base64
import json
import re
import threading
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal

from convmem.retrieval.vector import HashingEmbedder

MODES = ("ok", "500", "429", "hang")
_AZURE = re.compile(r"^/openai/deployments/[^/]+/embeddings$")


@dataclass
class Recorded:
    path: str
    headers: dict[str, str]
    body: Any
    mode: str


@dataclass
class ModelServer:
    dimensions: int = 64
    unit: bool = True
    mode: str = "ok"
    base64: Literal["answered", "ignored", "refused"] = "answered"
    requests: list[Recorded] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._script: deque[str] = deque()
        self._lock = threading.Lock()
        self._released = threading.Event()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # --- control --------------------------------------------------------------------------------

    def script(self, modes: list[str]) -> None:
        """The next requests get these modes, one each, in order."""
        assert all(m in MODES for m in modes), modes
        with self._lock:
            self._script.extend(modes)

    def release(self) -> None:
        """Let hanging requests go (they answer 503)."""
        self._released.set()

    @property
    def url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def count(self, path_part: str = "") -> int:
        return sum(1 for r in self.requests if path_part in r.path)

    def __enter__(self) -> ModelServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def start(self) -> None:
        server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        server.daemon_threads = True
        self._server = server
        self._thread = threading.Thread(target=server.serve_forever, daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._released.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    # --- behaviour ------------------------------------------------------------------------------

    def _next_mode(self) -> str:
        with self._lock:
            return self._script.popleft() if self._script else self.mode

    def _record(self, path: str, headers: dict[str, str], body: Any, mode: str) -> None:
        with self._lock:
            self.requests.append(Recorded(path, headers, body, mode))

    def embeddings(self, body: Any) -> Any:
        texts = body["input"]
        if isinstance(texts, str):
            texts = [texts]
        rows = HashingEmbedder(self.dimensions).embed(texts)
        if not self.unit:
            rows = rows * 3.0
        packed = body.get("encoding_format") == "base64" and self.base64 == "answered"
        data = [{"object": "embedding", "index": i,
                 "embedding": base64.b64encode(row.astype("<f4").tobytes()).decode() if packed
                 else [float(x) for x in row]}
                for i, row in enumerate(rows)]  # fmt: skip
        data.reverse()  # out of order on purpose: the client sorts by index
        return {"object": "list", "data": data, "model": body.get("model", "")}

    @staticmethod
    def relevance(query: str, text: str) -> float:
        asked = set(re.findall(r"\w+", query.lower()))
        held = set(re.findall(r"\w+", text.lower()))
        return len(asked & held) / max(1, len(asked))

    def rerank(self, path: str, body: Any) -> Any:
        query = body["query"]
        if path == "/rerank":  # TEI
            scores = [self.relevance(query, t) for t in body["texts"]]
            return sorted(
                ({"index": i, "score": s} for i, s in enumerate(scores)),
                key=lambda r: -float(r["score"]),
            )
        scores = [self.relevance(query, t) for t in body["documents"]]
        results = [{"index": i, "relevance_score": s} for i, s in enumerate(scores)]
        results.sort(key=lambda r: -float(r["relevance_score"]))
        return {"results": results[: body.get("top_n") or len(results)]}


def _handler(owner: ModelServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # quiet
            return None

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            path = self.path.split("?", 1)[0]
            mode = owner._next_mode()
            try:
                body = json.loads(raw or b"null")
            except ValueError:
                body = None
            owner._record(self.path, dict(self.headers.items()), body, mode)
            if mode == "hang":
                owner._released.wait(60)
                return self._send(503, {"error": "released"})
            if mode == "500":
                return self._send(500, {"error": "failing on purpose"})
            if mode == "429":
                return self._send(429, {"error": "slow down"}, {"Retry-After": "0"})
            if path == "/v1/embeddings" or _AZURE.match(path):
                if owner.base64 == "refused" and body.get("encoding_format") == "base64":
                    return self._send(400, {"error": "unknown encoding_format"})
                return self._send(200, owner.embeddings(body))
            if path in ("/rerank", "/v1/rerank", "/v2/rerank"):
                return self._send(200, owner.rerank(path, body))
            return self._send(404, {"error": "no such endpoint"})

        def _send(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
            data = json.dumps(payload).encode()
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):  # the client gave up waiting
                pass

    return Handler
