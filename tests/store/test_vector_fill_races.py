"""Vectors written after their rows (the background filler, the worker's backfill) meet the
writers and deleters of those rows: on every backend nothing deadlocks, an append never waits
out a deadlock, and a delete under way leaves no vector behind and does not fail.

On PostgreSQL these are real concurrent transactions of one pool: the filler's transaction is
held open at the worst point (its vectors written, not committed) while a tenant's erase starts,
and appends run while the filler stores vectors for the same conversations.
"""

from __future__ import annotations

import logging
import secrets
import threading
import time

import pytest

import convmem
from convmem.retrieval.vector import Matrix, normalise
from convmem.store.base import MemoryVector, MessageVector, TermVector, WriteTxn
from tests.store.backends import Backend

TENANT = "acme"


def _marker() -> str:
    return "zyxqv" + "".join(secrets.choice("0123456789") for _ in range(8))


def _vector(text: str) -> Matrix:
    vector: Matrix = normalise(convmem.HashingEmbedder().embed([text]))[0]
    return vector


KINDS = ["turn", "word", "memory", "all"]


def _write_vectors(tx: WriteTxn, kind: str, message_id: str, memory_id: str, word: str) -> None:
    """What the filler writes in one transaction: one kind of vector, or all three."""
    name = convmem.HashingEmbedder().name
    if kind in ("turn", "all"):
        tx.set_message_vectors(TENANT, name, [MessageVector(message_id, _vector("a"))])
    if kind in ("word", "all"):
        tx.set_term_vectors(TENANT, name, [TermVector(word, _vector(word))])
    if kind in ("memory", "all"):
        tx.set_memory_vectors(TENANT, "alice", name, [MemoryVector(memory_id, _vector("m"))])


@pytest.mark.parametrize("kind", KINDS)
def test_an_erase_meeting_a_vector_write_in_flight_leaves_nothing(
    backend: Backend, kind: str
) -> None:
    """The filler's transaction has written vectors and not committed when the tenant's erase
    begins: the erase waits for it and removes them too (before the fix, with a memory's vector
    in flight, the erase deleted the vectors it could see, then failed on the memory's key)."""
    marker = _marker()
    with backend.open(embedder=None) as memory:  # no filler: this test writes the vectors
        alice = memory.scope(TENANT, "alice")
        said = alice.create_conversation().append("user", f"the locker word is {marker} today")
        kept = alice.remember(f"My locker word is {marker}.").memory
        assert kept is not None
        memory.scope("globex", "carol").remember("I prefer tea over coffee.")
        written, release = threading.Event(), threading.Event()
        failed: list[BaseException] = []

        def filler() -> None:
            try:
                with memory.store.write() as tx:
                    _write_vectors(tx, kind, said.id, kept.id, marker)
                    tx.memory_vector_ids(TENANT, "alice")  # a read: the writes above have run
                    written.set()
                    release.wait(30)
            except BaseException as exc:  # handed to the test
                failed.append(exc)
                written.set()

        erased: list[dict[str, int]] = []

        def erase() -> None:
            try:
                erased.append(memory.erase_tenant(TENANT))
            except BaseException as exc:
                failed.append(exc)

        writing = threading.Thread(target=filler)
        writing.start()
        assert written.wait(30)
        erasing = threading.Thread(target=erase)
        erasing.start()
        time.sleep(0.5)  # the erase is under way (or waiting) while the vectors are uncommitted
        release.set()
        writing.join(30)
        erasing.join(30)
        assert not writing.is_alive() and not erasing.is_alive()
        assert failed == []
        assert erased and sum(erased[0].values()) > 0
        with memory.store.read() as tx:
            assert tx.memory_vector_ids(TENANT, "alice") == []
    assert marker not in backend.dump()


@pytest.mark.parametrize("kind", KINDS)
def test_an_erase_under_way_lets_a_vector_write_find_nothing(backend: Backend, kind: str) -> None:
    """The other order: the erase has deleted and not committed when the vectors arrive; they
    wait for it and then write nothing (no error, no vector of a deleted row)."""
    marker = _marker()
    with backend.open(embedder=None) as memory:
        alice = memory.scope(TENANT, "alice")
        said = alice.create_conversation().append("user", f"the locker word is {marker} today")
        kept = alice.remember(f"My locker word is {marker}.").memory
        assert kept is not None
        memory.scope("globex", "carol").remember("I prefer tea over coffee.")
        started, release = threading.Event(), threading.Event()
        failed: list[BaseException] = []

        def erase() -> None:
            try:
                with memory.store.write() as tx:
                    assert sum(tx.delete_tenant(TENANT).values()) > 0
                    started.set()
                    release.wait(30)
            except BaseException as exc:
                failed.append(exc)
                started.set()

        def filler() -> None:
            try:
                with memory.store.write() as tx:
                    _write_vectors(tx, kind, said.id, kept.id, marker)
            except BaseException as exc:
                failed.append(exc)

        erasing = threading.Thread(target=erase)
        erasing.start()
        assert started.wait(30)
        writing = threading.Thread(target=filler)
        writing.start()
        time.sleep(0.5)
        release.set()
        erasing.join(30)
        writing.join(30)
        assert not writing.is_alive() and not erasing.is_alive()
        assert failed == []
        with memory.store.read() as tx:
            assert tx.memory_vector_ids(TENANT, "alice") == []
    assert marker not in backend.dump()


def test_appends_never_deadlock_with_the_filler(
    backend: Backend, caplog: pytest.LogCaptureFixture
) -> None:
    """Appends to conversations that share their words while the background filler stores
    those conversations' turn and word vectors: no write conflict, no wait of a deadlock
    (on main's code each cost an append PostgreSQL's deadlock_timeout, 1 s, and a retry)."""
    caplog.set_level(logging.INFO, logger="convmem.store.retry")
    with backend.open(embedder=convmem.HashingEmbedder()) as memory:
        for round_ in range(4):
            for tenant, user in ((TENANT, "bob"), (TENANT, "dana"), ("globex", "carol")):
                scope = memory.scope(tenant, user)
                scope.remember(f"I prefer tea over coffee, round {round_}.")
                conv = scope.create_conversation()
                for i in range(6):
                    conv.append("user", f"{user}'s turn {i} about the shed and the tomatoes")
        assert memory.wait_for_vectors(60)
        with memory.store.read() as tx:
            assert tx.missing_message_vectors(memory.embedder.name, 10) == []  # type: ignore[union-attr]
    conflicts = [r.getMessage() for r in caplog.records if "write conflict" in r.getMessage()]
    assert conflicts == []
