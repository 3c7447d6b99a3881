"""Idempotency keys on the library's writes, on every backend: a retry is stored once, another
body under the same key is a conflict, keys are per principal, expire, and leave with what they
stored."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

import convmem
from convmem.errors import IdempotencyConflict, InvalidInput
from tests.store.backends import Backend


def test_a_retried_append_returns_the_first_message_and_stores_nothing(backend: Backend) -> None:
    with backend.open() as memory:
        alice = memory.scope("acme", "alice")
        conv = alice.create_conversation()
        first = conv.append("user", "Remember that I prefer aisle seats.", idempotency_key="k1")
        again = conv.append("user", "Remember that I prefer aisle seats.", idempotency_key="k1")
        assert again.id == first.id and again.content == first.content
        assert [n.status for n in again.notices] == ["saved"]
        assert again.notices[0].memory is not None and first.notices[0].memory is not None
        assert again.notices[0].memory.id == first.notices[0].memory.id
        assert [m.id for m in conv.messages()] == [first.id]
        assert len(alice.memories.list()) == 1  # the intent was not acted on twice
        with pytest.raises(IdempotencyConflict):
            conv.append("user", "Something else entirely", idempotency_key="k1")
        with pytest.raises(IdempotencyConflict):  # same body, another conversation
            alice.create_conversation().append(
                "user", "Remember that I prefer aisle seats.", idempotency_key="k1"
            )
        assert [m.id for m in conv.messages()] == [first.id]
        second = conv.append("user", "Remember that I prefer aisle seats.", idempotency_key="k2")
        assert second.id != first.id  # a new key is a new write


def test_a_retried_remember_is_stored_once(backend: Backend) -> None:
    with backend.open() as memory:
        alice = memory.scope("acme", "alice")
        first = alice.remember("Prefers Python examples", category="preference",
                               idempotency_key="r1")  # fmt: skip
        again = alice.remember("Prefers Python examples", category="preference",
                               idempotency_key="r1")  # fmt: skip
        assert first.status == again.status == "saved"
        assert first.memory is not None and again.memory is not None
        assert again.memory.id == first.memory.id
        assert [m.id for m in alice.memories.list()] == [first.memory.id]
        with pytest.raises(IdempotencyConflict):
            alice.remember("Prefers Python examples", category="fact", idempotency_key="r1")
        with pytest.raises(IdempotencyConflict):  # an append is another write
            alice.create_conversation().append("user", "hello", idempotency_key="r1")
        proposal = alice.propose("Likes hiking", idempotency_key="p1")
        assert alice.propose("Likes hiking", idempotency_key="p1").memory == proposal.memory
        assert len(alice.memories.list()) == 2
        # a refused write keeps no key: its retry is refused again, nothing stored either time
        refused = alice.remember("My password is hunter2-Secret!", idempotency_key="s1")
        assert refused.status == "blocked"
        assert alice.remember("My password is hunter2-Secret!", idempotency_key="s1") == refused
        assert len(alice.memories.list()) == 2


def test_keys_are_per_principal(backend: Backend) -> None:
    with backend.open() as memory:
        alice, bob = memory.scope("acme", "alice"), memory.scope("acme", "bob")
        carol = memory.scope("globex", "alice")  # same user name, another tenant
        found = [s.remember("Prefers tea", idempotency_key="same") for s in (alice, bob, carol)]
        ids = {n.memory.id for n in found if n.memory is not None}
        assert len(ids) == 3  # nobody's key collided with or returned another's memory
        assert bob.remember("Prefers coffee", idempotency_key="x").status == "saved"
        assert alice.remember("Prefers cocoa", idempotency_key="x").status == "saved"
        for scope, text in ((alice, "Prefers cocoa"), (bob, "Prefers coffee")):
            assert [m.text for m in scope.memories.list()][-1] == text


def test_keys_expire_and_leave_with_what_they_stored(backend: Backend) -> None:
    with backend.open(config=convmem.Config(idempotency_hours=1)) as memory:
        alice = memory.scope("acme", "alice")
        conv = alice.create_conversation()
        first = conv.append("user", "hello there", idempotency_key="e1")
        with memory.store.write() as tx:  # an hour and more ago
            kept = tx.kept_write("acme", "alice", "e1", datetime(2000, 1, 1, tzinfo=UTC))
            assert kept is not None and kept.message_id == first.id
            assert tx.forget_kept_writes("acme", datetime.now(UTC) - timedelta(hours=2)) == 0
            old = replace(kept, key="old", created_at=datetime.now(UTC) - timedelta(hours=2))
            assert tx.keep_write("acme", "alice", old, datetime(2000, 1, 1, tzinfo=UTC))
        # an expired key is free again: a new write, and the user's expired keys are purged
        with memory.store.read() as tx:
            assert (
                tx.kept_write("acme", "alice", "old", datetime.now(UTC) - timedelta(hours=1))
                is None
            )
        assert conv.append("user", "something new", idempotency_key="old").id != first.id
        with memory.store.read() as tx:
            assert (
                tx.kept_write("acme", "alice", "old", datetime(2000, 1, 1, tzinfo=UTC)) is not None
            )
        # deleting the message deletes its key (the lineage cascade): the retry writes again
        conv.delete_message(first.id)
        with memory.store.read() as tx:
            assert tx.kept_write("acme", "alice", "e1", datetime(2000, 1, 1, tzinfo=UTC)) is None
        again = conv.append("user", "hello there", idempotency_key="e1")
        assert again.id != first.id
        saved = alice.remember("Prefers tea", idempotency_key="m1")
        assert saved.memory is not None
        alice.memories.delete(saved.memory.id)
        with memory.store.read() as tx:
            assert tx.kept_write("acme", "alice", "m1", datetime(2000, 1, 1, tzinfo=UTC)) is None
        alice.delete_all()
        with memory.store.read() as tx:
            assert tx.kept_write("acme", "alice", "old", datetime(2000, 1, 1, tzinfo=UTC)) is None


@pytest.mark.parametrize("key", ["", "   ", "a\nb", "x" * 257, 7])
def test_a_malformed_key_is_refused_before_anything_is_written(
    backend: Backend, key: object
) -> None:
    with backend.open() as memory:
        alice = memory.scope("acme", "alice")
        conv = alice.create_conversation()
        with pytest.raises(InvalidInput):
            conv.append("user", "hello", idempotency_key=key)  # type: ignore[arg-type]
        with pytest.raises(InvalidInput):
            alice.remember("Prefers tea", idempotency_key=key)  # type: ignore[arg-type]
        assert conv.messages() == [] and alice.memories.list() == []
