"""Shared fixtures: a real SQLite file per test, and a real PostgreSQL server for the tests that
ask for one (tiktoken's files ship inside the package)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

import convmem


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "convmem.db"


@pytest.fixture
def memory(db_path: Path, request: pytest.FixtureRequest) -> Iterator[convmem.Memory]:
    """A fresh database: SQLite, or with ``CONVMEM_TEST_BACKEND=postgresql`` a fresh PostgreSQL
    schema (to run the suite's engine-level tests on that backend too)."""
    target: str | Path = db_path
    if os.environ.get("CONVMEM_TEST_BACKEND") == "postgresql":
        target = request.getfixturevalue("postgres_url")
    with convmem.open(target) as mem:
        yield mem


@pytest.fixture
def alice(memory: convmem.Memory) -> convmem.Scope:
    return memory.scope(tenant="acme", user="alice")


@pytest.fixture
def bob(memory: convmem.Memory) -> convmem.Scope:
    return memory.scope(tenant="acme", user="bob")


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[str]:
    """The URL of a PostgreSQL server with pgvector, for the whole session."""
    from tests.postgres_server import start_server

    yield from start_server()


@pytest.fixture
def postgres_url(postgres_server: str) -> Iterator[str]:
    """A URL onto a fresh schema of its own on that server."""
    from tests.postgres_server import fresh_schema

    yield from fresh_schema(postgres_server)
