"""The contract suite's fixtures: ``backend`` (a fresh database of one backend), ``memory`` opened
on it, and the shared ``alice`` and ``bob``."""

from __future__ import annotations

import pytest

import convmem
from tests.store.conftest import backend, harness, memory

__all__ = ["alice", "backend", "bob", "harness", "memory"]


@pytest.fixture
def alice(memory: convmem.Memory) -> convmem.Scope:
    return memory.scope(tenant="acme", user="alice")


@pytest.fixture
def bob(memory: convmem.Memory) -> convmem.Scope:
    return memory.scope(tenant="acme", user="bob")
