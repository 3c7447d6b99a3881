"""A local OpenAI-compatible embeddings server for fault tests: ``POST /v1/embeddings`` on
127.0.0.1, in a thread of the test (a worker process may call it too).

Its model is ``HashingEmbedder`` (deterministic, no download), so a vector it served equals the
one a test computes. ``mode`` switches how it answers, at any time:

- ``ok``: ``{"data": [{"embedding": [...], "index": i}, ...], "model": ..., "usage": ...}``
  (each embedding base64 of little-endian float32 when the request asks
  ``encoding_format: base64``, as OpenAI answers)
- ``fail``: HTTP 500 with an error body
- ``rate``: HTTP 429 with ``Retry-After: 1`` (a rate-limited API)
- ``hang``: holds the request until the mode changes (or ``hang_seconds`` pass), then answers
  as the new mode says

``requests`` counts the requests by the mode they met; ``texts`` the texts it embedded.

``embeddings_server(..., process=True)`` runs it in a process of its own (``python -m
tests.embed_server``), as a real embeddings API runs outside the application: its JSON work then
takes nothing from the caller's process. ``mode`` and ``requests`` reach it over ``/control``.
``HttpEmbedder`` is a minimal client of this protocol (timeout, no retries): convmem's own
remote client will speak the same protocol to the same server.
"""

from __future__ import annotations

import argparse
import base64
import json
import subprocess
import sys
import threading
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import numpy as np

from convmem.retrieval.vector import HashingEmbedder, Matrix

MODES = ("ok", "fail", "rate", "hang")


class EmbeddingsServer:
    """The server's state: its mode, counters and the model it serves."""

    def __init__(self, dimensions: int = 64, hang_seconds: float = 120.0) -> None:
        self.model = HashingEmbedder(dimensions)
        self.hang_seconds = hang_seconds
        self._mode = "ok"
        self._changed = threading.Condition()
        self.requests: Counter[str] = Counter()
        self.texts = 0
        self.url = ""

    @property
    def mode(self) -> str:
        return self._mode

    @mode.setter
    def mode(self, mode: str) -> None:
        if mode not in MODES:
            raise ValueError(f"mode is one of {MODES}")
        with self._changed:
            self._mode = mode
            self._changed.notify_all()

    def answer(self, body: dict[str, Any]) -> tuple[int, dict[str, str], dict[str, Any]]:
        with self._changed:
            met = self._mode
            self.requests[met] += 1
            if met == "hang":
                self._changed.wait_for(lambda: self._mode != "hang", self.hang_seconds)
                met = self._mode
        if met == "fail":
            return 500, {}, {"error": {"message": "the model is down", "type": "server_error"}}
        if met in ("rate", "hang"):
            return 429, {"Retry-After": "1"}, {"error": {"message": "slow down", "type": "rate"}}
        given = body.get("input")
        texts = [given] if isinstance(given, str) else list(given or [])
        if not all(isinstance(t, str) for t in texts):
            return 400, {}, {"error": {"message": "input must be strings", "type": "invalid"}}
        vectors = self.model.embed(texts)
        with self._changed:
            self.texts += len(texts)
        packed = body.get("encoding_format") == "base64"
        data = [
            {
                "object": "embedding",
                "index": i,
                "embedding": base64.b64encode(row.astype("<f4").tobytes()).decode()
                if packed
                else row.tolist(),
            }
            for i, row in enumerate(vectors)
        ]
        usage = {"prompt_tokens": len(texts), "total_tokens": len(texts)}
        return 200, {}, {"object": "list", "data": data, "model": body.get("model"), "usage": usage}


def _handler(state: EmbeddingsServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # quiet in tests
            pass

        def do_GET(self) -> None:
            if self.path.rstrip("/") != "/control":
                self._send(404, {}, {"error": {"message": "not found"}})
                return
            self._send(200, {}, {"mode": state.mode, "requests": dict(state.requests)})

        def do_POST(self) -> None:
            if self.path.rstrip("/") == "/control":
                length = int(self.headers.get("Content-Length") or 0)
                state.mode = json.loads(self.rfile.read(length))["mode"]
                self._send(200, {}, {"mode": state.mode})
                return
            if self.path.rstrip("/") != "/v1/embeddings":
                self._send(404, {}, {"error": {"message": "not found"}})
                return
            length = int(self.headers.get("Content-Length") or 0)
            try:
                body = json.loads(self.rfile.read(length) or b"{}")
            except ValueError:
                self._send(400, {}, {"error": {"message": "not JSON"}})
                return
            self._send(*state.answer(body))

        def _send(self, status: int, headers: dict[str, str], payload: dict[str, Any]) -> None:
            raw = json.dumps(payload).encode()
            try:
                self.send_response(status)
                for name, value in {**headers, "Content-Type": "application/json"}.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)
            except (BrokenPipeError, ConnectionResetError):  # the client gave up waiting
                pass

    return Handler


class ServerProcess:
    """An ``EmbeddingsServer`` in another process, driven like the in-process one."""

    def __init__(self, dimensions: int, hang_seconds: float) -> None:
        command = [sys.executable, "-m", "tests.embed_server", "--dimensions", str(dimensions),
                   "--hang-seconds", str(hang_seconds)]  # fmt: skip
        self._process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
        assert self._process.stdout is not None
        self.url = self._process.stdout.readline().strip()
        if not self.url.startswith("http://"):
            self._process.kill()
            raise RuntimeError("the embeddings server process did not start")
        self._control = httpx.Client(base_url=self.url.removesuffix("/v1"), timeout=10.0)
        self._mode = "ok"

    @property
    def mode(self) -> str:
        return self._mode

    @mode.setter
    def mode(self, mode: str) -> None:
        if mode != self._mode:  # one request per change, not per write
            self._control.post("/control", json={"mode": mode}).raise_for_status()
            self._mode = mode

    @property
    def requests(self) -> Counter[str]:
        return Counter(self._control.get("/control").json()["requests"])

    def stop(self) -> None:
        self._control.close()
        self._process.terminate()
        self._process.wait(10)


@contextmanager
def embeddings_server(
    dimensions: int = 64, hang_seconds: float = 120.0, *, process: bool = False
) -> Iterator[Any]:
    """A running server (its ``url`` ends in ``/v1``); stopped on exit, releasing any hang.
    ``process``: in a process of its own (a ``ServerProcess``), else a thread of this one."""
    if process:
        running = ServerProcess(dimensions, hang_seconds)
        try:
            yield running
        finally:
            running.stop()
        return
    yield from _in_thread(dimensions, hang_seconds)


def _in_thread(dimensions: int, hang_seconds: float) -> Iterator[EmbeddingsServer]:
    state = EmbeddingsServer(dimensions, hang_seconds)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    state.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    try:
        yield state
    finally:
        state.mode = "ok"  # release held requests
        server.shutdown()
        server.server_close()


class EmbeddingError(Exception):
    """The server answered with an error status (its code, never the texts)."""


class HttpEmbedder:
    """A minimal ``Embedder`` over the protocol: one request per call, ``timeout`` seconds,
    no retries (what the background filler must ride out)."""

    def __init__(
        self, url: str, *, model: str = "hashing", dimensions: int = 64, timeout: float = 5.0
    ) -> None:
        self._client = httpx.Client(base_url=url, timeout=timeout)
        self._model = model
        self._dimensions = dimensions
        self.calls = 0

    @property
    def name(self) -> str:
        return f"http-{self._model}-{self._dimensions}"

    @property
    def dimensions(self) -> int:
        return self._dimensions

    def embed(self, texts: Sequence[str]) -> Matrix:
        self.calls += 1
        if not texts:
            return np.zeros((0, self._dimensions), dtype=np.float32)
        response = self._client.post(
            "/embeddings", json={"model": self._model, "input": list(texts)}
        )
        if response.status_code != 200:
            raise EmbeddingError(f"embeddings server answered {response.status_code}")
        rows = sorted(response.json()["data"], key=lambda row: row["index"])
        out = np.asarray([row["embedding"] for row in rows], dtype=np.float32)
        if out.shape != (len(texts), self._dimensions):
            raise EmbeddingError(f"expected {len(texts)} rows of {self._dimensions}")
        return out

    def close(self) -> None:
        self._client.close()


def main() -> None:
    """Serve until terminated; the first line printed is the URL (ending in ``/v1``)."""
    parser = argparse.ArgumentParser(description="the fault-injecting embeddings server")
    parser.add_argument("--dimensions", type=int, default=64)
    parser.add_argument("--hang-seconds", type=float, default=120.0)
    args = parser.parse_args()
    with contextmanager(_in_thread)(args.dimensions, args.hang_seconds) as state:
        print(state.url, flush=True)
        threading.Event().wait()


if __name__ == "__main__":
    main()
