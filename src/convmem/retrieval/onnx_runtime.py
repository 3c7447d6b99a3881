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
        if not _agrees(self, model, int8=int8):
            path.unlink(missing_ok=True)
            raise BackendUnavailable("the exported graph does not reproduce the model's vectors")

    def encode(self, texts: Sequence[str]) -> Matrix:
        features = _tokenize(self._model, texts)
        feed = {name: features[name].numpy().astype(np.int64) for name in self._inputs}
        (vectors,) = self._session.run(["sentence_embedding"], feed)
        return normalise(vectors)


def _tokenize(model: Any, texts: Sequence[str]) -> dict[str, Any]:
    prepare = getattr(model, "preprocess", None) or model.tokenize
    features: dict[str, Any] = prepare(list(texts))
    return features


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
