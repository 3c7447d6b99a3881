"""Connections and transactions that survive concurrent writers.

SQLite allows one writer at a time. Writers take the lock up front (``BEGIN IMMEDIATE``), so a
transaction never fails half-way on a lock upgrade; ``busy_timeout`` makes SQLite wait for the
lock, and a bounded retry with jittered backoff covers the cases where it returns SQLITE_BUSY
anyway. Only after every retry does a caller see ``StoreBusy``.
"""

from __future__ import annotations

import logging
import random
import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from convmem.errors import StoreBusy, StoreError

log = logging.getLogger(__name__)

BUSY_TIMEOUT_MS = 10_000
MAX_WAIT_SECONDS = 120.0


def connect(path: str) -> sqlite3.Connection:
    db = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=10.0)
    db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    db.execute("PRAGMA foreign_keys = ON")
    db.execute("PRAGMA synchronous = NORMAL")  # durable across process crashes in WAL mode
    _with_retry(lambda: db.execute("PRAGMA journal_mode = WAL"))
    return db


def _is_busy(exc: sqlite3.OperationalError) -> bool:
    text = str(exc).lower()
    return "locked" in text or "busy" in text


def _with_retry(action: Callable[[], object]) -> None:
    deadline = time.monotonic() + MAX_WAIT_SECONDS
    delay = 0.005
    while True:
        try:
            action()
            return
        except sqlite3.OperationalError as exc:
            if not _is_busy(exc):
                raise StoreError(f"database error: {exc}") from exc
            if time.monotonic() > deadline:
                raise StoreBusy("the database stayed locked past every retry") from exc
            log.debug("database busy; retrying in %.3fs", delay)
            time.sleep(delay * (0.5 + random.random()))
            delay = min(delay * 2, 0.5)


@contextmanager
def transaction(db: sqlite3.Connection, mode: str) -> Iterator[sqlite3.Connection]:
    """``BEGIN <mode>`` … ``COMMIT``, rolled back on any exception."""
    _with_retry(lambda: db.execute(f"BEGIN {mode}"))
    try:
        yield db
    except BaseException:
        db.execute("ROLLBACK")
        raise
    try:
        _with_retry(lambda: db.execute("COMMIT"))
    except BaseException:
        if db.in_transaction:
            db.execute("ROLLBACK")
        raise
