"""The PostgreSQL backend (psycopg 3 with its pool, pgvector): ``convmem.open("postgresql://…")``.

Needs the optional extra ``convmem[postgres]``.
"""

from convmem.store.postgres.migrations import migrate
from convmem.store.postgres.store import PostgresStore

__all__ = ["PostgresStore", "migrate"]
