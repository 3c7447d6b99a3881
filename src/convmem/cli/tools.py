"""``convmem tools``: a tenant's tool registry from the command line, thin over
``Memory.tools``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from convmem.cli.common import db_option, echo_rows, embedder_option, fail, opened
from convmem.errors import InvalidInput
from convmem.importers.files import read_json
from convmem.model.tools import RISKS, RegisteredTool

if TYPE_CHECKING:
    from convmem.retrieval.vector import Embedder

_tenant = click.option("--tenant", required=True, help="Tenant id.")


@click.group()
def tools() -> None:
    """Register, list and delete the tools a tenant's requests are offered from."""


def _entries(path: Path) -> list[dict[str, Any]]:
    """The file's tools: one entry ``{"definition", "use_when"?, "risk"?}``, a list of them, or
    ``{"tools": [...]}``; a bare definition is an entry of its own."""
    try:
        data = read_json(path, "tools")
    except InvalidInput as exc:
        fail(exc)
    if isinstance(data, dict) and isinstance(data.get("tools"), list):
        data = data["tools"]
    items = data if isinstance(data, list) else [data]
    entries = []
    for item in items:
        if not isinstance(item, dict):
            fail("each tool must be a JSON object")
        entries.append(item if "definition" in item else {"definition": item})
    return entries


@tools.command("register")
@db_option()
@_tenant
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--risk", type=click.Choice(RISKS), default=None,
              help="Risk of every tool in the file (else each entry's own, else low).")  # fmt: skip
@embedder_option("auto", "Vectors for ranking the tools: minilm (the embeddings extra), auto "
                 "(minilm when installed) or none: words only.")  # fmt: skip
def tools_register(
    db: str, tenant: str, file: Path, risk: str | None, embedder: Embedder | None
) -> None:
    """Register (or replace) the tools in FILE, a JSON file of definitions in any provider's
    shape, each optionally as {"definition": …, "use_when": […], "risk": "high"}."""
    from convmem.tools.registry import ToolEntry

    entries = [
        ToolEntry(e["definition"], e.get("use_when", ()), risk or e.get("risk", "low"))
        for e in _entries(file)
    ]
    with opened(db, embedder=embedder) as memory:
        registered = memory.tools.register_many(tenant, entries)
    for tool in registered:
        click.echo(f"registered {tool.name} ({tool.risk})")


@tools.command("list")
@db_option()
@_tenant
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def tools_list(db: str, tenant: str, as_json: bool) -> None:
    """List a tenant's tools."""
    with opened(db) as memory:
        found = memory.tools.list(tenant)
    if as_json:
        click.echo(json.dumps([t.to_dict() for t in found], indent=2, default=str))
        return
    echo_rows(_row(tool) for tool in found)


def _row(tool: RegisteredTool) -> str:
    hints = f"  {len(tool.use_when)} hints" if tool.use_when else ""
    return f"{tool.name}  {tool.risk:<6}{hints}  {tool.spec.description[:60]}"


@tools.command("delete")
@db_option()
@_tenant
@click.argument("name")
def tools_delete(db: str, tenant: str, name: str) -> None:
    """Remove a tool from the tenant's registry."""
    with opened(db) as memory:
        memory.tools.delete(tenant, name)
    click.echo(f"deleted {name}")
