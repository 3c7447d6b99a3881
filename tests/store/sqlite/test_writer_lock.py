"""The writer lock file beside a SQLite database: writers in other processes wait on it instead
of SQLite's sleeping busy handler, and a holder that never lets go does not hang a writer."""

from __future__ import annotations

import fcntl
import os
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import convmem
from convmem.errors import StoreError
from convmem.store.sqlite import writer_lock as writer_lock_module
from convmem.store.sqlite.store import SQLiteStore
from convmem.store.sqlite.writer_lock import LOCK_FILE_SUFFIX


def _file_lock_is_free(path: Path) -> bool:
    """Whether another open file (as another process would hold) can take the lock now."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    finally:
        os.close(fd)
    return True


def test_a_write_holds_the_lock_file_beside_the_database(tmp_path: Path) -> None:
    db = tmp_path / "chat.db"
    store = SQLiteStore(db)
    lock_file = Path(str(db) + LOCK_FILE_SUFFIX)
    try:
        with store.write():
            assert not _file_lock_is_free(lock_file)
            # a write opened inside another on the same thread reaches SQLite, which refuses it
            # plainly, rather than waiting on the lock its own thread holds
            with pytest.raises(StoreError), store.write():
                pass
            assert not _file_lock_is_free(lock_file)  # the inner one left the outer's lock
        assert _file_lock_is_free(lock_file)
    finally:
        store.close()


def test_a_writer_in_another_process_waits_for_the_lock_and_then_writes(tmp_path: Path) -> None:
    db = tmp_path / "chat.db"
    with convmem.open(str(db)) as memory:
        conversation = memory.scope("acme", "alice").create_conversation()
        conversation.append("user", "first")
    child = textwrap.dedent(f"""
        import convmem
        with convmem.open({str(db)!r}) as memory:
            memory.scope("acme", "alice").conversation({conversation.id!r}).append("user", "second")
    """)
    store = SQLiteStore(db)
    try:
        with store.write():
            writer = subprocess.Popen([sys.executable, "-c", child], stderr=subprocess.PIPE)
            with pytest.raises(subprocess.TimeoutExpired):
                writer.wait(timeout=1.5)  # waiting on our lock, not failing or writing past it
        _, errors = writer.communicate(timeout=60)
        assert writer.returncode == 0, errors.decode()
    finally:
        store.close()
    with convmem.open(str(db)) as memory:
        branch = memory.scope("acme", "alice").conversation(conversation.id).branch()
    assert [m.content for m in branch] == ["first", "second"]


def test_a_lock_holder_that_never_lets_go_does_not_hang_a_writer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(writer_lock_module, "FILE_LOCK_WAIT_S", 0.2)
    db = tmp_path / "chat.db"
    with convmem.open(str(db)) as memory:
        conversation = memory.scope("acme", "alice").create_conversation()
        stuck = os.open(str(db) + LOCK_FILE_SUFFIX, os.O_RDWR | os.O_CREAT)
        try:
            fcntl.flock(stuck, fcntl.LOCK_EX)  # held as by a process that hung holding it
            # past the wait the writer goes on to SQLite's own lock, which is free
            conversation.append("user", "still written")
        finally:
            os.close(stuck)
        assert [m.content for m in conversation.branch()] == ["still written"]


def test_an_in_memory_database_has_no_lock_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = set(os.listdir(tmp_path))
    monkeypatch.chdir(tmp_path)
    with convmem.open(":memory:") as memory:
        memory.scope("acme", "alice").create_conversation().append("user", "hello")
    assert set(os.listdir(tmp_path)) == before


def test_the_store_checkpoints_the_wal_itself_after_its_writes(tmp_path: Path) -> None:
    db = tmp_path / "chat.db"
    with convmem.open(str(db)) as memory:
        conversation = memory.scope("acme", "alice").create_conversation()
        conversation.append("user", "first")
        # SQLite's own checkpoint (inside COMMIT, under the writer lock) is off: the store's
        # own, after the lock is released, must still bring the WAL into the file
        for n in range(400):
            conversation.append("user", f"turn number {n} about the trip")
        # the database file itself, read ignoring the WAL, holds what was written
        frozen = sqlite3.connect(f"file:{db}?immutable=1", uri=True)
        try:
            stored = frozen.execute("SELECT count(*) FROM messages").fetchone()[0]
        finally:
            frozen.close()
    assert stored >= 200


def _open_descriptors_to(folder: Path) -> list[str]:
    fds = Path("/proc/self/fd")
    targets = []
    for fd in fds.iterdir():
        try:
            target = os.readlink(fd)
        except OSError:  # closed between the listing and the read
            continue
        if target.startswith(str(folder)):
            targets.append(target)
    return targets


@pytest.mark.skipif(not Path("/proc/self/fd").exists(), reason="needs /proc")
def test_closing_the_last_store_of_a_file_lets_go_of_its_lock_file(tmp_path: Path) -> None:
    """A process that opens, writes and closes many database files (one per tenant, say) keeps
    no descriptor for any of them: each lock file's stayed open before, until the process ran
    out of descriptors."""
    for n in range(30):
        memory = convmem.open(tmp_path / f"tenant-{n}.db")
        memory.scope("t", "alice").create_conversation().append("user", "hello")
        memory.close()
    assert _open_descriptors_to(tmp_path) == []


@pytest.mark.skipif(not Path("/proc/self/fd").exists(), reason="needs /proc")
def test_a_store_still_open_keeps_the_lock_when_another_of_its_file_closes(
    tmp_path: Path,
) -> None:
    db = tmp_path / "chat.db"
    lock_file = Path(str(db) + LOCK_FILE_SUFFIX)
    first, second = SQLiteStore(db), SQLiteStore(db)
    first.close()
    first.close()  # a second close releases nothing more
    try:
        with second.write():
            assert not _file_lock_is_free(lock_file)
        assert _file_lock_is_free(lock_file)
    finally:
        second.close()
    assert _open_descriptors_to(tmp_path) == []
