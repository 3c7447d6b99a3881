"""One migration runner for the SQL backends: each backend lists its migrations (small named
functions, new ones appended, an applied one never edited) and says how a step runs; this module
applies what a database lacks and checks what it recorded.

A database records each applied migration in ``_migrations`` by name, with a checksum of the
migration's text (its source, lines stripped of trailing space). Opening a database whose
recorded checksum differs from the text now is refused (``MigrationChanged``): the schema it made
may not be what the code expects. A migration recorded before checksums were kept is checksummed
as it reads now, the first time a runner sees it (what it did is not undone or redone). Where the
source cannot be read (an install without ``.py`` files) nothing is checked or recorded.
"""

from __future__ import annotations

import hashlib
import inspect
import textwrap
from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, Protocol

from convmem.errors import MigrationChanged
from convmem.store.dialect import Dialect


@dataclass(frozen=True)
class Migration:
    name: str
    apply: Callable[[Any], None]
    checksum: str | None


def text_checksum(function: Callable[..., Any]) -> str | None:
    """A digest of the function's source text; None when the source is not at hand."""
    try:
        source = inspect.getsource(function)
    except (OSError, TypeError):
        return None
    text = "\n".join(line.rstrip() for line in textwrap.dedent(source).splitlines())
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def listed(functions: Iterable[Callable[[Any], None]]) -> tuple[Migration, ...]:
    """A backend's migration functions, in order, as the runner takes them."""
    return tuple(Migration(f.__name__, f, text_checksum(f)) for f in functions)


class Ledger(Protocol):
    """A backend's ``_migrations`` table and its steps."""

    dialect: Dialect

    @property
    def connection(self) -> Any:
        """What each migration function is given."""
        ...

    def step(self) -> AbstractContextManager[Any]:
        """One transaction, held against every other process migrating the same database;
        yields what runs the ledger's own statements (``execute(sql, params)``)."""
        ...

    def ensure(self, db: Any) -> None:
        """Create ``_migrations`` (name, applied_at, checksum) if missing, and add the
        checksum column to one from before checksums."""
        ...


def recorded(db: Any, dialect: Dialect) -> dict[str, str | None]:
    """What the database recorded: migration name → checksum (None: not checksummed yet)."""
    rows = db.execute(dialect.sql("SELECT name, checksum FROM _migrations")).fetchall()
    return {row[0]: row[1] for row in rows}


def check(migrations: Sequence[Migration], found: dict[str, str | None]) -> None:
    """Refuse a database whose recorded migrations read differently now."""
    changed = [
        m.name
        for m in migrations
        if m.checksum is not None and found.get(m.name) not in (None, m.checksum)
    ]
    if changed:
        raise MigrationChanged(
            f"the database applied migration {changed[0]} from another text than the code's "
            f"({len(changed)} such migration(s)); an applied migration is never edited: restore "
            "its text and add the change as a new migration"
        )


def pending(migrations: Sequence[Migration], found: dict[str, str | None]) -> list[str]:
    """Names of the migrations the database lacks, after checking the ones it has."""
    check(migrations, found)
    return [m.name for m in migrations if m.name not in found]


def apply(migrations: Sequence[Migration], ledger: Ledger) -> list[str]:
    """Apply what the database lacks, each migration in a step of its own; returns the names
    applied now. Refuses (``MigrationChanged``) before applying anything if a recorded one
    changed."""
    d = ledger.dialect
    with ledger.step() as db:
        ledger.ensure(db)
        found = recorded(db, d)
        check(migrations, found)
        for m in migrations:
            if m.name in found and found[m.name] is None and m.checksum is not None:
                db.execute(
                    d.sql("UPDATE _migrations SET checksum = ? WHERE name = ?"),
                    (m.checksum, m.name),
                )
    applied: list[str] = []
    for m in migrations:
        if m.name in found:
            continue
        with ledger.step() as db:
            # another process may have applied it since the read above
            done = db.execute(d.sql("SELECT 1 FROM _migrations WHERE name = ?"), (m.name,))
            if done.fetchone() is None:
                m.apply(ledger.connection)
                db.execute(
                    d.sql(
                        "INSERT INTO _migrations (name, applied_at, checksum) "
                        "VALUES (?, CURRENT_TIMESTAMP, ?)"
                    ),
                    (m.name, m.checksum),
                )
                applied.append(m.name)
    return applied
