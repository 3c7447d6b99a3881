"""A sentence-transformers model run by ONNX Runtime: the same vectors in a third of the time.

A short query through all-MiniLM-L6-v2 takes about 12 ms in torch on one core and about 5 ms in
ONNX Runtime; the vectors agree to 1e-6, so they keep the model's name and mix freely with
vectors torch wrote. The model is exported once (torch's exporter, attention in its plain
"eager" form, which traces to a graph that masks padding correctly) into a cache folder keyed by
a digest of its weights and the versions involved, written atomically so concurrent processes
never read half a file. Every load checks the graph against torch on a padded probe batch; a
graph that disagrees is not used (the caller stays on torch).

Queries can take a smaller graph: the same one with its weights quantized to int8 (ONNX
Runtime's dynamic quantization, per channel), about three times faster (1.5 ms against 4.7 ms a
LoCoMo question on one core). Its vectors are close to the float graph's, not equal (cosine
0.991-0.999 on the LoCoMo questions, 0.97-0.99 for one to three words; padded in a batch a text
drifts further, so queries go one at a time). So it only ever embeds queries, which are compared
with the stored float vectors and never stored: on the LoCoMo development split evidence
recall@10 stayed at 0.853 -> 0.854 (hybrid) and 0.674 -> 0.674 (vector). Indexing turns and
words with it as well cost recall (hybrid 0.837: the expansion's word similarities moved), so
it does not. Its file is derived from the float graph's and kept beside it, in ``qint8/``,
checked on every load against torch (cosine at least ``_INT8_AGREEMENT`` on the probe texts).

The cache folder is ``$CONVMEM_CACHE_DIR``, else ``$XDG_CACHE_HOME/convmem``, else
``~/.cache/convmem``. It holds model graphs only, never text.
"""

from __future__ import annotations

import hashlib
import logging
import os
import tempfile
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from convmem.errors import BackendUnavailable
from convmem.retrieval.matrix import Matrix, normalise

log = logging.getLogger(__name__)

# Bump when the exported graph's inputs, outputs or export settings change.
EXPORT_VERSION = 1
# Texts of different lengths, so export and check cover padding and the attention mask; the check
# uses other shapes than the export, so a size the tracer froze into the graph would show.
_PROBE = ("a", "what did we decide about the seats on the evening train to Lyon last week?")
_CHECK = (
    "I took up pottery last month and I love it.",
    "ok",
    "The meeting moved to Thursday at 10:30 because the room on the third floor was booked.",
)
# Texts on which the direct tokenizer must give the model's own ids (beside the ones above): case,
# accents, other scripts, emoji, spacing, and one past the model's length limit.
_ID_CHECK = (
    "  Crème BRÛLÉE, naïve café!  ",
    "東京で会いましょう。",
    "مرحبا بالعالم",
    "Привет, как дела? 🙂",
    "tabs\tand\nnew lines",
    " ".join(["pottery"] * 400),
)
_TOLERANCE = 1e-4
# Least cosine between the int8 graph's vectors and torch's on the check texts. It catches a
# broken graph (far below); it does not judge quality: recall on LoCoMo did. Measured: 0.97-0.99
# for one to three words, 0.99-0.999 for questions.
_INT8_AGREEMENT = 0.95


def onnx_runtime_available() -> bool:
    try:
        import onnxruntime  # noqa: F401
    except ImportError:
        return False
    return True


def cache_dir() -> Path:
    explicit = os.environ.get("CONVMEM_CACHE_DIR")
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "convmem"


class OnnxSentenceEncoder:
    """Encodes with an ONNX graph of a loaded sentence-transformers model; the model's own
    tokenizer prepares the inputs, so truncation and special tokens are exactly torch's."""

    def __init__(self, model: Any, *, threads: int = 1, int8: bool = False) -> None:
        """``int8``: the quantized graph (close to the model's vectors, not equal: for
        queries only, see the module's doc)."""
        try:
            import onnxruntime as ort
        except ImportError as exc:
            raise BackendUnavailable("onnxruntime is not installed") from exc
        self._model = model
        path = _quantized(_exported(model)) if int8 else _exported(model)
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.log_severity_level = 3  # errors only
        try:
            self._session = ort.InferenceSession(
                str(path), options, providers=["CPUExecutionProvider"]
            )
        except Exception as exc:  # a damaged file: removed, so the next load exports afresh
            path.unlink(missing_ok=True)
            raise BackendUnavailable(
                f"the cached graph failed to load: {type(exc).__name__}"
            ) from exc
        self._inputs = [i.name for i in self._session.get_inputs()]
        self._fast = _fast_tokenizer(model, self._inputs)
        if not _agrees(self, model, int8=int8):
            path.unlink(missing_ok=True)
            raise BackendUnavailable("the exported graph does not reproduce the model's vectors")

    def encode(self, texts: Sequence[str]) -> Matrix:
        feed = self._features(texts)
        (vectors,) = self._session.run(["sentence_embedding"], feed)
        return normalise(vectors)

    def _features(self, texts: Sequence[str]) -> dict[str, Any]:
        if self._fast is not None:
            return self._fast.features(texts, self._inputs)
        features = _tokenize(self._model, texts)
        return {name: features[name].numpy().astype(np.int64) for name in self._inputs}


def _tokenize(model: Any, texts: Sequence[str]) -> dict[str, Any]:
    prepare = getattr(model, "preprocess", None) or model.tokenize
    features: dict[str, Any] = prepare(list(texts))
    return features


class _FastTokenizer:
    """The model's own Rust tokenizer (``tokenizers``), called directly into numpy arrays.

    sentence-transformers prepares the same ids through transformers' wrapper and torch
    tensors, which cost 0.3-0.5 ms of a 2.5 ms query. This is a private copy of the model's
    backend tokenizer, truncating at the model's ``max_seq_length`` and padding to the longest
    text of a batch, as the model's own call does; it is used only when it gives the model's
    ids on the probe texts (``_same_ids``), else the model's call is."""

    def __init__(self, tokenizer: Any, max_length: int, pad_id: int, pad_token: str) -> None:
        self._tokenizer = tokenizer
        tokenizer.enable_truncation(max_length)
        tokenizer.enable_padding(pad_id=pad_id, pad_token=pad_token)

    def features(self, texts: Sequence[str], inputs: Sequence[str]) -> dict[str, Any]:
        encoded = self._tokenizer.encode_batch(list(texts))
        columns = {
            "input_ids": [e.ids for e in encoded],
            "attention_mask": [e.attention_mask for e in encoded],
            "token_type_ids": [e.type_ids for e in encoded],
        }
        return {name: np.asarray(columns[name], dtype=np.int64) for name in inputs}


def _fast_tokenizer(model: Any, inputs: Sequence[str]) -> _FastTokenizer | None:
    """A ``_FastTokenizer`` for ``model`` when it has a Rust tokenizer that gives its ids."""
    wrapper = getattr(model, "tokenizer", None)
    backend = getattr(wrapper, "backend_tokenizer", None)
    max_length = getattr(model, "max_seq_length", None)
    pad_token = getattr(wrapper, "pad_token", None)
    pad_id = getattr(wrapper, "pad_token_id", None)
    wanted = {"input_ids", "attention_mask", "token_type_ids"}
    if backend is None or not max_length or pad_token is None or pad_id is None:
        return None
    if not set(inputs) <= wanted:
        return None
    try:
        from tokenizers import Tokenizer
    except ImportError:
        return None
    fast = _FastTokenizer(Tokenizer.from_str(backend.to_str()), int(max_length), pad_id, pad_token)
    return fast if _same_ids(fast, model, inputs) else None


def _same_ids(fast: _FastTokenizer, model: Any, inputs: Sequence[str]) -> bool:
    """Whether ``fast`` prepares exactly the model's own inputs, one text at a time and padded in
    a batch, on texts that reach truncation, casing, accents and other scripts."""
    texts = [*_PROBE, *_CHECK, *_ID_CHECK]
    for batch in [*([t] for t in texts), texts]:
        expected = _tokenize(model, batch)
        got = fast.features(batch, inputs)
        for name in inputs:
            if not np.array_equal(expected[name].numpy().astype(np.int64), got[name]):
                return False
    return True


def _agrees(encoder: OnnxSentenceEncoder, model: Any, *, int8: bool) -> bool:
    import torch

    with torch.inference_mode():
        expected = model(_tokenize(model, _CHECK))["sentence_embedding"]
    reference = normalise(expected.float().cpu().numpy())
    if int8:  # one text at a time, as queries run (padding moves int8 vectors further)
        got = np.concatenate([encoder.encode([text]) for text in _CHECK])
        return bool((got * reference).sum(axis=1).min() >= _INT8_AGREEMENT)
    return bool(np.abs(encoder.encode(_CHECK) - reference).max() <= _TOLERANCE)


def _digest(model: Any) -> str:
    """Identifies the graph: the weights, the module stack and the versions that shape the
    export. Hashing ~90 MB of weights takes ~0.1 s, once per process."""
    import onnxruntime
    import torch
    import transformers

    h = hashlib.sha256()
    h.update(f"{EXPORT_VERSION}|{torch.__version__}|{transformers.__version__}".encode())
    h.update(f"|{onnxruntime.__version__}|{model!r}".encode())
    for name, tensor in sorted(model.state_dict().items()):
        h.update(name.encode())
        h.update(tensor.detach().cpu().contiguous().numpy().tobytes())
    return h.hexdigest()[:32]


def _exported(model: Any) -> Path:
    target = cache_dir() / "onnx" / f"{_digest(model)}.onnx"
    if not target.exists():
        _write_atomically(target, lambda tmp: _export(model, tmp), "export")
        log.info("exported the embedding model to ONNX", extra={"path": str(target)})
    return target


def _quantized(graph: Path) -> Path:
    """The int8 graph derived from ``graph`` (named by the same digest, in ``qint8/``)."""
    target = graph.parent / "qint8" / graph.name
    if not target.exists():
        _write_atomically(target, lambda tmp: _quantize(graph, tmp), "quantization")
    return target


def _quantize(graph: Path, out: Path) -> None:
    from onnxruntime.quantization import QuantType, quantize_dynamic

    quantize_dynamic(str(graph), str(out), weight_type=QuantType.QInt8, per_channel=True)


def _write_atomically(target: Path, write: Callable[[Path], None], what: str) -> None:
    """``write`` into a temporary file beside ``target``, then rename it: a reader (another
    process too) sees no file or a whole one."""
    tmp: Path | None = None
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, name = tempfile.mkstemp(dir=target.parent, suffix=".onnx.tmp")
        os.close(fd)
        tmp = Path(name)
        write(tmp)
        os.replace(tmp, target)
    except Exception as exc:  # an unwritable cache folder included: the caller does without
        if tmp is not None:
            tmp.unlink(missing_ok=True)
        raise BackendUnavailable(f"{what} failed: {type(exc).__name__}") from exc


def _export(model: Any, path: Path) -> None:
    import torch

    features = _tokenize(model, _PROBE)
    names = [n for n in ("input_ids", "attention_mask", "token_type_ids") if n in features]

    class Graph(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(self, *inputs: Any) -> Any:
            return self.model(dict(zip(names, inputs, strict=True)))["sentence_embedding"]

    transformer = model[0].auto_model
    previous = transformer.config._attn_implementation
    transformer.set_attn_implementation("eager")
    try:
        with warnings.catch_warnings():
            # the tracer warns about shape checks it freezes; the check after loading is the judge
            warnings.simplefilter("ignore")
            dynamic: dict[str, dict[int, str]] = {n: {0: "batch", 1: "tokens"} for n in names}
            dynamic["sentence_embedding"] = {0: "batch"}
            torch.onnx.export(
                Graph().eval(),
                tuple(features[n] for n in names),
                str(path),
                input_names=names,
                output_names=["sentence_embedding"],
                dynamic_axes=dynamic,
                opset_version=17,
                dynamo=False,
            )
    finally:
        transformer.set_attn_implementation(previous)
