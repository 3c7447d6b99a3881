"""Connections, transactions and statements that survive concurrent writers, with every driver
error mapped onto convmem's error tree.

SQLite allows one writer at a time. Writers take the lock up front (``BEGIN IMMEDIATE``), so a
transaction never fails half-way on a lock upgrade; ``busy_timeout`` makes SQLite wait for the
lock, and a bounded retry with jittered backoff covers the cases where it returns SQLITE_BUSY
anyway. Only after every retry does a caller see ``StoreBusy``.

A stretch of reads may carry a deadline (``Statements.time_limited``, for the parts of an
assembly): a progress handler interrupts the statement running when it passes, no statement
starts after it, and either comes out as ``TimeLimitExceeded``. A read that fails in SQLite leaves
its transaction usable, so the stretch needs no savepoint.

Every statement goes through ``Statements``: an error SQLite says a statement may be retried after
(``SQLITE_BUSY``, ``SQLITE_BUSY_RECOVERY``, ``SQLITE_LOCKED``) is retried like BEGIN; a snapshot
that went stale under a reader (``SQLITE_BUSY_SNAPSHOT``) cannot be retried inside the transaction
and is ``StoreBusy`` at once; anything else is ``StoreError``. ``transaction`` maps what might
still escape (a row fetched later), so no ``sqlite3`` exception ever reaches a caller. Messages
name SQLite's error code, never the statement or its values.
"""

from __future__ import annotations

import logging
import random
import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, TypeVar

from convmem.errors import StoreBusy, StoreError, TimeLimitExceeded
from convmem.model.deadline import Deadline

log = logging.getLogger(__name__)

BUSY_TIMEOUT_MS = 10_000
MAX_WAIT_SECONDS = 120.0
# Result codes after which SQLite allows the same statement to run again.
_RETRYABLE = frozenset(
    {
        sqlite3.SQLITE_BUSY,
        sqlite3.SQLITE_LOCKED,
        261,  # SQLITE_BUSY_RECOVERY: another connection is recovering the WAL
        773,  # SQLITE_BUSY_TIMEOUT
    }
)
_BUSY_SNAPSHOT = 517
# How many virtual-machine steps SQLite runs between two looks at a deadline: a look is a
# Python call, so not every step, and a few thousand steps take well under a millisecond.
PROGRESS_STEPS = 2000

T = TypeVar("T")


def mapped(exc: sqlite3.Error) -> StoreError:
    """The convmem error for a driver error (a lock is ``StoreBusy``)."""
    code = getattr(exc, "sqlite_errorcode", None)
    name = getattr(exc, "sqlite_errorname", None) or type(exc).__name__
    if code in _RETRYABLE or code == _BUSY_SNAPSHOT or _is_busy(exc):
        return StoreBusy(f"the database stayed locked ({name})")
    return StoreError(f"database error ({name})")


def _is_busy(exc: sqlite3.Error) -> bool:
    if getattr(exc, "sqlite_errorcode", None) is not None:
        return exc.sqlite_errorcode in _RETRYABLE
    text = str(exc).lower()  # no code (the connection failed to open): the message says
    return isinstance(exc, sqlite3.OperationalError) and ("locked" in text or "busy" in text)


def with_retry(action: Callable[[], T]) -> T:
    """Run ``action``; while SQLite says it may be retried, wait (jittered, growing) and run it
    again, up to ``MAX_WAIT_SECONDS``. Driver errors come out as ``StoreError``/``StoreBusy``."""
    deadline = time.monotonic() + MAX_WAIT_SECONDS
    delay = 0.005
    while True:
        try:
            return action()
        except sqlite3.Error as exc:
            if not _is_busy(exc):
                raise mapped(exc) from exc
            if time.monotonic() > deadline:
                raise StoreBusy("the database stayed locked past every retry") from exc
            log.debug("database busy; retrying in %.3fs", delay)
            time.sleep(delay * (0.5 + random.random()))
            delay = min(delay * 2, 0.5)


# Values bound per statement by Statements.insert_rows: far below SQLite's limit (32,766), and
# past the point where fewer statements save anything measurable.
VALUES_PER_STATEMENT = 2000


class Statements:
    """A transaction's connection: every statement retried or mapped as the module says."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db
        self._deadline: Deadline | None = None

    def execute(self, sql: str, params: Sequence[Any] = ()) -> sqlite3.Cursor:
        if self._deadline is not None and self._deadline.passed():
            raise TimeLimitExceeded(self._deadline.limit)
        return with_retry(lambda: self._db.execute(sql, params))

    @contextmanager
    def time_limited(self, deadline: Deadline) -> Iterator[None]:
        """Statements inside stop at ``deadline`` (see the module's docstring)."""
        self._deadline = deadline
        self._db.set_progress_handler(deadline.passed, PROGRESS_STEPS)
        try:
            yield
        except sqlite3.Error as exc:  # one that escaped a statement (a row fetched later)
            if _interrupted(exc):
                raise TimeLimitExceeded(deadline.limit) from None
            raise mapped(exc) from exc
        except TimeLimitExceeded:
            raise
        except StoreError as exc:
            if isinstance(exc.__cause__, sqlite3.Error) and _interrupted(exc.__cause__):
                raise TimeLimitExceeded(deadline.limit) from None
            raise
        finally:
            self._db.set_progress_handler(None, 0)
            self._deadline = None
        if deadline.passed():  # finished, but late: what it found comes too late to use
            raise TimeLimitExceeded(deadline.limit)

    def insert_rows(self, insert: str, rows: Sequence[Sequence[Any]]) -> None:
        """``insert`` (``INSERT … VALUES``, without the values) run with many rows per statement,
        about ``VALUES_PER_STATEMENT`` values each: a statement's start costs what its rows do
        (its program, a savepoint, FTS5 flushing its pending postings), and the GIL is released
        and taken back once per statement, not once per row as ``executemany`` does. Each
        statement is whole or absent, so a retried one does not repeat rows."""
        if not rows:
            return
        width = len(rows[0])
        row = "(" + ", ".join("?" * width) + ")"
        per = max(1, VALUES_PER_STATEMENT // width)
        for start in range(0, len(rows), per):
            chunk = rows[start : start + per]
            self.execute(insert + ", ".join([row] * len(chunk)), [v for r in chunk for v in r])

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> sqlite3.Cursor:
        # not retried: the rows before the one that failed took effect already
        try:
            return self._db.executemany(sql, rows)
        except sqlite3.Error as exc:
            raise mapped(exc) from exc


def _interrupted(exc: sqlite3.Error) -> bool:
    return getattr(exc, "sqlite_errorcode", None) == sqlite3.SQLITE_INTERRUPT


def connect(path: str) -> sqlite3.Connection:
    try:
        db = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=10.0)
    except sqlite3.Error as exc:
        if getattr(exc, "sqlite_errorcode", None) == sqlite3.SQLITE_CANTOPEN:
            # the one error whose cause is the path (a folder, no permission): name it
            raise StoreError(f"cannot open the database file {path} (SQLITE_CANTOPEN)") from exc
        raise mapped(exc) from exc
    statements = Statements(db)
    statements.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    statements.execute("PRAGMA foreign_keys = ON")
    statements.execute("PRAGMA synchronous = NORMAL")  # durable across process crashes in WAL
    # deleted content is overwritten with zeros, not left in free space (see erase.py)
    statements.execute("PRAGMA secure_delete = ON")
    statements.execute("PRAGMA journal_mode = WAL")
    return db


def _rollback(db: sqlite3.Connection) -> None:
    try:
        if db.in_transaction:
            db.execute("ROLLBACK")
    except sqlite3.Error as exc:
        raise mapped(exc) from exc


@contextmanager
def transaction(db: sqlite3.Connection, mode: str) -> Iterator[Statements]:
    """``BEGIN <mode>`` … ``COMMIT``, rolled back on any exception."""
    with_retry(lambda: db.execute(f"BEGIN {mode}"))
    try:
        yield Statements(db)
    except sqlite3.Error as exc:  # one that escaped a statement (a row fetched later)
        _rollback(db)
        raise mapped(exc) from exc
    except BaseException:
        _rollback(db)
        raise
    try:
        with_retry(lambda: db.execute("COMMIT"))
    except BaseException:
        _rollback(db)
        raise
