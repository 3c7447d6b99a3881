"""Changing a tenant's embedder without downtime (issue 33 item 5), on every backend.

The new embedder's vectors are built while searches and appends run; every search during the
build and the switch answers, and finds the turn or memory it looks for (by the old vectors, the
new, or by words for a row without one); after the switch the old embedder's vectors are gone
(every row of the store read back; on SQLite the files' bytes too), and a process still running
the old embedder can neither find work in the tenant nor write its vectors back.
"""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest

import convmem
from convmem.errors import InvalidConfig
from tests.store.backends import Backend

TENANT = "acme"
OLD = convmem.HashingEmbedder(256)
NEW = convmem.HashingEmbedder(64)
TURNS = 24


def _word(i: int) -> str:
    return f"zorblat{i:03d}"


def _seed(memory: convmem.Memory) -> tuple[convmem.Conversation, dict[str, str], dict[str, str]]:
    """Turns and memories each findable by a word of its own: word -> message id, memory id."""
    alice = memory.scope(TENANT, "alice")
    conv = alice.create_conversation()
    turns: dict[str, str] = {}
    memories: dict[str, str] = {}
    for i in range(TURNS):
        turns[_word(i)] = conv.append("user", f"the crate {_word(i)} went to the harbour").id
        if i % 4 == 0:
            kept = alice.remember(f"My locker word for crate {i} is {_word(i)}.").memory
            assert kept is not None
            memories[_word(i)] = kept.id
    assert memory.wait_for_vectors(60)
    return conv, turns, memories


def _old_vector_blob(backend: Backend) -> bytes:
    path = Path(backend.url.removeprefix("sqlite:///"))
    with sqlite3.connect(path) as db:
        row = db.execute(
            "SELECT vector FROM message_index WHERE embedder = ? LIMIT 1", (OLD.name,)
        ).fetchone()
    assert row is not None
    return bytes(row[0])


def test_search_answers_throughout_a_switch_and_the_old_vectors_are_erased(
    backend: Backend,
) -> None:
    with backend.open(embedder=OLD) as memory:
        conv, turns, memories = _seed(memory)
        old_blob = _old_vector_blob(backend) if backend.name == "sqlite" else b""
        stop = threading.Event()
        answered, errors, misses = [0], [], []

        def search() -> None:
            alice = memory.scope(TENANT, "alice")
            n = 0
            while not stop.is_set():
                word = _word(n % TURNS)
                n += 1
                try:
                    hits = conv.search(word, k=5)
                    if turns[word] not in [h.message.id for h in hits]:
                        misses.append(("turn", word))
                    if word in memories:
                        found = alice.search_memories(word, k=5)
                        if memories[word] not in [h.memory.id for h in found]:
                            misses.append(("memory", word))
                    answered[0] += 1
                except Exception as exc:  # counted, never raised in the thread
                    errors.append(repr(exc))

        def write() -> None:  # the load: a conversation goes on meanwhile
            other = memory.scope(TENANT, "bob").create_conversation()
            i = 0
            while not stop.is_set():
                try:
                    other.append("user", f"bob's note {i} about the ferry timetable")
                except Exception as exc:
                    errors.append(repr(exc))
                i += 1

        threads = [threading.Thread(target=search), threading.Thread(target=write)]
        for thread in threads:
            thread.start()
        try:
            memory.embedder_switch.begin(TENANT, NEW)
            during = memory.embedder_switch.status(TENANT)
            assert (during.active, during.target) == (OLD.name, NEW.name)
            for _ in range(3):  # passes: each catches up with the writes of the one before
                memory.embedder_switch.build(TENANT, NEW, batch_size=4)
                assert memory.embedder_for(TENANT) is OLD  # the old vectors serve meanwhile
            built = memory.embedder_switch.status(TENANT).counts
            assert built is not None and built.turns_staged >= TURNS  # (the writer goes on)
            changed = memory.embedder_switch.finish(TENANT, NEW)
            assert changed["message_index"] >= TURNS
            assert memory.embedder_for(TENANT) is NEW
            for word in list(turns)[:6]:  # and after it, with the new vectors
                assert turns[word] in [h.message.id for h in conv.search(word, k=5)]
        finally:
            stop.set()
            for thread in threads:
                thread.join(30)
        assert errors == [] and misses == []
        assert answered[0] > 0
        after = memory.embedder_switch.status(TENANT)
        assert (after.active, after.target) == (NEW.name, None)
        assert memory.wait_for_vectors(60)  # turns written after the last batch: the new one
        with memory.store.read() as tx:
            assert tx.missing_message_vectors(NEW.name, 1000) == []
            assert tx.missing_memory_vectors(NEW.name, 1000) == []
            assert tx.embedded_message_vectors(OLD.name, 0, 1000) == []
    dump = backend.dump()
    assert OLD.name not in dump  # no row of any table names the old embedder
    if backend.name == "sqlite":  # nor do the files hold an old vector's bytes
        path = Path(backend.url.removeprefix("sqlite:///"))
        for file in sorted(path.parent.glob(path.name + "*")):
            assert old_blob not in file.read_bytes(), file.name


def test_a_process_on_the_old_embedder_cannot_undo_a_switch(backend: Backend) -> None:
    with backend.open(embedder=OLD) as memory:
        conv, turns, _ = _seed(memory)
        memory.embedder_switch.switch(TENANT, NEW, batch_size=8)
    with backend.open(embedder=OLD) as stale:  # a worker left on the old model
        assert stale.embedder_for(TENANT) is OLD  # (it knows no other)
        assert sum(stale.backfill_embeddings(max_batches=3).values()) == 0
        conv = stale.scope(TENANT, "alice").conversation(conv.id)
        conv.append("user", "a late turn about the harbour")
        assert stale.wait_for_vectors(30)
        assert turns[_word(3)] in [h.message.id for h in conv.search(_word(3), k=5)]  # words
    assert OLD.name not in backend.dump()


def test_a_switch_is_refused_when_it_changes_nothing_or_was_not_begun(backend: Backend) -> None:
    with backend.open(embedder=OLD) as memory:
        _seed(memory)
        with pytest.raises(InvalidConfig):
            memory.embedder_switch.begin(TENANT, OLD)
        with pytest.raises(InvalidConfig):
            memory.embedder_switch.finish(TENANT, NEW)
        memory.embedder_switch.begin(TENANT, NEW)
        memory.embedder_switch.build(TENANT, NEW, max_batches=1, batch_size=4)
        assert memory.embedder_switch.cancel(TENANT) > 0
        status = memory.embedder_switch.status(TENANT)
        assert (status.active, status.target) == (OLD.name, None)
        assert memory.embedder_for(TENANT) is OLD
    assert NEW.name not in backend.dump()  # the cancelled build left nothing


def test_the_worker_on_the_new_embedder_builds_the_switch_in_the_background(
    backend: Backend,
) -> None:
    from convmem.config import Config
    from convmem.ops.worker import Worker

    with backend.open(embedder=OLD) as memory:
        conv, turns, _ = _seed(memory)
        memory.embedder_switch.begin(TENANT, NEW)  # the operator starts it; nothing is built
    with backend.open(embedder=NEW, config=Config(embed_on_write=False)) as worker_memory:
        worker = Worker(worker_memory)
        rounds = 0
        while worker.embed_pending(batch_size=8):
            rounds += 1
        assert rounds > 1  # batch by batch, between jobs
    with backend.open(embedder=OLD) as memory:
        assert memory.embedder_switch.status(TENANT).ready
        assert memory.embedder_for(TENANT) is OLD  # built, not switched: the old one serves
        memory.embedder_switch.finish(TENANT, NEW)
        assert memory.embedder_for(TENANT) is NEW
        conv = memory.scope(TENANT, "alice").conversation(conv.id)
        assert turns[_word(5)] in [h.message.id for h in conv.search(_word(5), k=5)]


def test_a_search_reads_the_serving_embedder_outside_its_own_read(backend: Backend) -> None:
    """A process knowing two embedders reads a tenant's serving one when its cached answer is
    stale; on SQLite that read opened a transaction inside the search's own (the searches of a
    switch under load failed with SQLITE_ERROR every two seconds)."""
    with backend.open(embedder=OLD) as memory:
        conv, turns, memories = _seed(memory)
        memory.embedder_switch.serve_with(NEW)
        alice = memory.scope(TENANT, "alice")
        for round_ in range(2):  # before the switch (the old serves), then after it
            memory.forget_serving(TENANT)
            assert turns[_word(2)] in [h.message.id for h in conv.search(_word(2), k=5)]
            memory.forget_serving(TENANT)
            found = alice.search_memories(_word(4), k=5)
            assert memories[_word(4)] in [h.memory.id for h in found]
            memory.forget_serving(TENANT)
            assert conv.assemble(f"what about {_word(2)}?").messages
            if round_ == 0:
                memory.embedder_switch.switch(TENANT, NEW, batch_size=16)
