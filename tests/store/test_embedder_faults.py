"""Writes never wait on, fail with or repeat because of the embedder (issue 33, item 1).

The embedder is a real HTTP client of a local OpenAI-compatible embeddings server
(``tests/embed_server.py``) that fails (500), rate-limits (429) and hangs while appends and
remembers run, on every backend: every write returns in the store's own time, nothing is
stored twice, searches say how many rows they ranked by words only, and once the server
answers again every vector is filled.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

import convmem
from convmem.store.ranking import Window
from tests.embed_server import EmbeddingsServer, HttpEmbedder, embeddings_server
from tests.store.backends import Backend

DIMENSIONS = 64


@pytest.fixture
def server() -> Iterator[EmbeddingsServer]:
    with embeddings_server(DIMENSIONS, hang_seconds=30.0) as running:
        yield running


def _embedder(server: EmbeddingsServer, timeout: float = 20.0) -> HttpEmbedder:
    return HttpEmbedder(server.url, dimensions=DIMENSIONS, timeout=timeout)


def _unembedded(memory: convmem.Memory, embedder: HttpEmbedder) -> tuple[int, int]:
    with memory.store.read() as tx:
        turns = len(tx.missing_message_vectors(embedder.name, 100_000))
        memories = len(tx.missing_memory_vectors(embedder.name, 100_000))
    return turns, memories


@pytest.mark.parametrize("mode", ["fail", "rate", "hang"])
def test_writes_go_on_while_the_embedder_is_down_and_every_vector_is_filled_after(
    backend: Backend, server: EmbeddingsServer, mode: str
) -> None:
    embedder = _embedder(server)
    with backend.open(embedder=embedder) as memory:
        alice = memory.scope("acme", "alice")
        conv = alice.create_conversation()
        conv.append("user", "warm-up turn about pottery")  # the filler's thread is running
        assert memory.wait_for_vectors(10)
        server.mode = mode
        slowest = 0.0
        ids = []
        for i in range(40):
            started = time.monotonic()
            ids.append(conv.append("user", f"turn {i} about the kiln and glazes").id)
            if i % 4 == 0:
                notice = alice.remember(f"My kiln number {i} is electric")
                assert notice.status == "saved"
            slowest = max(slowest, time.monotonic() - started)
        # the client waits 20 s for a hung server: a write that waited on it would take that
        # long (the bound leaves room for a loaded machine's own pauses, seen up to 4 s)
        assert slowest < 10.0
        assert server.requests[mode] >= 1  # the filler did try, and met the fault
        turns, memories = _unembedded(memory, embedder)
        assert turns >= 30 and memories >= 8  # queued, not embedded
        # searches answer by words meanwhile, and say how many rows had no vector
        hits = conv.search("kiln glazes", k=5)
        assert len(hits) == 5 and hits.unembedded >= 30
        found = alice.search_memories("kiln electric", k=3)
        assert found and found.unembedded >= 8
        report = conv.assemble("Which kiln do I have?").report
        assert report.unembedded["turns"] >= 30 and report.unembedded["memories"] >= 8
        server.mode = "ok"
        assert memory.wait_for_vectors(60)
        assert _unembedded(memory, embedder) == (0, 0)
        assert len(conv.messages()) == 41  # no append stored twice
        assert len(alice.memories.list()) == 10  # no remember stored twice
        assert conv.search("kiln glazes", k=5).unembedded == 0
        assert alice.search_memories("kiln electric", k=3).unembedded == 0
        with memory.store.read() as tx:
            vector = embedder.embed(["user: turn 7 about the kiln and glazes\n"
                                     "user: turn 7 about the kiln and glazes"])[0]  # fmt: skip
            nearest = tx.nearest_messages("acme", "alice", conv.id, embedder.name,
                                          vector, window=Window(), limit=1)  # fmt: skip
        assert nearest[0].message_id == ids[7]


def test_an_embedder_that_raises_never_reaches_the_caller(backend: Backend) -> None:
    class Broken:
        name = "broken-8"
        dimensions = 8

        def embed(self, texts: object) -> object:
            raise RuntimeError("model crashed")

    with backend.open(embedder=Broken()) as memory:
        alice = memory.scope("acme", "alice")
        conv = alice.create_conversation()
        message = conv.append("user", "Remember that I prefer aisle seats.")
        assert [n.status for n in message.notices] == ["saved"]
        notice = alice.remember("Prefers Python examples")
        assert notice.status == "saved"
        assert len(alice.memories.list()) == 2
        assert [m.id for m in conv.branch()] == [message.id]
        hits = conv.search("aisle seats")
        assert [h.message.id for h in hits] == [message.id] and hits.unembedded == 1
        assert hits.degraded  # the query's own embedding failed too, and the search says so
        assert not memory.wait_for_vectors(0.2)  # still pending: nothing pretends otherwise
