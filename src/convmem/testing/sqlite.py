"""The SQLite backend's harness: its databases are files, probed read-only with ``sqlite3``."""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from contextlib import closing
from pathlib import Path
from typing import ClassVar

from convmem.testing.harness import Harness, RecordKind
from convmem.testing.templates import copy_sqlite_template, make_sqlite_template


class SQLiteHarness(Harness):
    """convmem's SQLite backend: a copy of a migrated template file per test. A backend that
    keeps SQLite's files under a scheme of its own subclasses it with another ``name`` and
    ``url_scheme``."""

    name = "sqlite"
    url_scheme: ClassVar[str] = "sqlite"
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
        self._template = make_sqlite_template(workdir)

    def fresh_url(self, tmp_path: Path) -> str:
        """A copy of the migrated template made at ``start``."""
        assert self._template is not None, "start() makes the template"
        copy = copy_sqlite_template(self._template, tmp_path / "convmem.db")
        return f"{self.url_scheme}:///{copy}"

    @staticmethod
    def path(url: str) -> str:
        """The file of ``sqlite:///path`` (or of any ``scheme:///path``)."""
        return url.split(":///", 1)[-1]

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
