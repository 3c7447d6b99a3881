"""SQLite primitives for the tool registry: rows, their FTS5 index (kept by triggers of migration
m040) and their vectors."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING

from convmem.errors import InvalidInput, NotFound
from convmem.model.admitted import Admitted
from convmem.model.tools import RegisteredTool
from convmem.store.index_form import index_form
from convmem.store.lineage import Cascade
from convmem.store.rows import TOOL_COLUMNS, tool_from_row
from convmem.store.search_index import Vector
from convmem.store.sqlite.accelerator import cosine_order
from convmem.store.sqlite.connection import Statements
from convmem.store.sqlite.fts import or_query, quote
from convmem.store.sqlite.memories import utc_text
from convmem.store.sqlite.sql import TEXT_CODEC
from convmem.store.sqlite.vectors import from_blobs, to_blob
from convmem.store.tools import ToolHit


def tool_owner_token(tenant: str) -> str:
    # the same text as migration m040's SQL: 't' || hex(tenant_id)
    return "t" + tenant.encode().hex().upper()


class ToolTxnMixin:
    _db: Statements

    if TYPE_CHECKING:  # the cascade mixin's (convmem.store.lineage)

        def _cascade(self) -> Cascade: ...

    def list_tools(self, tenant: str) -> list[RegisteredTool]:
        rows = self._db.execute(
            f"SELECT {TOOL_COLUMNS} FROM tools WHERE tenant_id = ? ORDER BY name", (tenant,)
        ).fetchall()
        return [tool_from_row(row, TEXT_CODEC) for row in rows]

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

    def put_tool(self, tenant: str, admitted: Admitted[RegisteredTool]) -> None:
        tool = admitted.value
        spec = tool.spec
        if tool.created_at is None or tool.updated_at is None:
            raise InvalidInput("a registered tool carries its times")
        self._db.execute(
            f"INSERT INTO tools (tenant_id, {TOOL_COLUMNS}, document) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (tenant_id, name) DO UPDATE SET description = excluded.description, "
            "parameters = excluded.parameters, strict = excluded.strict, "
            "use_when = excluded.use_when, risk = excluded.risk, updated_at = excluded.updated_at, "
            "document = excluded.document",
            (
                tenant, spec.name, spec.description,
                json.dumps(dict(spec.parameters), ensure_ascii=False),
                None if spec.strict is None else int(spec.strict),
                json.dumps(list(tool.use_when), ensure_ascii=False), tool.risk,
                utc_text(tool.created_at), utc_text(tool.updated_at), index_form(tool.document),
            ),
        )  # fmt: skip
        # the old definition's vectors describe another text
        self._cascade().erase_text(tenant, "tool", [spec.name])

    def set_tool_vector(self, tenant: str, name: str, embedder: str, vector: Vector) -> None:
        self._db.execute(
            "INSERT OR REPLACE INTO tool_vectors (tenant_id, name, embedder, vector) "
            "SELECT ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM tools WHERE tenant_id = ? AND name = ?)",
            (tenant, name, embedder, to_blob(vector), tenant, name),
        )

    def delete_tool(self, tenant: str, name: str) -> None:
        if not self._cascade().erase(tenant, "tool", [name]):
            raise NotFound("tool", name)
