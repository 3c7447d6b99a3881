"""The tool registry's rows, for both SQL backends (mixed into the backend's transaction; the
ranked reads and the vectors are the backend's)."""

from __future__ import annotations

from convmem.errors import InvalidInput, NotFound
from convmem.model.admitted import Admitted
from convmem.model.tools import RegisteredTool
from convmem.store.index_form import index_form
from convmem.store.rows import TOOL_COLUMNS, tool_from_row
from convmem.store.sql.txn import SqlTxn


class ToolRows(SqlTxn):
    def list_tools(self, tenant: str) -> list[RegisteredTool]:
        rows = self._run(
            f"SELECT {TOOL_COLUMNS} FROM tools WHERE tenant_id = ? ORDER BY name", (tenant,)
        ).fetchall()
        return [tool_from_row(row, self._d.codec) for row in rows]

    def put_tool(self, tenant: str, admitted: Admitted[RegisteredTool]) -> None:
        tool, d = admitted.value, self._d
        spec = tool.spec
        if tool.created_at is None or tool.updated_at is None:
            raise InvalidInput("a registered tool carries its times")
        self._run(
            f"INSERT INTO tools (tenant_id, {TOOL_COLUMNS}, document) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (tenant_id, name) DO UPDATE SET description = excluded.description, "
            "parameters = excluded.parameters, strict = excluded.strict, "
            "use_when = excluded.use_when, risk = excluded.risk, updated_at = excluded.updated_at, "
            "document = excluded.document",
            (
                tenant, spec.name, spec.description, d.json(dict(spec.parameters)),
                None if spec.strict is None else d.flag(spec.strict), d.json(list(tool.use_when)),
                tool.risk, d.time(tool.created_at), d.time(tool.updated_at),
                index_form(tool.document),
            ),
        )  # fmt: skip
        # the old definition's vectors describe another text
        self._cascade().erase_text(tenant, "tool", [spec.name])

    def delete_tool(self, tenant: str, name: str) -> None:
        if not self._cascade().erase(tenant, "tool", [name]):
            raise NotFound("tool", name)
