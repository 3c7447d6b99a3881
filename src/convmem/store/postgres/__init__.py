"""The PostgreSQL backend (psycopg 3 with its pool, pgvector), registered for ``postgresql://``
and ``postgres://`` URLs. Needs the optional extra ``convmem[postgres]``.

Options ride on the URL (``convmem.store.postgres.options``): ``?pool_size=20&migrate=0``.
"""

from convmem.errors import BackendUnavailable
from convmem.store.registry import register

try:
    import pgvector.psycopg  # noqa: F401
    import psycopg  # noqa: F401
    import psycopg_pool  # noqa: F401
except ImportError as exc:
    raise BackendUnavailable(
        "the PostgreSQL backend needs the postgres extra: pip install 'convmem[postgres]'"
    ) from exc

from convmem.store.postgres.migrations import migrate
from convmem.store.postgres.options import options_from_url
from convmem.store.postgres.store import PostgresStore

__all__ = ["PostgresStore", "migrate", "open_postgres"]


def open_postgres(url: str) -> PostgresStore:
    options = options_from_url(url)
    return PostgresStore(options.url, migrate=options.migrate, max_size=options.pool_size)


register("postgresql", open_postgres)
register("postgres", open_postgres)
