"""SQLite-only tests: ``memory`` (and so ``alice`` and ``bob``) is the SQLite file at ``db_path``,
whatever backends the contract suite around this folder runs."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

import convmem


@pytest.fixture
def memory(migrated_db_path: Path) -> Iterator[convmem.Memory]:
    with convmem.open(migrated_db_path) as mem:
        yield mem
