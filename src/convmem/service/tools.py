"""Tool registry routes: an application (or admin) key registers, lists and removes its tenant's
tools; a request offers them through ``POST /v1/conversations/{id}/assemble`` with
``offer_tools``."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, Request, Response

from convmem.service.auth import AppOrAdminKey, memory_of
from convmem.service.schemas import ToolIn, ToolOut

router = APIRouter(prefix="/v1/tools", tags=["tools"])

ToolName = Annotated[str, Path(min_length=1, max_length=64)]


@router.get("", response_model=list[ToolOut])
def list_tools(request: Request, key: AppOrAdminKey) -> list[dict[str, Any]]:
    """The tenant's registered tools, by name."""
    return [tool.to_dict() for tool in memory_of(request).tools.list(key.tenant_id)]


@router.post("", status_code=201, response_model=ToolOut)
def register_tool(request: Request, body: ToolIn, key: AppOrAdminKey) -> dict[str, Any]:
    """Register a tool for the tenant, or replace the one of the same name."""
    tool = memory_of(request).tools.register(
        key.tenant_id, body.definition, use_when=body.use_when, risk=body.risk
    )
    return tool.to_dict()


@router.delete("/{name}", status_code=204, response_class=Response)
def delete_tool(request: Request, name: ToolName, key: AppOrAdminKey) -> Response:
    """Remove a tool of the tenant; 404 when it has none of that name."""
    memory_of(request).tools.delete(key.tenant_id, name)
    return Response(status_code=204)
