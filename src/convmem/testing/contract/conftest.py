"""Every test of the contract suite runs once per chosen backend (see convmem.testing.plugin):
the fixtures live here, so they reach this folder's tests and nobody else's."""

from convmem.testing.fixtures import (
    alice,
    backend,
    bob,
    harness,
    memory,
    pytest_generate_tests,
)

__all__ = ["alice", "backend", "bob", "harness", "memory", "pytest_generate_tests"]
