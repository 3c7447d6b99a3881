"""SQLite primitives for the tool registry: its FTS5 index (kept by triggers of migration
m040) and their vectors."""

from __future__ import annotations

from collections.abc import Sequence

from convmem.store.search_index import Vector
from convmem.store.sql.tools import ToolRows
from convmem.store.sqlite.accelerator import cosine_order
from convmem.store.sqlite.connection import Statements
from convmem.store.sqlite.fts import or_query, quote
from convmem.store.sqlite.vectors import from_blobs, to_blob
from convmem.store.tools import ToolHit


def tool_owner_token(tenant: str) -> str:
    # the same text as migration m040's SQL: 't' || hex(tenant_id)
    return "t" + tenant.encode().hex().upper()


class ToolTxnMixin(ToolRows):
    """The registry's ranked reads and vectors (its rows: ``convmem.store.sql.tools``)."""

    _db: Statements

    def search_tool_terms(self, tenant: str, terms: Sequence[str], *, limit: int) -> list[ToolHit]:
        words = or_query(terms, columns=("document",))
        if words is None or limit < 1:
            return []
        match = f"owner : {quote(tool_owner_token(tenant))} AND {words}"
        rows = self._db.execute(
            "SELECT t.name, bm25(tools_fts, 0.0, 1.0) AS rank FROM tools_fts "
            "JOIN tools t ON t.rowid = tools_fts.rowid "
            "WHERE tools_fts MATCH ? AND t.tenant_id = ? ORDER BY rank, t.name LIMIT ?",
            (match, tenant, limit),
        ).fetchall()
        return [ToolHit(row[0], -float(row[1])) for row in rows]

    def nearest_tools(
        self, tenant: str, embedder: str, vector: Vector, *, limit: int
    ) -> list[ToolHit]:
        # a tenant's registry is tens of tools: read each time, not cached
        if limit < 1:
            return []
        rows = self._db.execute(
            "SELECT name, vector FROM tool_vectors WHERE tenant_id = ? AND embedder = ? "
            "ORDER BY name",
            (tenant, embedder),
        ).fetchall()
        if not rows:
            return []
        order, sims = cosine_order(vector, from_blobs([r[1] for r in rows], len(vector)))
        return [ToolHit(rows[i][0], float(sims[i])) for i in order[:limit]]

    def set_tool_vector(self, tenant: str, name: str, embedder: str, vector: Vector) -> None:
        self._db.execute(
            "INSERT OR REPLACE INTO tool_vectors (tenant_id, name, embedder, vector) "
            "SELECT ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM tools WHERE tenant_id = ? AND name = ?)",
            (tenant, name, embedder, to_blob(vector), tenant, name),
        )
