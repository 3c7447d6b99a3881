"""Backends as plug-ins: ``convmem.open`` dispatches by URL scheme through the registry, and the
SQLite backend maps every driver error onto the error tree (retrying what SQLite says it may)."""

from __future__ import annotations

import sqlite3
import threading
from datetime import UTC, datetime
from pathlib import Path

import pytest

import convmem
from convmem.model.conversation import ConversationRecord
from convmem.store import Store, register
from convmem.store.registry import scheme_of
from convmem.store.sqlite import SQLiteStore
from convmem.store.sqlite import connection as sqlite_connection
from convmem.store.sqlite.connection import Statements


def test_a_registered_scheme_opens_through_convmem_open(tmp_path: Path) -> None:
    opened: list[str] = []

    def factory(url: str) -> Store:
        opened.append(url)
        return SQLiteStore(tmp_path / url.split("://", 1)[1])

    register("custom", factory)
    with convmem.open("CUSTOM://plugged.db") as mem:
        conv = mem.scope("acme", "alice").create_conversation(title="via a plug-in")
        conv.append("user", "hello")
    assert opened == ["CUSTOM://plugged.db"]
    with convmem.open(tmp_path / "plugged.db") as mem:  # a plain path: the SQLite backend
        assert mem.scope("acme", "alice").conversation(conv.id).record().title == "via a plug-in"


def test_unknown_schemes_and_malformed_sqlite_urls_are_refused(tmp_path: Path) -> None:
    assert (scheme_of("sqlite:///x.db"), scheme_of("x.db"), scheme_of("A://b")) == (
        "sqlite",
        "",
        "a",
    )
    for url in ("nosuchdb://host/db", "sqlite://relative.db"):
        with pytest.raises(convmem.InvalidInput):
            convmem.open(url)
    assert list(tmp_path.iterdir()) == []


def test_the_store_protocol_is_the_public_extension_point() -> None:
    assert "Store" in convmem.__all__ and convmem.Store is Store
    store: Store = SQLiteStore(":memory:")  # mypy checks SQLiteStore against the Protocols
    assert store.reindex_needed is False
    store.close()


def _record(conversation_id: str) -> ConversationRecord:
    return ConversationRecord(
        conversation_id, "acme", "alice", None, False, None, {}, datetime.now(UTC)
    )


def test_a_failing_statement_inside_a_transaction_is_a_store_error(db_path: Path) -> None:
    store = SQLiteStore(db_path)
    with store.write() as tx:
        tx.insert_conversation("acme", _record("conv_1"))
    with pytest.raises(convmem.StoreError) as raised, store.write() as tx:  # noqa: PT012
        tx.insert_conversation("acme", _record("conv_2"))
        tx.insert_conversation("acme", _record("conv_2"))  # the primary key refuses it
    assert not isinstance(raised.value, sqlite3.Error)
    assert "conv_2" not in str(raised.value)  # the message names the code, not the values
    with store.read() as tx:  # rolled back whole: the first insert of conv_2 went too
        assert [c.id for c in tx.list_conversations("acme", "alice", limit=9, offset=0)] == [
            "conv_1"
        ]
    store.close()


def test_a_bad_cursor_is_invalid_input_not_a_driver_error(db_path: Path) -> None:
    store = SQLiteStore(db_path)
    with pytest.raises(convmem.InvalidInput), store.read() as tx:
        tx.unindexed_messages("not-a-cursor", 10)
    store.close()


def _locked_database(path: Path) -> sqlite3.Connection:
    """A rollback-journal database held under an exclusive lock by another connection: a read
    on it gets SQLITE_BUSY (WAL readers would not wait)."""
    setup = sqlite3.connect(path, isolation_level=None)
    setup.execute("CREATE TABLE t (x INTEGER)")
    setup.execute("INSERT INTO t VALUES (1)")
    setup.close()
    holder = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN EXCLUSIVE")
    return holder


def test_a_statement_sqlite_calls_busy_is_retried_until_the_lock_goes(tmp_path: Path) -> None:
    holder = _locked_database(tmp_path / "locked.db")
    reader = sqlite3.connect(tmp_path / "locked.db", isolation_level=None, timeout=0)
    threading.Timer(0.3, lambda: holder.execute("ROLLBACK")).start()
    # busy at once (timeout 0): without the retry this would raise
    assert Statements(reader).execute("SELECT x FROM t").fetchall() == [(1,)]
    reader.close()
    holder.close()


def test_a_lock_held_past_every_retry_is_store_busy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sqlite_connection, "MAX_WAIT_SECONDS", 0.2)  # not two minutes
    holder = _locked_database(tmp_path / "locked.db")
    reader = sqlite3.connect(tmp_path / "locked.db", isolation_level=None, timeout=0)
    with pytest.raises(convmem.StoreBusy):
        Statements(reader).execute("SELECT x FROM t")
    holder.execute("ROLLBACK")
    with pytest.raises(convmem.StoreError) as raised:  # not retried: no lock is involved
        Statements(reader).execute("SELECT nope FROM t")
    assert not isinstance(raised.value, convmem.StoreBusy | sqlite3.Error)
    reader.close()
    holder.close()
