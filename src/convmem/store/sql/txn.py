"""What every mixin of the SQL core needs of the backend's transaction."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, TypeVar

from convmem.store.dialect import Dialect

if TYPE_CHECKING:
    from convmem.store.lineage import Cascade


class Cursor(Protocol):
    """A statement's result, as both drivers hand it back."""

    @property
    def rowcount(self) -> int: ...

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...


T = TypeVar("T")

# A read a backend may queue ahead and keep for the rest of a read transaction: its key, how it
# is sent, and how its answer is decoded (``SqlTxn._snapshot_read``).
SnapshotRead = tuple[tuple[str, ...], Callable[[], Cursor], Callable[[Cursor], T]]


class SqlTxn:
    """The base of the core's mixins: ``_db`` is the transaction's connection, ``_d`` the
    backend's dialect. A backend overrides ``_changed`` and ``_lock_owner`` where it needs to."""

    # the driver's connection (anything with ``execute(sql, params)`` returning a ``Cursor``);
    # typed loosely so each backend's mixins may name their own connection's type
    _db: Any
    _d: ClassVar[Dialect]

    if TYPE_CHECKING:  # the backend's cascade mixin: the lineage graph on this transaction

        def _cascade(self) -> Cascade: ...

    def _run(self, sql: str, params: Sequence[Any] = ()) -> Cursor:
        """``sql`` (written with ``?`` marks) run in this transaction."""
        cursor: Cursor = self._db.execute(self._d.sql(sql), params)
        return cursor

    def _run_many(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        """``sql`` run once for each of ``rows``."""
        self._db.executemany(self._d.sql(sql), rows)

    def _snapshot_read(
        self, key: tuple[str, ...], send: Callable[[], Cursor], decode: Callable[[Cursor], T]
    ) -> T:
        """A read of settings a request asks for more than once (a tenant's policy, a user's
        memory switch): here simply run; a backend whose reads cost a round trip keeps the
        answer for the rest of a read transaction."""
        return decode(send())

    def _owned(self, tenant: str, user: str, table: str, ids: Sequence[str]) -> list[str]:
        """Which of these ids name rows of ``table`` the user owns (``table`` is ours)."""
        rows = self._run(
            f"SELECT id FROM {table} WHERE tenant_id = ? AND user_id = ? AND id {self._d.one_of}",
            (tenant, user, self._d.ids(ids)),
        ).fetchall()
        return [row[0] for row in rows]

    def _returned(self, sql: str, params: Sequence[Any] = ()) -> Any:
        """The one row a statement ending in ``RETURNING`` gave back, or None. Read to the end:
        SQLite's write is finished (and its statement reset) only then."""
        rows = self._run(sql, params).fetchall()
        return rows[0] if rows else None

    def _changed(self, cursor: Cursor) -> int:
        """The rows ``cursor``'s statement changed."""
        return cursor.rowcount

    def _lock_owner(self, tenant: str, user: str) -> None:
        """In a write, serialise this user's read-modify-write of memories, pins and settings
        with other writers of them. Nothing to do where one writer holds the whole database."""
