"""The lock every writer of one SQLite file takes before SQLite's own.

SQLite makes a second writer wait in its busy handler, which sleeps in steps of up to 100 ms and
so leaves a freed lock idle: under a service's concurrent writers most of the tail was that sleep.
Writers of one process queue on a re-entrant thread lock, woken the moment it is free; writers in
different processes (``serve --workers N``, a worker beside the service) meet at an exclusive
``flock`` on a small file beside the database, ``<database>-writer.lock``, where the kernel wakes
the next one within a couple of milliseconds. ``flock`` locks belong to the open file, not the
process, so they never touch the POSIX locks SQLite holds on the database file itself.

The file lock is polled, not waited on, so that the wait is bounded: after SQLite's own busy
timeout the writer goes on to SQLite's lock, which then waits its timeout again and reports
``StoreBusy``, as it did before this lock existed (a stuck writer elsewhere never hangs us).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: processes meet at SQLite's lock alone
    fcntl = None  # type: ignore[assignment]

from convmem.store.sqlite.connection import BUSY_TIMEOUT_MS

LOCK_FILE_SUFFIX = "-writer.lock"
# how long a writer waits for the file lock before it goes on to SQLite's (module-level: tests
# shorten it)
FILE_LOCK_WAIT_S = BUSY_TIMEOUT_MS / 1000


class WriterLock:
    """One per database file per process while a store of that file is open (see
    :func:`writer_lock` and :func:`release_writer_lock`)."""

    def __init__(self, path: str) -> None:
        self._lock_path = None if path == ":memory:" else path + LOCK_FILE_SUFFIX
        self._threads = threading.RLock()
        self._depth = 0  # guarded by _threads: only the outermost hold takes the file lock
        self._fd: int | None = None
        self._fd_pid = 0
        self._users = 0  # open stores of this file in this process (guarded by the registry's)

    def _close_file(self) -> None:
        """Let go of the lock file's descriptor (no store of the file is open any more); a
        hold running in another thread finishes first."""
        with self._threads:
            if self._fd is not None and self._fd_pid == os.getpid():
                os.close(self._fd)
            self._fd = None

    @contextmanager
    def hold(self) -> Iterator[None]:
        with self._threads:
            self._depth += 1
            fd = self._file() if self._depth == 1 else None
            try:
                locked = None
                if fd is not None and _lock_within(fd, FILE_LOCK_WAIT_S):
                    locked = fd
                try:
                    yield
                finally:
                    if locked is not None:
                        fcntl.flock(locked, fcntl.LOCK_UN)
            finally:
                self._depth -= 1

    def _file(self) -> int | None:
        if self._lock_path is None or fcntl is None:
            return None
        # a forked child must not share the parent's open file, or the two would hold one lock
        if self._fd is None or self._fd_pid != os.getpid():
            try:
                self._fd = os.open(self._lock_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
            except OSError:
                return None  # e.g. a read-only folder: SQLite's own lock still serialises writers
            self._fd_pid = os.getpid()
        return self._fd


def _lock_within(fd: int, seconds: float) -> bool:
    """Take the exclusive file lock, polling with short sleeps; False if ``seconds`` pass."""
    deadline = time.monotonic() + seconds
    pause = _FIRST_PAUSE_S
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if time.monotonic() >= deadline:
                return False
            time.sleep(pause)
            pause = min(pause * 2, _LONGEST_PAUSE_S)


# a writer's transaction takes a few milliseconds: a waiter looks again about that often
_FIRST_PAUSE_S = 0.0002
_LONGEST_PAUSE_S = 0.002

_WRITER_LOCKS: dict[str, WriterLock] = {}
_WRITER_LOCKS_GUARD = threading.Lock()


def writer_lock(path: str) -> WriterLock:
    """The one lock of this process that every writer of the file at ``path`` takes, held for
    a store until :func:`release_writer_lock`.

    Re-entrant, so a write opened inside another on the same thread still reaches SQLite, which
    refuses it plainly rather than waiting on itself."""
    key = path if path == ":memory:" else os.path.realpath(path)
    with _WRITER_LOCKS_GUARD:
        lock = _WRITER_LOCKS.setdefault(key, WriterLock(key))
        lock._users += 1
        return lock


def release_writer_lock(lock: WriterLock) -> None:
    """A store of the file closed: the last one's close lets go of the lock file's descriptor
    and the registry's entry, so a process that opens and closes many database files (one per
    tenant, say) does not keep a descriptor for each until it reaches its limit."""
    with _WRITER_LOCKS_GUARD:
        lock._users -= 1
        if lock._users > 0:
            return
        for key, known in list(_WRITER_LOCKS.items()):
            if known is lock:
                del _WRITER_LOCKS[key]
    lock._close_file()
