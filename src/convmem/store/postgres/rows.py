"""Conversions between PostgreSQL rows and convmem's values (shared by the PostgreSQL mixins)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import Any, Generic, TypeVar

import numpy as np
import psycopg
from pgvector import HalfVector
from psycopg import errors as pg_errors
from psycopg.types.json import Jsonb

from convmem.errors import StoreError, TimeLimitExceeded
from convmem.model.deadline import Deadline
from convmem.store.dialect import Dialect
from convmem.store.postgres.connection import Connection, map_error, settled
from convmem.store.rows import DECODED, export_bytes
from convmem.store.search_index import Vector
from convmem.store.sql.txn import Cursor, SqlTxn

# The path from a message towards the root, at most ``limit`` messages, as (id, n) with n = 0 at
# the start. Parameters: start id, tenant, limit. Each step looks its message up by key (a
# LATERAL subquery with LIMIT 1): joined plainly, a planner that took the table for nearly empty
# (a young table, not analysed yet) read the conversation's messages for every step instead,
# 63 ms for a 260-turn walk against well under 1 ms.
CHAIN_CTE = """
    WITH RECURSIVE chain(id, n) AS (
        SELECT %s::text, 0
        UNION ALL
        SELECT m.parent_id, chain.n + 1 FROM chain
        CROSS JOIN LATERAL (SELECT x.parent_id FROM messages x
            WHERE x.tenant_id = %s AND x.id = chain.id LIMIT 1) m
        WHERE m.parent_id IS NOT NULL AND chain.n + 1 < %s
    )
"""


def _as_is(value: Any) -> Any:
    return value


# psycopg adapts times, booleans and lists itself; a JSON document goes wrapped.
POSTGRES = Dialect(
    mark="%s",
    one_of="= ANY(%s)",
    ids=list,
    json_text="{column} ->> '{key}'",
    codec=DECODED,
    json=Jsonb,
    time=_as_is,
    iso=_as_is,
    flag=bool,
    row_order="m.seq",
    index_order="i.seq",
    distinct_from="IS DISTINCT FROM",
    bytewise=' COLLATE "C"',
    unindexed="",
    for_update=" FOR UPDATE",
    skip_locked=" FOR UPDATE SKIP LOCKED",
    absent=frozenset({"message_tokens"}),  # token counts are columns of messages
)


def halfvec(vector: Vector) -> HalfVector:
    """A float32 row as pgvector's ``halfvec`` (float16: half the disk, the same ranks)."""
    return HalfVector(np.asarray(vector, dtype=np.float16))


def float32_row(value: HalfVector) -> Vector:
    return np.asarray(value.to_numpy(), dtype=np.float32)


# The first key of every owner lock: a class of its own among advisory locks.
OWNER_LOCK_CLASS = 7_211_432


T = TypeVar("T")


class _Pending(Generic[T]):
    """A queued read and how its answer is decoded; decoded once, when first asked for."""

    def __init__(self, sent: Cursor, decode: Callable[[Cursor], T]) -> None:
        self._sent: Cursor | None = sent
        self._decode = decode
        self._value: T | None = None

    def value(self) -> T:
        if self._sent is not None:
            self._value = self._decode(self._sent)
            self._sent = None
        return self._value  # type: ignore[return-value]


class TxnBase(SqlTxn):
    """State every mixin shares: the transaction's connection, and the locks it holds."""

    _db: Connection
    _d = POSTGRES

    def __init__(self, db: Connection, *, writable: bool) -> None:
        self._db = db
        self._writable = writable
        self._locked_owners: set[tuple[str, str]] = set()
        self._snapshot: dict[tuple[str, ...], _Pending[Any]] = {}
        # index rows read ahead with an append's state (``SearchTxnMixin.indexed_rows``): the
        # ids they answer for, and the queued read
        self._indexed_ahead: tuple[frozenset[str], psycopg.Cursor[Any]] | None = None

    def _snapshot_read(
        self,
        key: tuple[str, ...],
        send: Callable[[], Cursor],
        decode: Callable[[Cursor], T],
    ) -> T:
        """A read of settings a request asks for more than once (a tenant's policy, a user's
        memory switch). A read transaction sees one snapshot, so what it read once is the answer
        for the rest of it (and ``_prefetch`` may have queued it with the request's first
        reads); a write transaction may change them, so it reads every time."""
        if self._writable:
            return decode(send())
        pending = self._snapshot.get(key)
        if pending is None:
            pending = self._snapshot[key] = _Pending(send(), decode)
        try:
            value: T = pending.value()
        except BaseException:
            # a read that failed (a part's time limit, rolled back to its savepoint) is not the
            # answer: the next part that asks reads again
            self._snapshot.pop(key, None)
            raise
        return value

    def _prefetch(
        self,
        key: tuple[str, ...],
        send: Callable[[], Cursor],
        decode: Callable[[Cursor], Any],
    ) -> None:
        """Queue a ``_snapshot_read`` now, to go with the next round trip (read transactions)."""
        if not self._writable and key not in self._snapshot:
            self._snapshot[key] = _Pending(send(), decode)

    def _run_many(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        # one prepared statement, its rows sent in the transaction's pipeline
        self._db.cursor().executemany(self._d.sql(sql), rows)

    def _changed(self, cursor: Cursor) -> int:
        """The rows ``cursor``'s statement changed (it may still be queued in the pipeline)."""
        settled(self._db)
        return cursor.rowcount

    @contextmanager
    def time_limited(self, deadline: Deadline) -> Iterator[None]:
        """Statements inside stop at ``deadline`` (``convmem.store.limits``): a savepoint, so a
        statement that fails or is cancelled there does not abort the whole transaction, and
        ``statement_timeout`` for the time left, so the server cancels the one still running
        when it passes. After a failure the transaction rolls back to the savepoint (which also
        restores the timeout); after success it releases it and resets the timeout."""
        if self._writable:  # rolling back to the savepoint would drop the stretch's writes
            raise StoreError("a time-limited stretch runs in a read transaction only")
        ms = max(1, int(deadline.remaining() * 1000))
        # queued (pipeline mode): they go with the stretch's first statement
        self._db.execute("SAVEPOINT time_limited")
        self._db.execute(f"SET LOCAL statement_timeout = {ms}")
        try:
            yield
        except pg_errors.QueryCanceled:
            self._undo_stretch()
            raise TimeLimitExceeded(deadline.limit) from None
        except psycopg.Error as exc:
            self._undo_stretch()
            raise map_error(exc) from exc
        except BaseException:
            self._undo_stretch()
            raise
        self._end_stretch()
        if deadline.passed():  # finished, but late: what it found comes too late to use
            raise TimeLimitExceeded(deadline.limit)

    def _end_stretch(self) -> None:
        # A stretch that went well is released, not rolled back: psycopg forgets every prepared
        # statement of the connection when it sees a ROLLBACK (the server would keep them), so
        # rolling back after each assembly's stretches re-planned every statement of every
        # request. The timeout goes back to the session's own value (DEFAULT is what it was at
        # connect: the server's, the role's or the connection options').
        try:
            self._db.execute("RELEASE SAVEPOINT time_limited")
            self._db.execute("SET LOCAL statement_timeout TO DEFAULT")
        except psycopg.Error as exc:
            raise map_error(exc) from exc

    def _undo_stretch(self) -> None:
        try:
            settled(self._db)  # the failure left the pipeline skipping statements until a sync
            self._db.execute("ROLLBACK TO SAVEPOINT time_limited")
            self._db.execute("RELEASE SAVEPOINT time_limited")
        except psycopg.Error as exc:  # the connection itself failed: the transaction is lost
            raise map_error(exc) from exc

    def _lock_owner(self, tenant: str, user: str) -> None:
        """In a write, serialise this user's read-modify-write of memories, pins and settings
        with every other writer of them (other users are not held up). A transaction-scoped
        advisory lock: nothing is written, and it goes with the transaction. Two users whose
        keys collide (32 bits) merely wait for each other."""
        if not self._writable or (tenant, user) in self._locked_owners:
            return
        self._db.execute(
            "SELECT pg_advisory_xact_lock(%s, hashtext(%s))",
            (OWNER_LOCK_CLASS, f"{len(tenant)}:{tenant}/{user}"),
        )
        self._locked_owners.add((tenant, user))

    def _forget_unused_term_vectors(self, tenant: str, terms: Sequence[str]) -> None:
        """A word's vector leaves with the tenant's last conversation that uses it."""
        if not terms:
            return
        self._db.execute(
            "DELETE FROM term_vectors v WHERE v.tenant_id = %s AND v.term = ANY(%s) "
            "AND NOT EXISTS (SELECT 1 FROM conversation_terms t "
            "WHERE t.tenant_id = %s AND t.term = v.term)",
            (tenant, list(terms), tenant),
        )


def export_value(value: Any) -> Any:
    """A column value as the JSON-ready form exports carry (times as ISO text)."""
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, HalfVector):
        return None
    return export_bytes(value)
