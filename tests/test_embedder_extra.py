"""Without the ``embeddings`` extra, asking for its embedder fails at once with the install line."""

from __future__ import annotations

import sys

import pytest

import convmem
from convmem.retrieval.vector import named_embedder

INSTALL_LINE = "pip install 'convmem[embeddings]'"


@pytest.fixture
def no_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    # as if sentence-transformers were not installed: importing it raises ImportError
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)


@pytest.mark.usefixtures("no_extra")
def test_the_embedder_refuses_at_construction_with_the_install_line() -> None:
    with pytest.raises(convmem.BackendUnavailable) as refused:
        convmem.SentenceTransformerEmbedder()
    assert INSTALL_LINE in str(refused.value)
    assert "SentenceTransformerEmbedder" in str(refused.value)


@pytest.mark.usefixtures("no_extra")
def test_named_choices_say_the_same_and_auto_falls_back_to_none() -> None:
    with pytest.raises(convmem.BackendUnavailable) as refused:
        named_embedder("minilm")
    assert INSTALL_LINE in str(refused.value)
    assert named_embedder("auto") is None
