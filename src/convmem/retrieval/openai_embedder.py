"""An ``Embedder`` over an OpenAI-compatible ``/v1/embeddings`` API.

OpenAI, Azure OpenAI, Ollama, vLLM, Hugging Face TEI and LiteLLM all answer the same request
(``{"model", "input": [...]}`` → ``{"data": [{"index", "embedding"}]}``); Azure differs in its
URL (a deployment and an ``api-version``) and its ``api-key`` header. What a production client
needs, on top of ``convmem.retrieval.http_api`` (retries with jitter, a time limit per call, the
key from the environment):

* **Batching**: a call's texts go in requests of ``batch_size`` (TEI refuses more than 32 by
  default; OpenAI takes 2048).
* **Bounded concurrency**: at most ``concurrency`` requests in flight from this embedder, across
  every thread of the process (a backfill's batches run side by side up to it).
* **Dimensions checked**: declared (``dimensions``) or learnt from the first reply; a reply of
  another width is ``InvalidConfig`` (declared) or ``BackendUnavailable`` (the model changed
  under the name), never a vector stored beside others it cannot be compared with.
* **Long texts cut** to ``max_chars`` characters (an API refuses an input over its token limit,
  and one such turn would fail its whole batch on every retry); empty texts are sent as a space
  (OpenAI refuses empty strings).

* **Vectors as base64**: the request asks ``encoding_format: base64`` (as OpenAI's own SDK does)
  and a row may come back as base64 of little-endian float32 or as a list of numbers (a server
  that ignores the field). Parsing a reply of floats holds the interpreter lock for its whole
  length — 32 rows of 1,536 numbers is 1 MB of JSON, 17 ms of CPU on this project's machine —
  and in embedded use the background filler shares its process with the application's writes;
  base64 is a quarter of the bytes and decodes in 0.9 ms. A server that refuses the field (HTTP
  400/422) is asked for floats from then on (``encoding_format=float`` in the name asks for
  floats always).

Vectors are normalised here (Ollama's are not unit length). The embedder's ``name`` is the model's
(``text-embedding-3-small``, and ``@512`` when ``dimensions`` shortens OpenAI's vectors), not the
URL's: the same model served elsewhere gives the same vectors. ``name=`` overrides it.
"""

from __future__ import annotations

import base64
import os
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Literal

import numpy as np

from convmem.errors import BackendUnavailable, InvalidConfig
from convmem.retrieval.http_api import JsonEndpoint, RequestRefused, api_key
from convmem.retrieval.matrix import Matrix, normalise

OPENAI_URL = "https://api.openai.com/v1"
AZURE_API_VERSION = "2024-10-21"
ENCODINGS = ("base64", "float")
# what a server that does not know ``encoding_format: base64`` answers
_REFUSED_ENCODING = frozenset({400, 422})


class OpenAIEmbedder:
    """Texts to unit vectors through an OpenAI-compatible embeddings API."""

    def __init__(
        self,
        model: str,
        *,
        base_url: str = OPENAI_URL,
        api_key_env: str | None = "OPENAI_API_KEY",
        flavour: Literal["openai", "azure"] = "openai",
        api_version: str = AZURE_API_VERSION,
        dimensions: int | None = None,
        send_dimensions: bool = False,
        batch_size: int = 32,
        concurrency: int = 4,
        timeout: float = 30.0,
        attempts: int = 4,
        max_chars: int = 8000,
        name: str | None = None,
        encoding_format: str = "base64",
    ) -> None:
        """``model``: the model (for Azure, the deployment). ``api_key_env``: the environment
        variable holding the key (None: no key, e.g. a local server). ``dimensions``: the width
        expected (checked on every reply); with ``send_dimensions`` it is also asked for (OpenAI's
        text-embedding-3 models shorten their vectors to it). ``timeout``: seconds a call may take
        in all, retries included; ``attempts``: at most that many tries per request.
        ``encoding_format``: how vectors travel, ``base64`` (falls back to ``float`` once if the
        server refuses it) or ``float``."""
        if encoding_format not in ENCODINGS:
            raise InvalidConfig("embedder.encoding_format", "is base64 or float")
        if batch_size < 1 or concurrency < 1 or attempts < 1 or max_chars < 1:
            raise InvalidConfig("embedder", "batch_size, concurrency, attempts, max_chars >= 1")
        if dimensions is not None and dimensions < 1:
            raise InvalidConfig("embedder.dimensions", "must be a positive whole number")
        base = base_url.rstrip("/")
        key = api_key(api_key_env, "embedder", required=api_key_env is not None)
        if flavour == "azure":
            url = f"{base}/openai/deployments/{model}/embeddings?api-version={api_version}"
            header = "api-key"
        else:
            url, header = f"{base}/embeddings", "Authorization"
        self._endpoint = JsonEndpoint(
            url, what="embeddings", key=key, key_header=header, timeout=timeout, attempts=attempts
        )
        self._model = model
        self._declared = dimensions
        self._learnt: int | None = None
        self._send_dimensions = send_dimensions and dimensions is not None
        self._batch_size = batch_size
        self._max_chars = max_chars
        self._encoding = encoding_format
        self._encoding_confirmed = encoding_format == "float"
        self._name = name or (f"{model}@{dimensions}" if self._send_dimensions else model)
        self._slots = threading.BoundedSemaphore(concurrency)
        self._concurrency = concurrency
        self._pool: ThreadPoolExecutor | None = None
        self._pool_pid = 0
        self._pool_lock = threading.Lock()

    def __repr__(self) -> str:
        return f"OpenAIEmbedder({self._name!r}, {self._endpoint.url!r})"

    @property
    def name(self) -> str:
        return self._name

    @property
    def dimensions(self) -> int:
        """Declared, or learnt from the first reply (one call, made now if none was yet)."""
        if self._declared is not None:
            return self._declared
        if self._learnt is None:
            self.embed(["dimensions"])
        assert self._learnt is not None
        return self._learnt

    def embed(self, texts: Sequence[str]) -> Matrix:
        if not texts:
            return np.zeros((0, self._declared or self._learnt or 0), dtype=np.float32)
        batches = [
            list(texts[start : start + self._batch_size])
            for start in range(0, len(texts), self._batch_size)
        ]
        if len(batches) == 1:
            return self._request(batches[0])
        return np.concatenate(list(self._executor().map(self._request, batches)))

    def _executor(self) -> ThreadPoolExecutor:
        pid = os.getpid()
        with self._pool_lock:
            if self._pool is None or self._pool_pid != pid:  # a forked child: threads of its own
                self._pool = ThreadPoolExecutor(self._concurrency, "convmem-embeddings")
                self._pool_pid = pid
            return self._pool

    def _request(self, texts: list[str]) -> Matrix:
        body: dict[str, Any] = {
            "model": self._model,
            "input": [text[: self._max_chars] or " " for text in texts],
            "encoding_format": self._encoding,
        }
        if self._send_dimensions:
            body["dimensions"] = self._declared
        with self._slots:  # at most ``concurrency`` in flight, whichever thread asks
            try:
                reply = self._endpoint.post(body)
            except RequestRefused as refused:
                if self._encoding_confirmed or refused.status not in _REFUSED_ENCODING:
                    raise
                # a server that knows only floats: ask it for them from now on
                self._encoding = body["encoding_format"] = "float"
                reply = self._endpoint.post(body)
            self._encoding_confirmed = True
        return self._rows(reply, len(texts))

    def _rows(self, reply: Any, count: int) -> Matrix:
        try:
            data = sorted(reply["data"], key=lambda row: int(row.get("index", 0)))
            rows = np.asarray([_vector(row["embedding"]) for row in data], dtype=np.float32)
        except (KeyError, TypeError, ValueError, AttributeError):
            raise BackendUnavailable("the embeddings API answered in an unknown shape") from None
        if rows.ndim != 2 or rows.shape[0] != count:
            raise BackendUnavailable(
                f"the embeddings API returned {rows.shape[0] if rows.ndim else 0} vectors "
                f"for {count} texts"
            )
        self._check_width(int(rows.shape[1]))
        if not np.isfinite(rows).all():
            raise BackendUnavailable("the embeddings API returned a vector that is not finite")
        return normalise(rows)

    def _check_width(self, width: int) -> None:
        if self._declared is not None:
            if width != self._declared:
                raise InvalidConfig(
                    "embedder.dimensions",
                    f"declared {self._declared}, but {self._model} returns {width}",
                )
            return
        if self._learnt is None:
            self._learnt = width
        elif width != self._learnt:
            raise BackendUnavailable(
                f"{self._model} returned {width} dimensions after {self._learnt}: "
                "the model behind the name changed"
            )


def _vector(embedding: Any) -> Any:
    """One row as the API sent it: base64 of little-endian float32, or a list of numbers."""
    if isinstance(embedding, str):
        return np.frombuffer(base64.b64decode(embedding, validate=True), dtype="<f4")
    return embedding
