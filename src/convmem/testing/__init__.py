"""convmem's store contract suite, published for backends: ``Harness`` (what a backend hands
the suite), the built-in ``SQLiteHarness`` and ``PostgresHarness``, and the suite itself in
``convmem.testing.contract``, run with pytest (``convmem.testing.plugin``).

Importing this package needs neither pytest nor a database driver; only the suite and its
fixtures import pytest (the ``testing`` extra installs it and hypothesis). ``import convmem``
never imports this package.
"""

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from convmem.testing.harness import Backend, Harness, RecordKind, Unavailable
    from convmem.testing.postgres import PostgresHarness
    from convmem.testing.sqlite import SQLiteHarness

# Imported on first use (PEP 562): pytest imports the plugin beside this package at every start
# where convmem is installed, and should pay for nothing else.
_LAZY = {
    "Backend": "convmem.testing.harness",
    "Harness": "convmem.testing.harness",
    "RecordKind": "convmem.testing.harness",
    "Unavailable": "convmem.testing.harness",
    "PostgresHarness": "convmem.testing.postgres",
    "SQLiteHarness": "convmem.testing.sqlite",
}

__all__ = ["Backend", "Harness", "PostgresHarness", "RecordKind", "SQLiteHarness", "Unavailable"]


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module 'convmem.testing' has no attribute {name!r}")
    value = getattr(importlib.import_module(_LAZY[name]), name)
    globals()[name] = value
    return value
