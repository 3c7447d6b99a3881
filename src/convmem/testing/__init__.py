"""convmem's store contract suite, published for backends: ``Harness`` (what a backend hands
the suite), the built-in ``SQLiteHarness`` and ``PostgresHarness``, and the suite itself in
``convmem.testing.contract``, run with pytest (``convmem.testing.plugin``).

Importing this package needs neither pytest nor a database driver; only the suite and its
fixtures import pytest (the ``testing`` extra installs it and hypothesis). ``import convmem``
never imports this package.
"""

from convmem.testing.harness import Backend, Harness, RecordKind, Unavailable
from convmem.testing.postgres import PostgresHarness
from convmem.testing.sqlite import SQLiteHarness

__all__ = ["Backend", "Harness", "PostgresHarness", "RecordKind", "SQLiteHarness", "Unavailable"]
