"""The driver hook that counts what a PostgreSQL store costs: round trips, statements, kinds.

A psycopg connection class (``CountingConnection``) passed to the store as its
``connection_class``; its cursors count statements and its ``wait`` counts round trips. A round
trip is a wait in which the client blocks until the server answers: psycopg runs every exchange
as a generator of socket waits, and the exchange counts once if it waits to read. A query sent
and its result awaited is one; in pipeline mode, statements queued and sent without waiting
(psycopg's ``wait`` is called for each, but only to flush them) cost nothing until a result is
fetched or the pipeline syncs, and then the whole batch costs one. Without pipelines this counts
exactly what counting every ``wait`` counted (each plain exchange waits to read once).
Used by ``benchmarks/round_trips.py`` and by the test that pins a chat turn's count.
"""

from __future__ import annotations

import re
import threading
from collections import Counter
from collections.abc import Generator
from dataclasses import dataclass, field
from typing import Any

import psycopg
from psycopg.waiting import Wait


@dataclass
class Tally:
    """What the driver did: waits on the server, statements, and their kinds."""

    round_trips: int = 0
    statements: int = 0
    kinds: Counter[str] = field(default_factory=Counter)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def statement(self, sql: str) -> None:
        words = sql.lstrip().split(None, 2)
        kind = words[0].upper() if words else "?"
        with self.lock:
            self.statements += 1
            self.kinds[kind] += 1
            if re.search(r"\bFROM\s+conversations\b", sql, re.IGNORECASE):
                self.kinds["reads of conversations"] += 1

    def round_trip(self) -> None:
        with self.lock:
            self.round_trips += 1

    def snapshot(self) -> dict[str, int]:
        with self.lock:
            return {
                "round_trips": self.round_trips,
                "statements": self.statements,
                "transactions": self.kinds["BEGIN"],
                "savepoints": self.kinds["SAVEPOINT"],
                "conversation_reads": self.kinds["reads of conversations"],
            }


TALLY = Tally()


def delta(after: dict[str, int], before: dict[str, int]) -> dict[str, int]:
    return {key: after[key] - before[key] for key in after}


def _text(cursor: psycopg.Cursor[Any], query: Any) -> str:
    return query.as_string(cursor.connection) if hasattr(query, "as_string") else str(query)


class CountingCursor(psycopg.Cursor[Any]):
    def execute(self, query: Any, params: Any = None, **kwargs: Any) -> Any:
        TALLY.statement(_text(self, query))
        return super().execute(query, params, **kwargs)

    def executemany(self, query: Any, params_seq: Any, **kwargs: Any) -> None:
        TALLY.statement(_text(self, query))
        super().executemany(query, params_seq, **kwargs)


def _counted(gen: Generator[Any, Any, Any]) -> Generator[Any, Any, Any]:
    """``gen``, counting one round trip the first time it waits to read the server's answer."""
    waited = False
    try:
        state = next(gen)
        while True:
            if not waited and int(state) == int(Wait.R):
                TALLY.round_trip()
                waited = True
            state = gen.send((yield state))
    except StopIteration as done:
        return done.value


class CountingConnection(psycopg.Connection[Any]):
    """Counts statements (its cursors) and round trips (its waits that read the answer)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.cursor_factory = CountingCursor

    def wait(self, gen: Any, *args: Any, **kwargs: Any) -> Any:
        return super().wait(_counted(gen), *args, **kwargs)
