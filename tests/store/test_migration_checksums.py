"""The migration runner (``convmem.store.migrations``) on every backend: each applied migration is
recorded with a checksum of its text, a database whose recorded text differs from the code's is
refused before anything is written, and a database from before checksums gets them as its
migrations read now."""

from __future__ import annotations

from contextlib import closing
from typing import Any

import pytest

from convmem.errors import MigrationChanged
from convmem.store.migrations import Migration, text_checksum
from tests.store.backends import Backend


def _listed(backend: Backend) -> tuple[Migration, ...]:
    if backend.name == "sqlite":
        from convmem.store.sqlite.migrations import LISTED
    else:
        from convmem.store.postgres.migrations import LISTED
    return LISTED


def _run(backend: Backend, sql: str) -> list[Any]:
    """``sql`` on a writable connection of the test's own, committed."""
    if backend.name == "sqlite":
        import sqlite3

        db: Any = sqlite3.connect(backend.url.removeprefix("sqlite:///"))
    else:
        import psycopg

        db = psycopg.connect(backend.url, autocommit=True)
    with closing(db):
        cursor = db.execute(sql)
        rows = cursor.fetchall() if cursor.description else []
        db.commit()
        return list(rows)


def _recorded(backend: Backend) -> dict[str, str | None]:
    return {row[0]: row[1] for row in _run(backend, "SELECT name, checksum FROM _migrations")}


def test_every_applied_migration_is_recorded_with_its_checksum(backend: Backend) -> None:
    with backend.open():
        pass
    listed = _listed(backend)
    assert _recorded(backend) == {m.name: m.checksum for m in listed}
    assert all(m.checksum is not None and len(m.checksum) == 64 for m in listed)


def test_a_changed_migration_is_refused_before_anything_is_written(backend: Backend) -> None:
    first = _listed(backend)[0].name
    _run(backend, f"UPDATE _migrations SET checksum = '{'0' * 64}' WHERE name = '{first}'")
    before = backend.fingerprint()
    with pytest.raises(MigrationChanged, match=first):
        backend.open()
    assert backend.fingerprint() == before


def test_a_database_from_before_checksums_gets_them_as_its_migrations_read_now(
    backend: Backend,
) -> None:
    _run(backend, "ALTER TABLE _migrations DROP COLUMN checksum")
    with backend.open() as memory:  # opens: nothing recorded could be checked
        memory.scope("acme", "alice").create_conversation(title="after the upgrade")
    listed = _listed(backend)
    assert _recorded(backend) == {m.name: m.checksum for m in listed}


def test_a_postgres_store_that_may_not_migrate_refuses_a_changed_migration(
    backend: Backend,
) -> None:
    if backend.name == "sqlite":
        pytest.skip("only PostgreSQL opens without migrating (migrate=False)")
    from convmem.store.postgres import PostgresStore

    first = _listed(backend)[0].name
    _run(backend, f"UPDATE _migrations SET checksum = '{'0' * 64}' WHERE name = '{first}'")
    with pytest.raises(MigrationChanged, match=first):
        PostgresStore(backend.url, migrate=False)


def m900_example(db: Any) -> None:
    db.execute("CREATE TABLE example (a TEXT)")


_FIRST = text_checksum(m900_example)


def m900_example(db: Any) -> None:  # type: ignore[no-redef]  # its text changed
    db.execute("CREATE TABLE example (a TEXT, b TEXT)")


def test_the_checksum_follows_the_text_not_the_name() -> None:
    assert _FIRST is not None
    assert text_checksum(m900_example) not in (None, _FIRST)
    assert text_checksum(m900_example) == text_checksum(m900_example)
