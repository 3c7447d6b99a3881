"""The contract suite's fixtures: every test here runs once per registered backend.

``backend`` is a fresh database of one backend (see ``backends.py``); ``memory`` — and through
it the shared ``alice`` and ``bob`` — is opened on it, so a test written against the public API
runs on every backend unchanged.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

import convmem
from tests.store.backends import HARNESSES, Backend, Harness, start_or_skip


@pytest.fixture(scope="session", params=[h.name for h in HARNESSES])
def harness(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Harness]:
    chosen = next(h for h in HARNESSES if h.name == request.param)()
    start_or_skip(chosen, tmp_path_factory.mktemp(chosen.name))
    try:
        yield chosen
    finally:
        chosen.stop()


@pytest.fixture
def backend(harness: Harness, tmp_path: Path) -> Iterator[Backend]:
    yield Backend(harness, harness.fresh_url(tmp_path))
    harness.after_test()


@pytest.fixture
def memory(backend: Backend) -> Iterator[convmem.Memory]:
    with backend.open() as mem:
        yield mem
