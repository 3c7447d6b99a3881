"""Shared fixtures: a real SQLite file per test, and a real PostgreSQL server for the tests that
ask for one (tiktoken's files ship inside the package). A working database is a copy of one
migrated once per session (convmem.testing.templates)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

import convmem
from convmem.testing.fixtures import alice, bob  # the shared principals, on this `memory`
from convmem.testing.templates import PostgresTemplate, copy_sqlite_template, make_sqlite_template
from tests.redis_server import RedisServer

__all__ = ["alice", "bob"]


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "convmem.db"


@pytest.fixture(scope="session")
def sqlite_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A migrated SQLite file for the session, copied by the fixtures below."""
    return make_sqlite_template(tmp_path_factory.mktemp("template"))


@pytest.fixture
def migrated_db_path(db_path: Path, sqlite_template: Path) -> Path:
    """``db_path``, already holding a migrated database (a copy of the session's template)."""
    return copy_sqlite_template(sqlite_template, db_path)


@pytest.fixture
def memory(request: pytest.FixtureRequest) -> Iterator[convmem.Memory]:
    """A fresh database: SQLite at ``db_path``, or with ``CONVMEM_TEST_BACKEND=postgresql`` a
    fresh PostgreSQL schema (to run the suite's engine-level tests on that backend too); either
    a copy of a template migrated once per session."""
    target: str | Path
    if os.environ.get("CONVMEM_TEST_BACKEND") == "postgresql":
        target = request.getfixturevalue("postgres_migrated_url")
    else:
        target = request.getfixturevalue("migrated_db_path")
    with convmem.open(target) as mem:
        yield mem


@pytest.fixture
def redis_server() -> Iterator[RedisServer]:
    """A real redis-server of the test's own (free port, temp folder, no persistence)."""
    server = RedisServer()
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def redis_url(redis_server: RedisServer) -> str:
    return redis_server.url


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[str]:
    """The URL of a PostgreSQL server with pgvector, for the whole session."""
    from tests.postgres_server import start_server

    yield from start_server()


@pytest.fixture
def postgres_url(postgres_server: str) -> Iterator[str]:
    """A URL onto a fresh, empty schema of its own on that server (migrated on first open)."""
    from convmem.testing.postgres_server import fresh_schema

    yield from fresh_schema(postgres_server)


@pytest.fixture(scope="session")
def postgres_template(postgres_server: str) -> PostgresTemplate:
    """A schema migrated once for the session, replayed by ``postgres_migrated_url``."""
    return PostgresTemplate(postgres_server)


@pytest.fixture
def postgres_migrated_url(postgres_template: PostgresTemplate) -> Iterator[str]:
    """A URL onto a schema of its own, already migrated; dropped afterwards."""
    from convmem.testing.postgres_server import drop_schema

    url = postgres_template.new_schema()
    try:
        yield url
    finally:
        drop_schema(postgres_template.server_url, url)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """With ``CONVMEM_TEST_BACKEND=postgresql`` run only the tests the switch reaches: those
    opened on the ``memory`` fixture and on no SQLite file of their own (the others would run
    on SQLite again, or read a file the switch did not write)."""
    if os.environ.get("CONVMEM_TEST_BACKEND") != "postgresql":
        return

    def reached_by_switch(item: pytest.Item) -> bool:
        names = set(getattr(item, "fixturenames", ()))
        return "memory" in names and not names & {"db_path", "migrated_db_path"}

    reached = [item for item in items if reached_by_switch(item)]
    config.hook.pytest_deselected(items=[i for i in items if i not in set(reached)])
    items[:] = reached
