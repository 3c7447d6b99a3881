"""A pooled PostgreSQL connection the server dropped, on a real server: a write whose connection
broke before its commit was sent runs again on another one and is written once; one that broke
after is never run again; what the server sends an idle connection unasked (a notification, a
notice) does not make it look gone; a connection idle past ``IDLE_CHECK_SECONDS`` is asked
before use and replaced when the server no longer answers, one in use is not asked."""

from __future__ import annotations

import os
import select
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

import convmem
from convmem.errors import StoreError
from convmem.store.base import WriteTxn
from convmem.store.retry import write_retried
from tests.extras import module_of_extra

module_of_extra("psycopg", "postgres")  # before the imports that need it

import psycopg  # noqa: E402

from convmem.store.postgres import PostgresStore  # noqa: E402
from convmem.store.postgres import connection as pg_connection  # noqa: E402

PROBE = "convmem_liveness_probe"
BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def _benchmark(name: str) -> ModuleType:
    if str(BENCHMARKS) not in sys.path:
        sys.path.insert(0, str(BENCHMARKS))
    return __import__(name)


@pytest.fixture
def probed_url(postgres_url: str) -> str:
    """The URL, its connections named so the test can find them on the server."""
    return postgres_url + f"&application_name={PROBE}"


@pytest.fixture
def admin(postgres_url: str) -> Iterator[psycopg.Connection[Any]]:
    with psycopg.connect(postgres_url, autocommit=True) as db:
        yield db


def _end_probed_connections(admin: psycopg.Connection[Any]) -> int:
    ended = admin.execute(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
        "WHERE application_name = %s AND pid <> pg_backend_pid()",
        (PROBE,),
    ).fetchall()
    return len(ended)


def _backend_pid(store: PostgresStore) -> int:
    with store.read() as tx:
        row = tx._db.execute("SELECT pg_backend_pid()").fetchone()
    assert row is not None
    return int(row[0])


def _rename(tx: WriteTxn, conversation_id: str, attempts: list[int]) -> None:
    """An attempt of a unit: counted, and the conversation's title written (queued)."""
    attempts.append(len(attempts) + 1)
    tx._db.execute(  # type: ignore[attr-defined]
        "UPDATE conversations SET title = title || '!' WHERE tenant_id = 'acme' AND id = %s",
        (conversation_id,),
    )


def test_a_write_whose_connection_broke_before_its_commit_runs_again_and_is_written_once(
    probed_url: str, admin: psycopg.Connection[Any]
) -> None:
    """The server ends the connection in the middle of the unit (its insert queued, a read
    asked): nothing was committed, so the unit runs again, on a new connection."""
    with convmem.open(probed_url) as memory:
        conversation = memory.scope("acme", "alice").create_conversation(title="t")
        attempts: list[int] = []

        def rename(tx: WriteTxn) -> str:
            _rename(tx, conversation.id, attempts)
            if len(attempts) == 1:
                assert _end_probed_connections(admin) >= 1
            record = tx.get_conversation("acme", "alice", conversation.id)  # the first answer
            return record.title or ""

        assert write_retried(memory.store, rename) == "t!"
        assert attempts == [1, 2]
        assert conversation.record().title == "t!"  # written once


def test_a_write_whose_connection_broke_after_its_commit_was_sent_is_not_run_again(
    probed_url: str, admin: psycopg.Connection[Any]
) -> None:
    """Once the COMMIT is sent the transaction may have committed: a broken connection then is
    a StoreError, and the unit is not run a second time (it might be written twice)."""
    with convmem.open(probed_url) as memory:
        conversation = memory.scope("acme", "alice").create_conversation(title="t")
        attempts: list[int] = []

        def rename(tx: WriteTxn) -> None:
            _rename(tx, conversation.id, attempts)
            # its only answer comes after the COMMIT, and the server ends the session first
            tx._db.execute(  # type: ignore[attr-defined]
                "SELECT pg_terminate_backend(pg_backend_pid()) FROM (SELECT 1) one WHERE %s",
                (len(attempts) == 1,),
            )

        with pytest.raises(StoreError) as raised:
            write_retried(memory.store, rename)
        assert not isinstance(raised.value, convmem.errors.ConnectionLost)
        assert attempts == [1]


def test_what_the_server_sends_an_idle_connection_unasked_does_not_drop_it(
    probed_url: str, admin: psycopg.Connection[Any]
) -> None:
    """Notifications waiting on an idle pooled connection make its socket readable, as a
    goodbye does: the connection stays in use, and no round trip is spent asking."""
    counter = _benchmark("round_trip_counter")
    store = PostgresStore(
        probed_url, min_size=1, max_size=1, connection_class=counter.CountingConnection
    )
    try:
        before = _backend_pid(store)  # the pool's connection is made (and counted) by now
        mark = counter.TALLY.snapshot()
        assert _backend_pid(store) == before
        plain = counter.delta(counter.TALLY.snapshot(), mark)["statements"]
        with store.read() as tx:  # the pool's only connection listens on a channel
            tx._db.execute("LISTEN convmem_liveness")
        admin.execute("NOTIFY convmem_liveness, 'ping'")
        admin.execute("NOTIFY convmem_liveness, 'again'")
        with store._pool.connection() as idle:  # the notifications reached its socket
            waiting = select.poll()
            waiting.register(idle.fileno(), select.POLLIN)
            assert waiting.poll(30_000)
            time.sleep(0.2)  # and the second one too
        mark = counter.TALLY.snapshot()
        assert _backend_pid(store) == before
        # nothing was sent to ask whether it lives (no extra statement). Round trips are not
        # compared: the notifications are taken in by the next exchange's wait, which the
        # counter counts as one whether or not anything was asked (measured: 2 vs 1 with the
        # same 3 statements, on this code and on the select-based check before it)
        assert counter.delta(counter.TALLY.snapshot(), mark)["statements"] == plain
    finally:
        store.close()


def test_connections_past_descriptor_1023_are_seen_alive(probed_url: str) -> None:
    """A busy service process holds more than 1,024 descriptors (client sockets, files): its
    pooled connections' descriptors go past what ``select`` takes, and each must still be read
    as alive and reused, not dropped as gone (every transaction then failed: StoreError)."""
    held = [open(os.devnull) for _ in range(1100)]  # noqa: SIM115 - held open on purpose
    try:
        store = PostgresStore(probed_url, min_size=1, max_size=1)
        try:
            before = _backend_pid(store)
            with store._pool.connection() as conn:
                assert conn.fileno() > 1023
            assert _backend_pid(store) == before  # the same connection, kept
        finally:
            store.close()
    finally:
        for handle in held:
            handle.close()


def test_a_connection_idle_past_the_check_is_asked_and_replaced_when_the_server_is_gone(
    probed_url: str, admin: psycopg.Connection[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A server can lose a connection without a word reaching the client (a failover, a
    firewall forgetting an idle stream): past ``IDLE_CHECK_SECONDS`` idle, a pooled connection
    is asked before a transaction starts on it. Here the server ends it and the poll is made
    blind to the goodbye, so only the question can find it gone."""
    store = PostgresStore(probed_url, min_size=1, max_size=1)
    try:
        before = _backend_pid(store)
        assert _end_probed_connections(admin) == 1
        time.sleep(0.2)  # the goodbye reaches the client's socket, unread
        monkeypatch.setattr(pg_connection, "_said_goodbye", lambda conn: False)
        monkeypatch.setattr(pg_connection, "IDLE_CHECK_SECONDS", 0.0)
        assert _backend_pid(store) != before  # asked, found gone, replaced
    finally:
        store.close()


def test_a_connection_in_use_is_not_asked(
    probed_url: str, admin: psycopg.Connection[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same lost connection, used within ``IDLE_CHECK_SECONDS``: not asked (no round trip
    while the pool is busy), so the read fails, as a read that lost its connection does."""
    store = PostgresStore(probed_url, min_size=1, max_size=1)
    try:
        _backend_pid(store)
        assert _end_probed_connections(admin) == 1
        time.sleep(0.2)
        monkeypatch.setattr(pg_connection, "_said_goodbye", lambda conn: False)
        with pytest.raises(convmem.errors.ConnectionLost):
            _backend_pid(store)
    finally:
        store.close()
