"""The optional extras the tests use. Without an extra's library its tests skip, naming the
extra; CI installs every extra and sets ``CONVMEM_REQUIRE_<EXTRA>=1`` (POSTGRES, EMBEDDINGS), so
there a missing library fails the run instead of skipping it quietly."""

from __future__ import annotations

import importlib
import os
from types import ModuleType

import pytest


def required(extra: str) -> bool:
    return os.environ.get(f"CONVMEM_REQUIRE_{extra.upper()}") == "1"


def module_of_extra(name: str, extra: str) -> ModuleType:
    """``name`` imported; when it is missing, the calling test module skips (or, where CI
    requires the extra, fails) with the extra that installs it."""
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        reason = f"{name} is not installed ({exc}): the {extra!r} extra installs it"
        if required(extra):
            pytest.fail(f"CONVMEM_REQUIRE_{extra.upper()}=1: {reason}")
        pytest.skip(reason, allow_module_level=True)
