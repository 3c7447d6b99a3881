"""Rows written in the past, for the tests of what time deletes (retention periods)."""

from __future__ import annotations

import time
import types
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

import convmem.ids

DAY_MS = 86_400_000


@contextmanager
def written_days_ago(days: float) -> Iterator[None]:
    """Ids made inside are stamped ``days`` in the past, as if the rows were stored then."""
    shifted = types.SimpleNamespace(time_ns=lambda: time.time_ns() - int(days * DAY_MS) * 10**6)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(convmem.ids, "time", shifted)
        yield
