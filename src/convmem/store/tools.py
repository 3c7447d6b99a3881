"""The tool registry: each tenant's tool definitions, by name. Tenant-wide rows an application (or
administrator) writes; a request reads the whole registry of its tenant (tens of tools, not
thousands), and the engine ranks them."""

from __future__ import annotations

from typing import Protocol

from convmem.model.tools import RegisteredTool


class ToolReads(Protocol):
    def list_tools(self, tenant: str) -> list[RegisteredTool]:
        """The tenant's registered tools, by name."""
        ...


class ToolWrites(Protocol):
    def put_tool(self, tenant: str, tool: RegisteredTool) -> None:
        """Register ``tool`` for the tenant, replacing one of the same name (its
        ``created_at`` is kept, ``updated_at`` taken from ``tool``)."""
        ...

    def delete_tool(self, tenant: str, name: str) -> None:
        """Remove the tenant's tool; ``NotFound`` when the tenant has none of that name (another
        tenant's included)."""
        ...
