"""The test fixtures' migrated templates: a copy is the database migrating would have made, and
each test's copy is its own."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

import convmem
from convmem.testing.templates import PostgresTemplate, copy_sqlite_template


def _sqlite_schema(path: Path) -> tuple[list[tuple[Any, ...]], list[str]]:
    with closing(sqlite3.connect(path)) as db:
        objects = db.execute(
            "SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name"
        ).fetchall()
        applied = [r[0] for r in db.execute("SELECT name FROM _migrations ORDER BY name")]
    return objects, applied


def test_a_sqlite_copy_is_what_migrating_makes(sqlite_template: Path, tmp_path: Path) -> None:
    migrated = tmp_path / "migrated.db"
    with convmem.open(migrated):
        pass
    copy = copy_sqlite_template(sqlite_template, tmp_path / "copy.db")
    assert _sqlite_schema(copy) == _sqlite_schema(migrated)
    assert _sqlite_schema(copy)[1]  # the migrations are recorded, so opening applies none


def test_each_test_gets_its_own_sqlite_copy(sqlite_template: Path, tmp_path: Path) -> None:
    first = copy_sqlite_template(sqlite_template, tmp_path / "first.db")
    second = copy_sqlite_template(sqlite_template, tmp_path / "second.db")
    with convmem.open(first) as memory:
        memory.scope("acme", "alice").create_conversation(title="only here")
    with convmem.open(second) as memory:
        assert memory.scope("acme", "alice").conversations() == []
    with convmem.open(sqlite_template) as memory:
        assert memory.scope("acme", "alice").conversations() == []


def _pg_schema(server_url: str, url: str) -> dict[str, list[tuple[Any, ...]]]:
    """Everything a schema holds that a migration makes, with the schema's name taken out."""
    import psycopg

    schema = url.split("search_path%3D", 1)[1].split("%2C", 1)[0]
    queries = {
        "columns": "SELECT table_name, column_name, data_type, udt_name, column_default, "
        "is_nullable, is_generated, generation_expression FROM information_schema.columns "
        "WHERE table_schema = %(s)s",
        "indexes": "SELECT tablename, indexname, indexdef FROM pg_indexes WHERE schemaname = %(s)s",
        "constraints": "SELECT conrelid::regclass::text, conname, pg_get_constraintdef(oid) "
        "FROM pg_constraint WHERE connamespace = %(s)s::regnamespace",
        "triggers": "SELECT tgrelid::regclass::text, tgname, pg_get_triggerdef(oid) "
        "FROM pg_trigger WHERE NOT tgisinternal AND tgrelid::regclass::text LIKE %(p)s",
        "functions": "SELECT proname, pg_get_functiondef(oid) FROM pg_proc "
        "WHERE pronamespace = %(s)s::regnamespace",
        "views": "SELECT table_name, view_definition FROM information_schema.views "
        "WHERE table_schema = %(s)s",
        "sequences": "SELECT sequence_name, data_type, start_value FROM "
        "information_schema.sequences WHERE sequence_schema = %(s)s",
    }
    found: dict[str, list[tuple[Any, ...]]] = {}
    with psycopg.connect(server_url, autocommit=True) as db:
        for kind, sql in queries.items():
            rows = db.execute(sql, {"s": schema, "p": f"{schema}.%"}).fetchall()
            found[kind] = sorted(
                tuple(str(v).replace(schema + ".", "").replace(schema, "S") for v in row)
                for row in rows
            )
        applied = db.execute(f"SELECT name FROM {schema}._migrations ORDER BY name").fetchall()
        found["migrations"] = [tuple(row) for row in applied]
    return found


@pytest.fixture
def template_and_migrated(
    postgres_template: PostgresTemplate, postgres_url: str
) -> Iterator[tuple[PostgresTemplate, str, str]]:
    from convmem.testing.postgres_server import drop_schema

    with convmem.open(postgres_url):
        pass
    replayed = postgres_template.new_schema()
    try:
        yield postgres_template, postgres_url, replayed
    finally:
        drop_schema(postgres_template.server_url, replayed)


def test_a_postgres_copy_is_what_migrating_makes(
    template_and_migrated: tuple[PostgresTemplate, str, str],
) -> None:
    template, migrated, replayed = template_and_migrated
    assert template.sql is not None, "no pg_dump of the server's version: every schema migrates"
    expected = _pg_schema(template.server_url, migrated)
    assert expected["columns"] and expected["indexes"] and expected["migrations"]
    assert _pg_schema(template.server_url, replayed) == expected


def test_each_test_gets_its_own_postgres_schema(postgres_template: PostgresTemplate) -> None:
    from convmem.testing.postgres_server import drop_schema

    first, second = postgres_template.new_schema(), postgres_template.new_schema()
    try:
        with convmem.open(first) as memory:
            memory.scope("acme", "alice").create_conversation(title="only here")
        with convmem.open(second) as memory:
            assert memory.scope("acme", "alice").conversations() == []
    finally:
        drop_schema(postgres_template.server_url, first)
        drop_schema(postgres_template.server_url, second)
