"""PostgreSQL primitives for the tool registry."""

from __future__ import annotations

from psycopg.types.json import Jsonb

from convmem.errors import NotFound
from convmem.model.tools import RegisteredTool
from convmem.store.postgres.rows import TxnBase
from convmem.store.rows import DECODED, TOOL_COLUMNS, tool_from_row


class ToolTxnMixin(TxnBase):
    def list_tools(self, tenant: str) -> list[RegisteredTool]:
        rows = self._db.execute(
            f"SELECT {TOOL_COLUMNS} FROM tools WHERE tenant_id = %s ORDER BY name", (tenant,)
        ).fetchall()
        return [tool_from_row(row, DECODED) for row in rows]

    def put_tool(self, tenant: str, tool: RegisteredTool) -> None:
        spec = tool.spec
        self._db.execute(
            f"INSERT INTO tools (tenant_id, {TOOL_COLUMNS}) "
            "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s) "
            "ON CONFLICT (tenant_id, name) DO UPDATE SET description = EXCLUDED.description, "
            "parameters = EXCLUDED.parameters, strict = EXCLUDED.strict, "
            "use_when = EXCLUDED.use_when, risk = EXCLUDED.risk, updated_at = EXCLUDED.updated_at",
            (
                tenant, spec.name, spec.description, Jsonb(dict(spec.parameters)), spec.strict,
                Jsonb(list(tool.use_when)), tool.risk, tool.created_at, tool.updated_at,
            ),
        )  # fmt: skip

    def delete_tool(self, tenant: str, name: str) -> None:
        row = self._db.execute(
            "DELETE FROM tools WHERE tenant_id = %s AND name = %s RETURNING name", (tenant, name)
        ).fetchone()
        if row is None:
            raise NotFound("tool", name)
