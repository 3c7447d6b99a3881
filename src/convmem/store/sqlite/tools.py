"""SQLite primitives for the tool registry."""

from __future__ import annotations

import json

from convmem.errors import InvalidInput, NotFound
from convmem.model.tools import RegisteredTool
from convmem.store.rows import TOOL_COLUMNS, tool_from_row
from convmem.store.sqlite.connection import Statements
from convmem.store.sqlite.memories import utc_text
from convmem.store.sqlite.sql import TEXT_CODEC


class ToolTxnMixin:
    _db: Statements

    def list_tools(self, tenant: str) -> list[RegisteredTool]:
        rows = self._db.execute(
            f"SELECT {TOOL_COLUMNS} FROM tools WHERE tenant_id = ? ORDER BY name", (tenant,)
        ).fetchall()
        return [tool_from_row(row, TEXT_CODEC) for row in rows]

    def put_tool(self, tenant: str, tool: RegisteredTool) -> None:
        spec = tool.spec
        if tool.created_at is None or tool.updated_at is None:
            raise InvalidInput("a registered tool carries its times")
        self._db.execute(
            f"INSERT INTO tools (tenant_id, {TOOL_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (tenant_id, name) DO UPDATE SET description = excluded.description, "
            "parameters = excluded.parameters, strict = excluded.strict, "
            "use_when = excluded.use_when, risk = excluded.risk, updated_at = excluded.updated_at",
            (
                tenant, spec.name, spec.description,
                json.dumps(dict(spec.parameters), ensure_ascii=False),
                None if spec.strict is None else int(spec.strict),
                json.dumps(list(tool.use_when), ensure_ascii=False), tool.risk,
                utc_text(tool.created_at), utc_text(tool.updated_at),
            ),
        )  # fmt: skip

    def delete_tool(self, tenant: str, name: str) -> None:
        deleted = self._db.execute(
            "DELETE FROM tools WHERE tenant_id = ? AND name = ?", (tenant, name)
        ).rowcount
        if not deleted:
            raise NotFound("tool", name)
