"""A pool of connections, transactions on them, and psycopg's errors mapped onto convmem's tree.

Connections run in autocommit mode and every transaction is an explicit ``BEGIN`` … ``COMMIT``:
reads are ``REPEATABLE READ, READ ONLY`` (one snapshot for a whole assembly, and they can never
fail to serialise), writes are ``READ COMMITTED`` with explicit locks (the store takes them: the
conversation's row for its messages, a transaction-scoped advisory lock per user for memories
and pins), so a write waits for the one it conflicts with instead of failing at commit.

A transaction runs in pipeline mode, so what needs no answer costs no round trip of its own:
the ``BEGIN`` goes with the first statement, a statement whose result nobody reads (an insert,
an update, a savepoint, ``SET LOCAL``) goes with the next one that is read, and the writes after
the last read go with the ``COMMIT``. A round trip is paid where the caller reads a result (or
asks for a row count: ``settled``). Errors of a queued statement surface at that next round trip,
still inside the transaction: it is rolled back and the error mapped as below.

Before the ``BEGIN`` the pooled connection is checked without a round trip: a connection the
server dropped while it sat idle (a restart, an idle timeout, ``pg_terminate_backend``) has
something to read (the server's goodbye, or the end of the stream), so it is closed, discarded
by the pool, and the transaction starts on another — before anything of the caller's ran.

Errors inside a transaction roll it back and reach the caller as ``WriteConflict`` (a deadlock
or a serialisation failure: the unit of work may run again, see ``convmem.store.retry``),
``StoreBusy`` (a lock held past the lock timeout), ``InvalidInput`` (text PostgreSQL cannot
hold) or ``StoreError`` (anything else: the server went away, a constraint). Never a psycopg
exception.
"""

from __future__ import annotations

import logging
import select
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
from psycopg import errors as pg_errors
from psycopg_pool import ConnectionPool, PoolTimeout

from convmem.errors import ConvmemError, InvalidInput, StoreBusy, StoreError, WriteConflict

log = logging.getLogger(__name__)

Connection = psycopg.Connection[Any]

# How long a statement may wait for a row lock before the caller gets StoreBusy (SQLite's busy
# wait is of the same order).
LOCK_TIMEOUT = "30s"
# How long a caller waits for a free pooled connection (or for the server to accept one).
POOL_TIMEOUT_SECONDS = 10.0

# the database aborted the transaction to let another one through: the unit may run again
_CONFLICT = (pg_errors.SerializationFailure, pg_errors.DeadlockDetected)


def map_error(exc: psycopg.Error) -> ConvmemError:
    """The error a caller sees for a driver error (messages name the failure, never content)."""
    if isinstance(exc, _CONFLICT):
        return WriteConflict(f"the database reported a conflict: {type(exc).__name__}")
    if isinstance(exc, pg_errors.LockNotAvailable):  # lock_timeout: it already waited that long
        return StoreBusy("a lock stayed held past the lock timeout")
    if isinstance(exc, pg_errors.CharacterNotInRepertoire | pg_errors.UntranslatableCharacter):
        return InvalidInput("text holds a character PostgreSQL cannot store")
    if isinstance(exc, psycopg.DataError) and "NUL" in str(exc):
        return InvalidInput("text holds a NUL character, which PostgreSQL cannot store")
    if isinstance(exc, psycopg.OperationalError):
        return StoreError("the database is unavailable")
    sqlstate = getattr(exc, "sqlstate", None) or "unknown"
    return StoreError(f"database error {type(exc).__name__} (SQLSTATE {sqlstate})")


def _configure(conn: Connection) -> None:
    from pgvector.psycopg import register_vector

    conn.execute(f"SET TimeZone = 'UTC'; SET lock_timeout = '{LOCK_TIMEOUT}'")
    register_vector(conn)


def make_pool(
    url: str,
    *,
    min_size: int,
    max_size: int,
    connection_class: type[Connection] = psycopg.Connection,
) -> ConnectionPool[Connection]:
    return ConnectionPool(
        url,
        connection_class=connection_class,
        kwargs={"autocommit": True},
        min_size=min_size,
        max_size=max_size,
        configure=_configure,
        timeout=POOL_TIMEOUT_SECONDS,
        # a server that went away is retried in the background; callers get StoreError meanwhile
        reconnect_timeout=3600.0,
        open=True,
        name="convmem",
    )


@contextmanager
def _connection(pool: ConnectionPool[Connection]) -> Iterator[Connection]:
    try:
        with pool.connection() as conn:
            yield conn
    except PoolTimeout as exc:
        raise StoreBusy("no database connection became free in time") from exc


@contextmanager
def transaction(pool: ConnectionPool[Connection], begin: str) -> Iterator[Connection]:
    """``begin`` … ``COMMIT`` on a pooled connection, in pipeline mode; rolled back on any
    exception."""
    # one attempt per pooled connection that may be stale, and one on a new connection
    for attempt in range(pool.max_size + 1):
        with _connection(pool) as conn:
            if _went_away(conn):
                log.info("dropped a stale database connection (attempt %d)", attempt + 1)
                continue
            try:
                with conn.pipeline():
                    conn.execute(begin)  # queued: it goes with the first statement
                    yield conn
                    conn.execute("COMMIT")  # with the writes still queued: one round trip
            except psycopg.Error as exc:
                _rollback(conn)
                raise map_error(exc) from exc
            except BaseException:
                _rollback(conn)
                raise
            return
    raise StoreError("the database is unavailable")


def _went_away(conn: Connection) -> bool:
    """True (and the connection closed) when the server dropped it while it sat in the pool.

    An idle connection in autocommit has nothing to read; if its socket is readable, the
    server said goodbye or closed the stream. No round trip: a zero-timeout poll."""
    if conn.closed or conn.broken:
        return True
    try:
        readable, _, _ = select.select([conn.fileno()], [], [], 0)
    except (OSError, ValueError):
        readable = [True]
    if not readable:
        return False
    # readable: the server said goodbye, or sent something unasked (a notice, a parameter
    # status) that a goodbye cannot be told from without asking: one round trip, only then
    try:
        conn.execute("SELECT 1")
    except psycopg.Error:
        conn.close()
        return True
    return False


def settled(conn: Connection) -> None:
    """The queued statements have run: their row counts are known and their errors raised. After
    an error, the pipeline takes statements again (the server skips them until this sync)."""
    with conn.pipeline() as pipeline:  # the transaction's own pipeline, entered again
        pipeline.sync()


def _rollback(conn: Connection) -> None:
    if conn.closed or conn.broken:
        return  # the pool discards it
    try:
        conn.execute("ROLLBACK")
    except psycopg.Error:
        log.warning("rollback failed; the connection is discarded", exc_info=True)
        conn.close()
