"""Shared fixtures: a real SQLite file per test (tiktoken's files ship inside the package)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

import convmem


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "convmem.db"


@pytest.fixture
def memory(db_path: Path) -> Iterator[convmem.Memory]:
    with convmem.open(db_path) as mem:
        yield mem


@pytest.fixture
def alice(memory: convmem.Memory) -> convmem.Scope:
    return memory.scope(tenant="acme", user="alice")


@pytest.fixture
def bob(memory: convmem.Memory) -> convmem.Scope:
    return memory.scope(tenant="acme", user="bob")
