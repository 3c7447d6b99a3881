"""The suite's own rule: a backend whose server is unavailable is skipped — unless it is required,
then its tests fail (so CI cannot pass with PostgreSQL silently left out)."""

from __future__ import annotations

from pathlib import Path

import pytest

from convmem.testing import SQLiteHarness, Unavailable
from convmem.testing.fixtures import start_or_skip


class Unstartable(SQLiteHarness):
    name = "unstartable"
    require_env = "CONVMEM_REQUIRE_UNSTARTABLE"

    def start(self, workdir: Path) -> None:
        raise Unavailable("no server here")


def test_an_unavailable_backend_is_skipped_unless_required(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CONVMEM_REQUIRE_UNSTARTABLE", raising=False)
    with pytest.raises(pytest.skip.Exception, match="no server here"):
        start_or_skip(Unstartable(), tmp_path)
    monkeypatch.setenv("CONVMEM_REQUIRE_UNSTARTABLE", "1")
    with pytest.raises(pytest.fail.Exception, match="required"):
        start_or_skip(Unstartable(), tmp_path)
    start_or_skip(SQLiteHarness(), tmp_path)  # an available one starts either way
