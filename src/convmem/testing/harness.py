"""What a backend hands the contract suite: a ``Harness``, which makes, opens and inspects its
databases. One subclass per backend; the suite (``convmem.testing.contract``) runs every test
once per chosen harness through the ``backend`` fixture (``--convmem-backend``, see
``convmem.testing.plugin``). A harness knows what the shared tests must not:

- ``start`` / ``stop``: bring the backend's server up once per test session (SQLite has none).
  A server that cannot start raises ``Unavailable``: its tests are skipped, unless the variable
  named by ``require_env`` is set to ``1`` — then they fail (so a CI whose server setup broke
  can never pass with the backend silently left out).
- ``fresh_url``: a new database for one test, already migrated (for speed, a copy of a template
  made at ``start``), as a URL ``convmem.open`` accepts — the backend's factory registered with
  ``convmem.store.register`` opens it.
- ``derived_counts(url, tenant)``: rows per derived table of one tenant, counted with the
  backend's own driver (a test-only probe, not part of the store Protocols). ``DERIVED`` names,
  per kind of record, the tables that hold rows derived from such a record: the deletion tests
  check that each of them held rows before a delete and holds none of the deleted record after.
- ``dump(url)``: every stored row of every table as text — what must never hold a secret — and
  its digest ``fingerprint(url)``: equal before and after a call means the call wrote nothing.

This module imports neither pytest nor a database driver: a backend package can import it (and
subclass ``Harness``) without adding a dependency.
"""

from __future__ import annotations

import hashlib
import os
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Literal

import convmem

RecordKind = Literal["message", "conversation", "memory"]


class Unavailable(Exception):
    """The backend's server cannot run here (not installed, cannot start)."""


class Harness(ABC):
    """How the contract suite makes, opens and inspects databases of one backend.

    A subclass sets ``name`` (the test ids' parameter: ``test_x[name]``) and ``DERIVED``, and
    implements ``fresh_url``, ``derived_counts`` and ``dump``; the rest has defaults. It is
    made with no arguments, once per test session.
    """

    name: ClassVar[str]
    # the variable that, set to "1", turns "server unavailable" from a skip into a failure
    require_env: ClassVar[str | None] = None
    DERIVED: ClassVar[Mapping[RecordKind, frozenset[str]]]

    def start(self, workdir: Path) -> None:  # noqa: B027 - a backend without a server has none
        """Once per session, before the first test (a server's start-up goes here)."""

    def stop(self) -> None:  # noqa: B027
        """Once per session, after the last test."""

    def after_test(self) -> None:  # noqa: B027 - most backends check nothing more
        """After each test: a backend's own checks over what the test did."""

    def required(self) -> bool:
        return self.require_env is not None and os.environ.get(self.require_env) == "1"

    @abstractmethod
    def fresh_url(self, tmp_path: Path) -> str:
        """A new database for one test, migrated."""

    def open(self, url: str, **kwargs: Any) -> convmem.Memory:
        """The Memory a test works through (``convmem.open``: the factory the URL's scheme is
        registered to)."""
        return convmem.open(url, **kwargs)

    @abstractmethod
    def derived_counts(self, url: str, tenant: str) -> dict[str, int]:
        """Rows of every derived table (``DERIVED``'s union) that belong to ``tenant``."""

    def schema(self, url: str) -> dict[str, frozenset[str]]:
        """Every table of the store (full-text internals aside) with its columns. Optional: only
        convmem's own lineage checks over its built-in backends read it."""
        raise NotImplementedError(f"the {self.name} harness lists no schema")

    def indexes(self, url: str) -> dict[str, list[tuple[str, ...]]]:
        """Every table's indexes (its primary key and unique constraints included), each as its
        key columns in order. Optional, like ``schema``."""
        raise NotImplementedError(f"the {self.name} harness lists no indexes")

    @abstractmethod
    def dump(self, url: str) -> str:
        """Every row of every table (index and full-text internals included) as text, in an
        order that does not depend on how the rows were written: what a thief of the database
        would read."""

    def fingerprint(self, url: str) -> str:
        """Changes whenever anything is written."""
        return hashlib.sha256(self.dump(url).encode()).hexdigest()


@dataclass(frozen=True)
class Backend:
    """One test's database on one backend."""

    harness: Harness
    url: str

    @property
    def name(self) -> str:
        return self.harness.name

    def open(self, **kwargs: Any) -> convmem.Memory:
        return self.harness.open(self.url, **kwargs)

    def derived_counts(self, tenant: str) -> dict[str, int]:
        return self.harness.derived_counts(self.url, tenant)

    def derived_tables(self, kind: RecordKind) -> frozenset[str]:
        return self.harness.DERIVED[kind]

    def dump(self) -> str:
        return self.harness.dump(self.url)

    def schema(self) -> dict[str, frozenset[str]]:
        return self.harness.schema(self.url)

    def indexes(self) -> dict[str, list[tuple[str, ...]]]:
        return self.harness.indexes(self.url)

    def fingerprint(self) -> str:
        return self.harness.fingerprint(self.url)
