"""Rerankers on real components: the rerank APIs served on 127.0.0.1 (tests/model_server.py), a
tiny cross-encoder built here with random weights, and convmem's search and recall on SQLite and
PostgreSQL reordered by them — or, when the reranker hangs or fails, left in the fused order with
the report saying so."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

import convmem
from convmem.config import Config
from convmem.context.assemble import AssemblyOptions
from convmem.errors import BackendUnavailable, InvalidConfig
from convmem.model.deadline import TimeLimits
from convmem.retrieval.rerank import CrossEncoderReranker, RerankAPI, named_reranker
from tests.model_server import ModelServer

TURNS = [
    "We talked about the garden and the spring planting",
    "My flight to Lisbon leaves on Friday morning",
    "I prefer an aisle seat on every flight",
    "The aisle seat on the Lisbon flight is booked",
    "Let us plan dinner for Saturday",
    "The seat map showed only window seats left",
]
QUERY = "aisle seat Lisbon flight"


@pytest.fixture
def server() -> Iterator[ModelServer]:
    with ModelServer() as running:
        yield running


@pytest.fixture(params=["sqlite", "postgresql"])
def target(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "postgresql":
        return str(request.getfixturevalue("postgres_migrated_url"))
    return str(tmp_path / "convmem.db")


def _filled(target: str) -> str:
    """Writes the conversation once; returns its id."""
    with convmem.open(target) as memory:
        conv = memory.scope(tenant="t", user="u").create_conversation()
        for n, text in enumerate(TURNS):
            conv.append("user" if n % 2 == 0 else "assistant", text)
        return conv.id


# --- the API client ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "path"),
    [
        ("cohere+{url}/v2:rerank-v3.5", "/v2/rerank"),
        ("jina+{url}/v1:jina-reranker-v2", "/v1/rerank"),
        ("tei+{url}", "/rerank"),
    ],
)
def test_each_rerank_api_shape(server: ModelServer, name: str, path: str) -> None:
    reranker = named_reranker(name.format(url=server.url))
    assert isinstance(reranker, RerankAPI)
    scores = reranker.score(QUERY, TURNS)
    assert scores == [server.relevance(QUERY, t) for t in TURNS]
    sent = server.requests[0]
    assert sent.path == path
    texts = sent.body["texts"] if path == "/rerank" else sent.body["documents"]
    assert texts == TURNS
    if path != "/rerank":
        assert sent.body["model"] and sent.body["top_n"] == len(TURNS)


def test_the_api_retries_then_gives_up_and_a_hang_is_cut(server: ModelServer) -> None:
    server.script(["429", "500"])
    reranker = RerankAPI("tei", base_url=server.url, attempts=3, timeout=5)
    assert len(reranker.score(QUERY, TURNS)) == len(TURNS)
    assert [r.mode for r in server.requests] == ["429", "500", "ok"]
    server.mode = "500"
    with pytest.raises(BackendUnavailable, match="HTTP 500 after 3 attempts"):
        reranker.score(QUERY, TURNS)
    server.mode = "hang"
    started = time.monotonic()
    with pytest.raises(BackendUnavailable, match="did not answer"):
        RerankAPI("tei", base_url=server.url, timeout=0.4).score(QUERY, TURNS)
    assert time.monotonic() - started < 2.0


def test_hosted_apis_need_their_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COHERE_API_KEY", raising=False)
    with pytest.raises(InvalidConfig, match="COHERE_API_KEY is not set"):
        named_reranker("cohere:rerank-v3.5")
    with pytest.raises(InvalidConfig, match="tei"):
        RerankAPI("tei")
    assert named_reranker("none") is None


# --- search and recall, reordered -------------------------------------------------------------


def test_search_follows_the_reranker(server: ModelServer, target: str) -> None:
    conversation_id = _filled(target)
    with convmem.open(target, reranker=f"tei+{server.url}") as memory:
        conv = memory.scope(tenant="t", user="u").conversation(conversation_id)
        hits = conv.search(QUERY, k=4)
    relevance = [server.relevance(QUERY, hit.message.content) for hit in hits]
    assert relevance == sorted(relevance, reverse=True)
    assert [hit.score for hit in hits] == relevance
    assert all("rerank" in hit.retrievers for hit in hits)
    assert hits[0].message.content == TURNS[3]  # holds every word of the query
    # the fused best (at least rerank_depth = 20: every turn here) went to the reranker
    assert len(server.requests[0].body["texts"]) == len(TURNS)


def test_memory_search_follows_the_reranker(server: ModelServer, target: str) -> None:
    with convmem.open(target, reranker=f"tei+{server.url}") as memory:
        user = memory.scope(tenant="t", user="u")
        for text in ("Prefers aisle seats", "Flies to Lisbon", "Books an aisle seat to Lisbon"):
            user.remember(text)
        hits = user.search_memories(QUERY, k=3)
    assert hits[0].memory.text == "Books an aisle seat to Lisbon"
    assert all("rerank" in hit.retrievers for hit in hits)


def test_a_hanging_reranker_leaves_the_fused_order(
    server: ModelServer, target: str, caplog: pytest.LogCaptureFixture
) -> None:
    conversation_id = _filled(target)
    with convmem.open(target) as plain:
        fused = plain.scope(tenant="t", user="u").conversation(conversation_id).search(QUERY, k=4)
    server.mode = "hang"
    config = Config(time_limits=TimeLimits(reranker=0.3))
    with convmem.open(target, config=config, reranker=f"tei+{server.url}") as memory:
        conv = memory.scope(tenant="t", user="u").conversation(conversation_id)
        started = time.monotonic()
        with caplog.at_level(logging.WARNING):
            hits = conv.search(QUERY, k=4)
        took = time.monotonic() - started
    assert [h.message.id for h in hits] == [h.message.id for h in fused]
    assert [h.score for h in hits] == [h.score for h in fused]
    assert not any("rerank" in h.retrievers for h in hits)
    assert took < 2.0
    assert "reranker: timeout 300 ms" in caplog.text
    assert "Lisbon" not in caplog.text and "aisle" not in caplog.text


def test_recall_is_reranked_and_a_failing_reranker_is_reported(
    server: ModelServer, target: str
) -> None:
    options = AssemblyOptions(memory_k=1, memory_relevant_k=3)
    with convmem.open(target, reranker=f"tei+{server.url}") as memory:
        user = memory.scope(tenant="t", user="u")
        for text in ("Prefers aisle seats", "Likes the garden", "Books an aisle seat to Lisbon"):
            user.remember(text)
        conv = user.create_conversation()
        context = conv.assemble(QUERY, options=options)
        assert context.report.degraded == []
        assert server.count("/rerank") == 1  # the memories ranked for the message
        server.mode = "500"
        failing = replace(options, time_limits=TimeLimits(reranker=5.0))
        context = conv.assemble(QUERY, options=failing)
    assert context.report.degraded == ["reranker: error BackendUnavailable"]
    assert context.report.memory_ids  # the request went on, recall in the fused order


# --- a local cross-encoder ----------------------------------------------------------------------


def tiny_cross_encoder(folder: Path) -> Path:
    """A BERT cross-encoder with random weights and a vocabulary of the test's words, saved the
    way sentence-transformers loads one (nothing downloads)."""
    import torch
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizer

    words = {w.lower().strip(".,") for text in [*TURNS, QUERY] for w in text.split()}
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *sorted(words)]
    folder.mkdir()
    (folder / "vocab.txt").write_text("\n".join(vocab) + "\n")
    torch.manual_seed(7)
    config = BertConfig(
        vocab_size=len(vocab), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
        intermediate_size=64, max_position_embeddings=64, initializer_range=0.2,
    )  # fmt: skip
    config.num_labels = 1  # one relevance score
    # raw logits: sigmoid would squeeze a random model's scores together
    config.sentence_transformers = {"activation_fn": "torch.nn.modules.linear.Identity"}
    BertForSequenceClassification(config).save_pretrained(folder)
    # transformers 5 takes the vocabulary itself; 4 took the file
    tokenizer = BertTokenizer(vocab={word: i for i, word in enumerate(vocab)})
    if tokenizer("aisle")["input_ids"][1] == 1:  # [UNK]: an older transformers
        tokenizer = BertTokenizer(vocab_file=str(folder / "vocab.txt"))
    tokenizer.save_pretrained(folder)
    return folder


@pytest.mark.embeddings
def test_search_follows_a_local_cross_encoder(tmp_path: Path) -> None:
    pytest.importorskip("sentence_transformers")
    path = tiny_cross_encoder(tmp_path / "ce")
    target = str(tmp_path / "convmem.db")
    conversation_id = _filled(target)
    with convmem.open(target, reranker=f"cross-encoder:{path}") as memory:
        assert isinstance(memory.reranker, CrossEncoderReranker)
        conv = memory.scope(tenant="t", user="u").conversation(conversation_id)
        hits = conv.search(QUERY, k=len(TURNS))
    from sentence_transformers import CrossEncoder

    model = CrossEncoder(str(path), device="cpu")
    own = [float(s) for s in model.predict([(QUERY, h.message.content) for h in hits])]
    assert len(set(own)) == len(own)  # no ties: the order below is the model's alone
    assert own == sorted(own, reverse=True)  # the model's own order
    assert [hit.score for hit in hits] == pytest.approx(own, rel=1e-4)
    with convmem.open(target) as plain:  # which is not the fused order
        fused = plain.scope(tenant="t", user="u").conversation(conversation_id)
        assert [h.message.id for h in fused.search(QUERY, k=len(TURNS))] != [
            h.message.id for h in hits
        ]


def test_a_cross_encoder_path_without_a_model_is_a_clear_error(tmp_path: Path) -> None:
    pytest.importorskip("sentence_transformers")
    reranker = CrossEncoderReranker(str(tmp_path / "missing"))
    with pytest.raises(BackendUnavailable, match="no cross-encoder could load"):
        reranker.score(QUERY, ["x"])
