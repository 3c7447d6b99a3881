"""Shared fixtures: a real SQLite file per test, and tiktoken's offline files."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

_SHARED_TIKTOKEN = Path(__file__).resolve().parents[2] / "shared" / "data" / "tiktoken"
if "TIKTOKEN_CACHE_DIR" not in os.environ and _SHARED_TIKTOKEN.is_dir():
    os.environ["TIKTOKEN_CACHE_DIR"] = str(_SHARED_TIKTOKEN)

import convmem  # noqa: E402


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
