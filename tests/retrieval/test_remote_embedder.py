"""The OpenAI-compatible embeddings client against a real HTTP server on 127.0.0.1
(tests/model_server.py): batching, bounded concurrency, retries on 429 and 5xx, giving up, a
hanging server cut at the time limit, dimension checks, the key from the environment, Azure's
URL and header; and convmem searching with it end to end."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

import convmem
from convmem.errors import BackendUnavailable, InvalidConfig
from convmem.retrieval.openai_embedder import OpenAIEmbedder
from convmem.retrieval.vector import HashingEmbedder, named_embedder
from tests.model_server import ModelServer

KEY = "sk-test-0123456789abcdef-never-shown"


@pytest.fixture
def server() -> Iterator[ModelServer]:
    with ModelServer(dimensions=64) as running:
        yield running


def client(server: ModelServer, **options: object) -> OpenAIEmbedder:
    embedder = named_embedder(f"openai+{server.url}/v1:test-model")
    assert isinstance(embedder, OpenAIEmbedder)
    if not options:
        return embedder
    return OpenAIEmbedder("test-model", base_url=f"{server.url}/v1", api_key_env=None, **options)  # type: ignore[arg-type]


def test_vectors_come_back_in_input_order_normalised(server: ModelServer) -> None:
    server.unit = False  # Ollama's are not unit length
    texts = ["aisle seats on long flights", "the garden in spring", "aisle seat please"]
    rows = client(server).embed(texts)
    assert rows.shape == (3, 64) and rows.dtype == np.float32
    assert np.allclose(np.linalg.norm(rows, axis=1), 1.0, atol=1e-5)
    # the server answers out of order: each row is still its own text's
    assert np.allclose(rows, HashingEmbedder(64).embed(texts), atol=1e-5)
    assert server.requests[0].body["model"] == "test-model"


def test_texts_go_in_batches(server: ModelServer) -> None:
    texts = [f"text number {i}" for i in range(70)]
    rows = client(server, batch_size=16).embed(texts)
    sizes = sorted(len(r.body["input"]) for r in server.requests)
    assert sizes == [6, 16, 16, 16, 16]
    assert np.allclose(rows, HashingEmbedder(64).embed(texts), atol=1e-5)


def test_concurrency_is_bounded(server: ModelServer) -> None:
    in_flight = 0
    most = 0
    lock = threading.Lock()
    answer = server.embeddings

    def slow(body: object) -> object:
        nonlocal in_flight, most
        with lock:
            in_flight += 1
            most = max(most, in_flight)
        time.sleep(0.05)
        with lock:
            in_flight -= 1
        return answer(body)

    server.embeddings = slow  # type: ignore[method-assign]
    embedder = client(server, batch_size=2, concurrency=3)
    # two callers at once share the bound
    threads = [threading.Thread(target=embedder.embed, args=([f"t{i}" for i in range(12)],))
               for _ in range(2)]  # fmt: skip
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert server.count() == 12
    assert 2 <= most <= 3


@pytest.mark.parametrize("failure", ["429", "500"])
def test_a_rate_limit_or_server_error_is_retried(server: ModelServer, failure: str) -> None:
    server.script([failure, failure])
    rows = client(server, attempts=4).embed(["retry me"])
    assert rows.shape == (1, 64)
    assert [r.mode for r in server.requests] == [failure, failure, "ok"]


def test_it_gives_up_after_its_attempts_with_a_clear_error(
    server: ModelServer, caplog: pytest.LogCaptureFixture
) -> None:
    server.mode = "500"
    with caplog.at_level(logging.DEBUG), pytest.raises(BackendUnavailable) as failed:
        client(server, attempts=3).embed(["a private sentence about my health"])
    assert server.count() == 3
    assert "HTTP 500" in str(failed.value) and "3 attempts" in str(failed.value)
    everything = str(failed.value) + caplog.text
    assert "private" not in everything  # neither the text nor the server's body


def test_a_refusal_is_not_retried(server: ModelServer) -> None:
    with ModelServer() as other:  # 404: no such endpoint
        embedder = OpenAIEmbedder("m", base_url=f"{other.url}/nowhere", api_key_env=None)
        with pytest.raises(BackendUnavailable, match="HTTP 404"):
            embedder.embed(["x"])
        assert other.count() == 1


def test_a_hanging_server_is_cut_at_the_time_limit(server: ModelServer) -> None:
    server.mode = "hang"
    embedder = client(server, timeout=0.5, attempts=5)
    started = time.monotonic()
    with pytest.raises(BackendUnavailable, match=r"did not answer within 0\.5 s"):
        embedder.embed(["anyone there?"])
    assert time.monotonic() - started < 2.0


def test_a_declared_width_is_checked(server: ModelServer) -> None:
    embedder = named_embedder(f"openai+{server.url}/v1:test-model?dimensions=384")
    assert embedder is not None and embedder.dimensions == 384  # declared: no call
    assert server.count() == 0
    with pytest.raises(InvalidConfig, match="declared 384, but test-model returns 64") as wrong:
        embedder.embed(["x"])
    assert wrong.value.key == "embedder.dimensions"
    # an OpenAI-compatible server is not asked to shorten (it may refuse the field)
    assert "dimensions" not in server.requests[0].body


def test_a_learnt_width_that_changes_is_an_error(server: ModelServer) -> None:
    embedder = client(server)
    assert embedder.dimensions == 64  # learnt from one call
    server.dimensions = 32
    with pytest.raises(BackendUnavailable, match="returned 32 dimensions after 64"):
        embedder.embed(["y"])


def test_the_key_comes_from_the_environment_and_is_never_shown(
    server: ModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MY_EMBEDDINGS_KEY", KEY)
    embedder = named_embedder(f"openai+{server.url}/v1:m?api_key_env=MY_EMBEDDINGS_KEY")
    assert embedder is not None
    embedder.embed(["x"])
    assert server.requests[0].headers["Authorization"] == f"Bearer {KEY}"
    assert KEY not in repr(embedder) and KEY not in repr(vars(embedder))
    # an OpenAI key is not sent to another server unless asked
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    plain = named_embedder(f"openai+{server.url}/v1:m")
    assert plain is not None
    plain.embed(["x"])
    assert "Authorization" not in server.requests[1].headers


def test_a_missing_key_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(InvalidConfig, match="OPENAI_API_KEY is not set") as missing:
        named_embedder("openai:text-embedding-3-small")
    assert missing.value.key == "embedder.api_key_env"


def test_a_key_in_the_name_is_refused_without_echoing_it() -> None:
    with pytest.raises(InvalidConfig) as refused:
        named_embedder(f"openai:text-embedding-3-small?api_key={KEY}")
    assert KEY not in str(refused.value)


def test_azure_has_its_url_and_header(server: ModelServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", KEY)
    embedder = named_embedder(f"azure+{server.url}:my-deployment?dimensions=64")
    assert embedder is not None
    assert embedder.embed(["hello"]).shape == (1, 64)
    sent = server.requests[0]
    assert sent.path == "/openai/deployments/my-deployment/embeddings?api-version=2024-10-21"
    assert sent.headers["api-key"] == KEY and "Authorization" not in sent.headers
    assert sent.body["dimensions"] == 64  # Azure's text-embedding-3 shortens to it


def test_long_and_empty_texts_are_sent_as_the_api_accepts(server: ModelServer) -> None:
    client(server, max_chars=100).embed(["", "x" * 5000])
    assert server.requests[0].body["input"] == [" ", "x" * 100]


@pytest.mark.parametrize("server_base64", ["answered", "ignored"])
def test_vectors_are_asked_as_base64_and_read_in_either_form(
    server: ModelServer, server_base64: str
) -> None:
    server.base64 = server_base64  # type: ignore[assignment]
    texts = ["aisle seats on long flights", "the garden in spring"]
    rows = client(server).embed(texts)
    assert [r.body["encoding_format"] for r in server.requests] == ["base64"]
    assert np.allclose(rows, HashingEmbedder(64).embed(texts), atol=1e-5)


def test_a_server_refusing_base64_is_asked_for_floats_from_then_on(server: ModelServer) -> None:
    server.base64 = "refused"
    embedder = client(server)
    texts = ["aisle seats on long flights", "the garden in spring"]
    first = embedder.embed(texts)
    second = embedder.embed(texts[:1])
    asked = [(r.body["encoding_format"], r.mode) for r in server.requests]
    assert asked == [("base64", "ok"), ("float", "ok"), ("float", "ok")]
    assert np.allclose(first, HashingEmbedder(64).embed(texts), atol=1e-5)
    assert np.allclose(second, first[:1], atol=1e-6)


def test_a_refusal_after_base64_worked_is_not_taken_for_the_encoding(server: ModelServer) -> None:
    embedder = client(server)
    embedder.embed(["first"])
    server.base64 = "refused"  # the server changed: an error, not a silent switch
    with pytest.raises(BackendUnavailable, match="HTTP 400"):
        embedder.embed(["second"])
    assert [r.body["encoding_format"] for r in server.requests] == ["base64", "base64"]


def test_floats_can_be_asked_for_by_name(server: ModelServer) -> None:
    embedder = named_embedder(f"openai+{server.url}/v1:test-model?encoding_format=float")
    assert embedder is not None
    embedder.embed(["aisle seats"])
    assert server.requests[0].body["encoding_format"] == "float"
    with pytest.raises(InvalidConfig, match="encoding_format"):
        named_embedder(f"openai+{server.url}/v1:test-model?encoding_format=bits")


def test_a_malformed_base64_row_is_a_clear_error(server: ModelServer) -> None:
    original = server.embeddings

    def damaged(body: object) -> object:
        reply = original(body)
        reply["data"][0]["embedding"] = "not base64!"
        return reply

    server.embeddings = damaged  # type: ignore[method-assign]
    with pytest.raises(BackendUnavailable, match="unknown shape"):
        client(server).embed(["aisle seats", "garden"])


def test_convmem_searches_with_it(server: ModelServer, tmp_path: Path) -> None:
    with convmem.open(tmp_path / "c.db", embedder=f"openai+{server.url}/v1:test-model") as memory:
        assert isinstance(memory.embedder, OpenAIEmbedder)
        conv = memory.scope(tenant="t", user="u").create_conversation()
        conv.append("user", "I booked the aisle seat for the Lisbon flight")
        conv.append("assistant", "Noted: the Lisbon flight, aisle seat")
        conv.append("user", "Let us plan the garden next spring")
        hits = conv.search("Lisbon aisle", k=2)
        assert hits and "vector" in hits[0].retrievers
        assert "Lisbon" in hits[0].message.content
    assert server.count("/v1/embeddings") >= 2
