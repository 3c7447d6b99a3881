"""The PostgreSQL backend (psycopg 3 with its pool, pgvector), registered for ``postgresql://``
and ``postgres://`` URLs. Needs the optional extra ``convmem[postgres]``.

``CONVMEM_MIGRATE_ON_OPEN=0`` makes opening refuse a database that lacks migrations instead of
applying them (deployments that run ``convmem migrate --db URL`` before starting processes).
"""

import os

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
from convmem.store.postgres.store import PostgresStore

__all__ = ["PostgresStore", "migrate", "open_postgres"]


def open_postgres(url: str) -> PostgresStore:
    return PostgresStore(url, migrate=os.environ.get("CONVMEM_MIGRATE_ON_OPEN", "1") != "0")


register("postgresql", open_postgres)
register("postgres", open_postgres)
