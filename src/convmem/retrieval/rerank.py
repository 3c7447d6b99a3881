"""Rerankers: a second opinion on the head of a fused ranking.

A ``Reranker`` scores (query, text) pairs together — a cross-encoder reads both at once, where
an embedder compares two vectors made apart — so it orders a few dozen candidates better than
fusion can, at a cost per candidate. convmem applies one to the fused top candidates only (a
search's ``k``, at least ``SearchOptions.rerank_depth``), so its cost is bounded by what is
returned, never by what is stored. The engine runs it under a time limit; past it, or when it
fails, the fused order stands and the request's report says so (``"reranker: timeout 2000 ms"``).

Two kinds ship:

* ``CrossEncoderReranker``: a local sentence-transformers ``CrossEncoder`` from a path (the
  embeddings extra). Nothing downloads: the path holds the model.
* ``RerankAPI``: the rerank APIs, one client with a small shape per provider. Cohere's
  ``/v2/rerank`` and Jina's ``/v1/rerank`` (``{"query", "documents"}`` → ``{"results": [{"index",
  "relevance_score"}]}``, also served by vLLM and Infinity) and Hugging Face TEI's ``/rerank``
  (``{"query", "texts"}`` → ``[{"index", "score"}]``), with the retries, time limit and key
  handling of ``convmem.retrieval.http_api``.
"""

from __future__ import annotations

import threading
from collections.abc import Hashable, Sequence
from typing import Any, Protocol, TypeVar, runtime_checkable

from convmem.errors import BackendUnavailable, InvalidConfig
from convmem.retrieval.fusion import Fused
from convmem.retrieval.http_api import JsonEndpoint, api_key
from convmem.retrieval.model_names import ModelName, parse_model_name

K = TypeVar("K", bound=Hashable)

RERANK_RETRIEVER = "rerank"  # added to the retrievers of a hit the reranker ordered


@runtime_checkable
class Reranker(Protocol):
    """Scores texts for a query: higher is more relevant. Scores compare within one call."""

    @property
    def name(self) -> str: ...

    def score(self, query: str, texts: Sequence[str]) -> list[float]:
        """One score per text, in ``texts``' order."""
        ...


def reorder(fused: Sequence[Fused[K]], scores: Sequence[float]) -> list[Fused[K]]:
    """The first ``len(scores)`` of ``fused`` ordered by ``scores`` (best first; a tie keeps the
    fused order), each carrying its reranker score and the ``rerank`` retriever; the rest after
    them as they were."""
    head = list(fused[: len(scores)])
    order = sorted(range(len(head)), key=lambda i: -scores[i])  # stable: ties keep fused order
    reranked = [
        Fused(head[i].key, float(scores[i]), (*head[i].retrievers, RERANK_RETRIEVER)) for i in order
    ]
    return [*reranked, *fused[len(scores) :]]


class CrossEncoderReranker:
    """A local sentence-transformers ``CrossEncoder`` (loaded from ``path`` on first use, on the
    CPU, once per process)."""

    def __init__(
        self,
        path: str,
        *,
        batch_size: int = 32,
        max_length: int = 512,
        threads: int | None = None,
        name: str | None = None,
    ) -> None:
        """``threads`` sets torch's CPU threads for the process when the model loads (None
        leaves them be): on a busy two-core machine a MiniLM-L6-sized model scored 20 short
        pairs in 227 ms of CPU on one thread, 727 ms on two."""
        from convmem.retrieval.vector import require_sentence_transformers

        require_sentence_transformers("CrossEncoderReranker")
        self._threads = threads
        self._path = path
        self._batch_size = batch_size
        self._max_length = max_length
        self._name = name or path
        self._model: Any = None
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        return self._name

    def _load(self) -> Any:
        with self._lock:
            if self._model is None:
                from sentence_transformers import CrossEncoder

                if self._threads is not None:
                    import torch

                    torch.set_num_threads(self._threads)

                try:
                    self._model = CrossEncoder(
                        self._path, device="cpu", max_length=self._max_length
                    )
                except OSError as exc:  # no model at the path: say so without the hub's story
                    raise BackendUnavailable(
                        f"no cross-encoder could load from {self._path}"
                    ) from exc
            return self._model

    def score(self, query: str, texts: Sequence[str]) -> list[float]:
        if not texts:
            return []
        model = self._load()
        scores = model.predict(
            [(query, text) for text in texts],
            batch_size=self._batch_size,
            show_progress_bar=False,
            convert_to_numpy=True,
        )
        return [float(s) for s in scores.reshape(len(texts), -1)[:, 0]]


# where each provider's API is when the name gives no URL, and the variable its key is in
_HOSTED = {"cohere": "https://api.cohere.com/v2", "jina": "https://api.jina.ai/v1"}
_KEY_ENV = {"cohere": "COHERE_API_KEY", "jina": "JINA_API_KEY"}


class RerankAPI:
    """A rerank API: ``provider`` is ``"cohere"``, ``"jina"`` (the same shape; vLLM and Infinity
    serve it too) or ``"tei"`` (Hugging Face Text Embeddings Inference)."""

    def __init__(
        self,
        provider: str,
        model: str | None = None,
        *,
        base_url: str | None = None,
        api_key_env: str | None = None,
        timeout: float = 10.0,
        attempts: int = 3,
        max_chars: int = 4000,
        name: str | None = None,
    ) -> None:
        """``base_url`` defaults to the provider's hosted API (whose key, from ``COHERE_API_KEY``
        or ``JINA_API_KEY`` unless ``api_key_env`` names another variable, is then required);
        TEI has no hosted API. ``timeout``: seconds a call may take, retries included."""
        if provider not in ("cohere", "jina", "tei"):
            raise InvalidConfig("reranker", "the rerank APIs are cohere, jina and tei")
        if provider != "tei" and not model:
            raise InvalidConfig("reranker", f"{provider} needs a model")
        hosted = base_url is None
        if hosted and provider == "tei":
            raise InvalidConfig("reranker", "tei needs its URL: tei+http://host:port")
        base = (base_url or _HOSTED[provider]).rstrip("/")
        key_env = api_key_env or (_KEY_ENV.get(provider) if hosted else None)
        key = api_key(key_env, "reranker", required=key_env is not None)
        self._endpoint = JsonEndpoint(
            f"{base}/rerank", what="rerank", key=key, timeout=timeout, attempts=attempts
        )
        self._provider = provider
        self._model = model
        self._max_chars = max_chars
        self._name = name or f"{provider}:{model or base}"

    def __repr__(self) -> str:
        return f"RerankAPI({self._name!r}, {self._endpoint.url!r})"

    @property
    def name(self) -> str:
        return self._name

    def score(self, query: str, texts: Sequence[str]) -> list[float]:
        if not texts:
            return []
        documents = [text[: self._max_chars] or " " for text in texts]
        if self._provider == "tei":
            body: dict[str, Any] = {"query": query, "texts": documents, "truncate": True}
            reply = self._endpoint.post(body)
            return _scores(reply, "score", len(texts))
        body = {"model": self._model, "query": query, "documents": documents,
                "top_n": len(documents)}  # fmt: skip
        reply = self._endpoint.post(body)
        results = reply.get("results") if isinstance(reply, dict) else None
        return _scores(results, "relevance_score", len(texts))


def _scores(results: Any, field: str, count: int) -> list[float]:
    """One score per text from a list of ``{"index", field}``; every index once, or an error."""
    scores: list[float | None] = [None] * count
    try:
        for row in results:
            scores[int(row["index"])] = float(row[field])
    except (KeyError, TypeError, ValueError, IndexError):
        raise BackendUnavailable("the rerank API answered in an unknown shape") from None
    if any(score is None for score in scores):
        raise BackendUnavailable("the rerank API left some texts unscored")
    return [s for s in scores if s is not None]


def named_reranker(name: str | None) -> Reranker | None:
    """The reranker a name picks (``convmem.retrieval.model_names``); ``none`` or None: none."""
    if name is None:
        return None
    parsed = parse_model_name(name, "reranker")
    return reranker_of(parsed)


def reranker_of(parsed: ModelName) -> Reranker | None:
    if parsed.provider == "none":
        return None
    label = parsed.options.get("name")
    if parsed.provider == "cross-encoder":
        assert parsed.model is not None
        return CrossEncoderReranker(
            parsed.model,
            batch_size=parsed.count("batch_size", 32) or 32,
            max_length=parsed.count("max_length", 512) or 512,
            # one thread, as the embedders: on a shared machine a request is fastest so
            threads=parsed.count("threads", 1),
            name=label,
        )
    return RerankAPI(
        parsed.provider,
        parsed.model,
        base_url=parsed.base_url,
        api_key_env=parsed.options.get("api_key_env"),
        timeout=parsed.number("timeout", 10.0),
        attempts=parsed.count("attempts", 3) or 3,
        max_chars=parsed.count("max_chars", 4000) or 4000,
        name=label,
    )
