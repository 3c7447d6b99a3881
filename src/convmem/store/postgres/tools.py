"""PostgreSQL primitives for the tool registry: its tsvector (a generated column of
migration m010) and their vectors."""

from __future__ import annotations

from collections.abc import Sequence

from convmem.store.postgres.cascade import CascadeTxnMixin
from convmem.store.postgres.rows import halfvec
from convmem.store.postgres.search import TERMS_QUERY
from convmem.store.search_index import Vector
from convmem.store.sql.tools import ToolRows
from convmem.store.tools import ToolHit


class ToolTxnMixin(CascadeTxnMixin, ToolRows):
    """The registry's ranked reads and vectors (its rows: ``convmem.store.sql.tools``)."""

    def search_tool_terms(self, tenant: str, terms: Sequence[str], *, limit: int) -> list[ToolHit]:
        wanted = [t for t in terms if t]
        if not wanted or limit < 1:
            return []
        rows = self._db.execute(
            f"""
            WITH q AS (SELECT ({TERMS_QUERY})::tsquery AS tq)
            SELECT t.name, ts_rank(t.tsv, q.tq, 1) AS rank FROM tools t, q
            WHERE q.tq IS NOT NULL AND t.tsv @@ q.tq AND t.tenant_id = %s
            ORDER BY rank DESC, t.name LIMIT %s
            """,
            (wanted, tenant, limit),
        ).fetchall()
        return [ToolHit(row[0], float(row[1])) for row in rows]

    def nearest_tools(
        self, tenant: str, embedder: str, vector: Vector, *, limit: int
    ) -> list[ToolHit]:
        if limit < 1:
            return []
        query = halfvec(vector)
        rows = self._db.execute(
            "SELECT name, 1 - (vector <=> %s) FROM tool_vectors "
            "WHERE tenant_id = %s AND embedder = %s ORDER BY vector <=> %s, name LIMIT %s",
            (query, tenant, embedder, query, limit),
        ).fetchall()
        return [ToolHit(row[0], float(row[1])) for row in rows]

    def set_tool_vector(self, tenant: str, name: str, embedder: str, vector: Vector) -> None:
        self._db.execute(
            "INSERT INTO tool_vectors (tenant_id, name, embedder, vector) "
            "SELECT %s, %s, %s, %s WHERE EXISTS "
            "(SELECT 1 FROM tools WHERE tenant_id = %s AND name = %s) "
            "ON CONFLICT (tenant_id, name, embedder) DO UPDATE SET vector = EXCLUDED.vector",
            (tenant, name, embedder, halfvec(vector), tenant, name),
        )
