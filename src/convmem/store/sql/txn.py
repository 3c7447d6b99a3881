"""What every mixin of the SQL core needs of the backend's transaction."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar, Protocol

from convmem.store.dialect import Dialect


class Cursor(Protocol):
    """A statement's result, as both drivers hand it back."""

    @property
    def rowcount(self) -> int: ...

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...


class SqlTxn:
    """The base of the core's mixins: ``_db`` is the transaction's connection, ``_d`` the
    backend's dialect. A backend overrides ``_changed`` and ``_lock_owner`` where it needs to."""

    # the driver's connection (anything with ``execute(sql, params)`` returning a ``Cursor``);
    # typed loosely so each backend's mixins may name their own connection's type
    _db: Any
    _d: ClassVar[Dialect]

    def _run(self, sql: str, params: Sequence[Any] = ()) -> Cursor:
        """``sql`` (written with ``?`` marks) run in this transaction."""
        cursor: Cursor = self._db.execute(self._d.sql(sql), params)
        return cursor

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
