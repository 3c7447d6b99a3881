"""What differs between the SQL backends, as one value: the SQL core (``convmem.store.sql``) and
the lineage cascade write their statements once and ask the backend's ``Dialect`` for the rest.

Statements of the core are written with ``?`` for a parameter and pass through ``Dialect.sql``
(PostgreSQL's driver wants ``%s``); so they hold no other ``?`` and no ``%``. What a value looks
like as a parameter differs too: SQLite keeps JSON and times as text, psycopg adapts them itself.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from convmem.store.rows import Codec


@dataclass(frozen=True)
class Dialect:
    """A backend's SQL and driver, as far as the shared statements need to know."""

    mark: str  # the driver's parameter mark: "?" or "%s"
    one_of: str  # "is one of these" in the dialect's own mark: "IN (SELECT … json_each(?))"
    ids: Callable[[Sequence[Any]], Any]  # the parameter ``one_of`` takes for a list
    json_text: str  # a JSON document's key as text, with {column} and {key}
    codec: Codec  # how JSON and time columns come back
    json: Callable[[Any], Any]  # a JSON document as a parameter
    time: Callable[[datetime], Any]  # a time as a parameter (SQLite: UTC text, microseconds)
    iso: Callable[[datetime], Any]  # the same, in the form SQLite kept some tables' times in
    flag: Callable[[bool], Any]  # a boolean as a parameter (SQLite: 0 or 1)
    row_order: str  # the order rows of ``messages m`` were inserted in
    index_order: str  # the same for rows of ``message_index i``
    distinct_from: str  # "is not equal, NULL counting as a value" (SQLite: IS NOT)
    bytewise: str  # what makes a text column order bytewise (PostgreSQL: ' COLLATE "C"')
    # put before a column to keep the planner off its index where the backend's planner would
    # pick a worse one (SQLite: the unary "+")
    unindexed: str
    # a write's row lock on what it read, where the backend has row locks (SQLite: its one
    # writer holds the whole database), and the same that skips rows another writer holds
    for_update: str = ""
    skip_locked: str = ""
    # tables of the lineage graph this backend keeps otherwise (PostgreSQL: token counts are
    # columns of ``messages``)
    absent: frozenset[str] = frozenset()

    def sql(self, text: str) -> str:
        """A statement written with ``?`` marks in this dialect's marks."""
        return text if self.mark == "?" else text.replace("?", self.mark)
