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

A connection the server dropped is found in three ways, none of which costs a round trip while
the pool is in use:

- Before the ``BEGIN``, whatever the server sent the idle connection is read without a request
  (a zero-timeout poll, then libpq takes in what arrived): a server that ends a connection (a
  restart, an idle timeout, ``pg_terminate_backend``) says goodbye with a FATAL message and
  closes the stream, and either marks it gone. A notice or a parameter status the server sent
  unasked is read too and leaves the connection in use.
- A connection that sat in the pool longer than ``IDLE_CHECK_SECONDS`` is asked (one round
  trip): a server can vanish without a word reaching the client (a failover, a firewall that
  forgets idle streams). One used more recently is not: a busy pool pays nothing.
- A transaction whose connection breaks before its ``COMMIT`` was sent committed nothing: it
  ends in ``ConnectionLost``, and a unit of work run by ``convmem.store.retry`` runs again on
  another connection. Once the ``COMMIT`` is sent, a broken connection may have committed: that
  is ``StoreError``, never run again.

A pool whose server went away tries again in the background, each attempt later than the last,
for at most ``RECONNECT_SECONDS``; then it stops, and the next caller who finds it empty starts
a new attempt at once: the first request after the server came back is served, however long it
was away.

Errors inside a transaction roll it back and reach the caller as ``WriteConflict`` (a deadlock
or a serialisation failure: the unit of work may run again, see ``convmem.store.retry``),
``StoreBusy`` (a lock held past the lock timeout), ``InvalidInput`` (text PostgreSQL cannot
hold) or ``StoreError`` (anything else: the server went away, a constraint). Never a psycopg
exception.
"""

from __future__ import annotations

import logging
import select
import time
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
from psycopg import errors as pg_errors
from psycopg import pq
from psycopg_pool import ConnectionPool, PoolTimeout

from convmem.errors import (
    ConnectionLost,
    ConvmemError,
    InvalidInput,
    StoreBusy,
    StoreError,
    WriteConflict,
)

log = logging.getLogger(__name__)

Connection = psycopg.Connection[Any]

# How long a statement may wait for a row lock before the caller gets StoreBusy (SQLite's busy
# wait is of the same order).
LOCK_TIMEOUT = "30s"
# every connection's HNSW scans apply their query's filters while they walk the graph and return
# rows in a relaxed order the query sorts again (``postgres/vector_index.py``), keeping 100
# candidates in the walk (pgvector's default 40 found 82 % of the exact top 20 at 100,000 turns,
# 100 found 97 % for the same time: benchmarks/pg_vector_scope.py); settings of pgvector's, which
# change no other query
# change no other query. The iterative scan is pgvector 0.8's: on an older one the setting is
# left unset (it would fail every connection) and ``vector_index`` ranks exactly instead; before
# the extension is created (a first migration), the version it will be created at decides.
VECTOR_SCAN_SETTINGS = (
    "SET hnsw.ef_search = 100; DO $$ BEGIN IF string_to_array(coalesce("
    "(SELECT extversion FROM pg_extension WHERE extname = 'vector'), "
    "(SELECT default_version FROM pg_available_extensions WHERE name = 'vector')), '.')::int[] "
    ">= '{0,8}' THEN PERFORM set_config('hnsw.iterative_scan', 'relaxed_order', false); "
    "END IF; END $$"
)
# How long a caller waits for a free pooled connection (or for the server to accept one).
POOL_TIMEOUT_SECONDS = 10.0
# How long the pool keeps trying to reconnect in the background after the server went away
# (1, 2, 4 … seconds apart); past it, a caller who finds the pool empty starts a new attempt.
# Unbounded, the attempts grew minutes apart and a server back after a short absence stayed
# unused for longer than a caller waits (POOL_TIMEOUT_SECONDS).
RECONNECT_SECONDS = POOL_TIMEOUT_SECONDS
# A pooled connection idle longer than this is asked whether the server still holds it.
IDLE_CHECK_SECONDS = 30.0

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


# when each pooled connection last finished a transaction (or connected)
_last_used: weakref.WeakKeyDictionary[Connection, float] = weakref.WeakKeyDictionary()
# the connections the server said goodbye to (a FATAL message while they sat idle)
_doomed: weakref.WeakSet[Connection] = weakref.WeakSet()


def _configure(conn: Connection) -> None:
    from pgvector.psycopg import register_vector

    conn.execute(
        f"SET TimeZone = 'UTC'; SET lock_timeout = '{LOCK_TIMEOUT}'; {VECTOR_SCAN_SETTINGS}"
    )
    register_vector(conn)
    # libpq hands an error that arrives while no query runs to the notice handlers: a FATAL
    # one is the server ending the connection
    doomed = weakref.ref(conn)

    def goodbye(diagnostic: psycopg.errors.Diagnostic) -> None:
        target = doomed()
        if target is not None and diagnostic.severity_nonlocalized in ("FATAL", "PANIC"):
            _doomed.add(target)

    conn.add_notice_handler(goodbye)
    _last_used[conn] = time.monotonic()


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
        reconnect_timeout=RECONNECT_SECONDS,
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
    exception. ``ConnectionLost`` when the connection broke before the ``COMMIT`` was sent."""
    # one attempt per pooled connection that may be stale, and one on a new connection
    for attempt in range(pool.max_size + 1):
        with _connection(pool) as conn:
            if not _usable(conn):
                log.info("dropped a stale database connection (attempt %d)", attempt + 1)
                continue
            committing = False
            try:
                with conn.pipeline():
                    conn.execute(begin)  # queued: it goes with the first statement
                    yield conn
                    committing = True
                    conn.execute("COMMIT")  # with the writes still queued: one round trip
            except BaseException as exc:
                lost = conn.broken or conn.closed
                _rollback(conn)
                if lost and not committing and isinstance(exc, psycopg.Error | StoreError):
                    raise ConnectionLost("the database connection was lost") from exc
                if isinstance(exc, psycopg.Error):
                    raise map_error(exc) from exc
                raise
            finally:
                _last_used[conn] = time.monotonic()
            return
    raise StoreError("the database is unavailable")


def _usable(conn: Connection) -> bool:
    """False (and the connection closed) when the server no longer holds ``conn``: it said so
    while the connection sat in the pool, or, asked after ``IDLE_CHECK_SECONDS`` idle, it does
    not answer."""
    if conn.closed or conn.broken:
        return False
    if _said_goodbye(conn):
        conn.close()
        return False
    if time.monotonic() - _last_used.get(conn, 0.0) < IDLE_CHECK_SECONDS:
        return True
    try:
        conn.execute("SELECT 1")
    except psycopg.Error:
        conn.close()
        return False
    return True


def _said_goodbye(conn: Connection) -> bool:
    """True when what the server sent the idle connection ends it: a FATAL message, or the end
    of the stream. No request: a zero-timeout poll, and libpq reads only what already arrived
    (a notice or a parameter status is taken in and the connection stays usable)."""
    # poll, not select: select refuses descriptors past 1023, and a busy service process (or a
    # long test run) holds more than that, which made every pooled connection look gone
    poller = select.poll()
    try:
        poller.register(conn.fileno(), select.POLLIN)
        readable = bool(poller.poll(0))
    except (OSError, ValueError):
        return True
    if readable:
        try:
            conn.pgconn.consume_input()
            conn.pgconn.is_busy()  # parses what arrived: notices reach their handlers
        except psycopg.Error:
            return True
    return conn.pgconn.status == pq.ConnStatus.BAD or conn in _doomed


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
