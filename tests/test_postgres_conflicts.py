"""Deadlocks and serialisation failures on a real PostgreSQL: the database aborts the
transaction, the whole unit of work runs again (``convmem.store.retry``), and a caller sees
``StoreBusy`` only when every attempt conflicted — with nothing of the unit written."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

import convmem
from convmem.errors import StoreBusy, WriteConflict
from convmem.store.base import WriteTxn
from convmem.store.retry import ATTEMPTS, write_retried
from tests.extras import module_of_extra

module_of_extra("psycopg", "postgres")  # before the imports that need it

import psycopg  # noqa: E402

from convmem.store.postgres.rows import OWNER_LOCK_CLASS  # noqa: E402


@pytest.fixture
def mem(postgres_url: str) -> Iterator[convmem.Memory]:
    with convmem.open(postgres_url) as memory:
        yield memory


@pytest.fixture
def other(postgres_url: str) -> Iterator[psycopg.Connection[Any]]:
    """A second session on the same schema, outside convmem (autocommit unless it BEGINs)."""
    with psycopg.connect(postgres_url, autocommit=True) as db:
        yield db


def _wait_for(db: psycopg.Connection[Any], sql: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not db.execute(sql).fetchone():
        assert time.monotonic() < deadline, f"timed out waiting for: {sql}"
        time.sleep(0.02)


def test_an_append_that_deadlocks_runs_again_and_is_written_once(
    mem: convmem.Memory, other: psycopg.Connection[Any], caplog: pytest.LogCaptureFixture
) -> None:
    """The append locks the conversation's row, then (its message asks to remember something)
    the user's memory lock; the other session takes them in the opposite order. PostgreSQL
    aborts the append's transaction (it waited first, and the other session's deadlock check is
    set later), and the append runs again once the other session is gone."""
    alice = mem.scope("acme", "alice")
    conversation = alice.create_conversation()
    other.execute("SET deadlock_timeout = '60s'")  # the append is the one PostgreSQL aborts
    other.execute("BEGIN")
    other.execute(
        "SELECT pg_advisory_xact_lock(%s, hashtext(%s))", (OWNER_LOCK_CLASS, "4:acme/alice")
    )
    appended: list[convmem.Message] = []
    failed: list[BaseException] = []

    def append() -> None:
        try:
            appended.append(conversation.append("user", "Remember that my dog is called Rex."))
        except BaseException as exc:
            failed.append(exc)

    caplog.set_level(logging.INFO, logger="convmem.store.retry")
    writer = threading.Thread(target=append)
    writer.start()
    with psycopg.connect(mem.store.url, autocommit=True) as watcher:  # type: ignore[attr-defined]
        _wait_for(watcher, "SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND NOT granted")
    # the append holds the conversation's row and waits for the memory lock: close the cycle
    other.execute(
        "SELECT 1 FROM conversations WHERE tenant_id = %s AND id = %s FOR UPDATE",
        ("acme", conversation.id),
    )
    other.execute("ROLLBACK")
    writer.join(timeout=60)

    assert not writer.is_alive()
    assert failed == []
    assert [m.content for m in conversation.messages()] == ["Remember that my dog is called Rex."]
    assert conversation.record().active_leaf_id == appended[0].id
    assert [m.text for m in alice.memories.list()] == ["my dog is called Rex."]
    assert any("DeadlockDetected" in r.getMessage() for r in caplog.records)


def _title(db: psycopg.Connection[Any], conversation_id: str) -> str:
    row = db.execute(
        "SELECT title FROM conversations WHERE tenant_id = 'acme' AND id = %s", (conversation_id,)
    ).fetchone()
    assert row is not None
    return str(row[0])


def _append_to_title(
    tx: WriteTxn,
    conversation_id: str,
    other: psycopg.Connection[Any],
    interfere: int,
    attempts: list[int],
) -> int:
    """A read-modify-write under REPEATABLE READ; the other session commits a change to the row
    between its read and its write on the first ``interfere`` attempts (a real serialisation
    failure: could not serialize access due to concurrent update)."""
    attempts.append(len(attempts) + 1)
    db = tx._db  # type: ignore[attr-defined]
    db.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
    title = _title(db, conversation_id)
    if len(attempts) <= interfere:
        other.execute(
            "UPDATE conversations SET title = title || '+' WHERE tenant_id = 'acme' AND id = %s",
            (conversation_id,),
        )
    db.execute(
        "UPDATE conversations SET title = %s WHERE tenant_id = 'acme' AND id = %s",
        (title + "!", conversation_id),
    )
    return len(attempts)


def test_a_serialisation_failure_runs_the_unit_again_on_a_new_snapshot(
    mem: convmem.Memory, other: psycopg.Connection[Any]
) -> None:
    conversation = mem.scope("acme", "alice").create_conversation("t")
    attempts: list[int] = []

    ran = write_retried(mem.store, _append_to_title, conversation.id, other, ATTEMPTS - 1, attempts)

    assert ran == ATTEMPTS
    # every other write kept, and the unit's own once: no update lost on either side
    assert _title(other, conversation.id) == "t" + "+" * (ATTEMPTS - 1) + "!"


def test_conflicts_on_every_attempt_are_store_busy_and_nothing_is_written(
    mem: convmem.Memory, other: psycopg.Connection[Any]
) -> None:
    conversation = mem.scope("acme", "alice").create_conversation("t")
    attempts: list[int] = []

    with pytest.raises(StoreBusy) as raised:
        write_retried(mem.store, _append_to_title, conversation.id, other, ATTEMPTS, attempts)

    assert isinstance(raised.value, WriteConflict)
    assert "SerializationFailure" in str(raised.value)
    assert attempts == list(range(1, ATTEMPTS + 1))
    assert _title(other, conversation.id) == "t" + "+" * ATTEMPTS  # the unit's "!" never landed
