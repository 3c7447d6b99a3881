"""The ``convmem`` command line: thin, it calls the engine and prints."""

from __future__ import annotations

import json
import sys

import click

from convmem.engine import open as open_memory
from convmem.errors import ConvmemError


def _fail(exc: ConvmemError) -> None:
    click.echo(f"error: {exc}", err=True)
    sys.exit(2)


@click.group()
@click.version_option(package_name="convmem")
def main() -> None:
    """convmem: conversation memory for LLM applications."""


@main.command()
@click.option("--turns", default=60, show_default=True, help="How many scripted turns to play.")
def demo(turns: int) -> None:
    """Play a scripted conversation at a small budget and show what each request holds."""
    from convmem.demo import run_demo

    run_demo(click.echo, turns=turns)


@main.group()
def conversations() -> None:
    """Inspect the conversations in a database file."""


_db = click.option("--db", required=True, help="Database path or sqlite:///path.")
_tenant = click.option("--tenant", required=True, help="Tenant id.")
_user = click.option("--user", required=True, help="User id.")


@conversations.command("list")
@_db
@_tenant
@_user
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def conversations_list(db: str, tenant: str, user: str, as_json: bool) -> None:
    """List a user's conversations."""
    try:
        with open_memory(db) as memory:
            records = memory.scope(tenant, user).conversations(limit=1000)
    except ConvmemError as exc:
        _fail(exc)
        return
    if as_json:
        click.echo(json.dumps([r.to_dict() for r in records], indent=2))
        return
    for record in records:
        flag = " (temporary)" if record.temporary else ""
        click.echo(f"{record.id}  {record.created_at:%Y-%m-%d %H:%M}  {record.title or ''}{flag}")


@conversations.command("show")
@_db
@_tenant
@_user
@click.argument("conversation_id")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def conversations_show(
    db: str, tenant: str, user: str, conversation_id: str, as_json: bool
) -> None:
    """Show a conversation's message tree; '*' marks the active branch."""
    try:
        with open_memory(db) as memory:
            conv = memory.scope(tenant, user).conversation(conversation_id)
            messages = conv.messages()
            active = {m.id for m in conv.branch()}
    except ConvmemError as exc:
        _fail(exc)
        return
    if as_json:
        click.echo(json.dumps([m.to_dict() for m in messages], indent=2))
        return
    children: dict[str | None, list[str]] = {}
    by_id = {m.id: m for m in messages}
    for m in messages:
        children.setdefault(m.parent_id, []).append(m.id)
    stack = [(mid, 0) for mid in reversed(children.get(None, []))]
    while stack:
        mid, indent = stack.pop()
        m = by_id[mid]
        mark = "*" if mid in active else " "
        calls = f" calls {','.join(c.name for c in m.tool_calls)}" if m.tool_calls else ""
        text = m.content.replace("\n", " ")
        text = text if len(text) <= 70 else text[:67] + "..."
        click.echo(f"{mark} {'  ' * indent}{m.id} [{m.role}]{calls} {text}")
        kids = children.get(mid, [])
        # a linear run keeps its indent; a fork indents each branch
        step = 1 if len(kids) > 1 else 0
        stack.extend((kid, indent + step) for kid in reversed(kids))


@main.group()
def memory() -> None:
    """See, export and delete what is remembered about a user."""


@memory.command("list")
@_db
@_tenant
@_user
@click.option("--all", "show_all", is_flag=True, help="Include superseded and rejected records.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def memory_list(db: str, tenant: str, user: str, show_all: bool, as_json: bool) -> None:
    """List a user's memories (current and proposed by default)."""
    try:
        with open_memory(db) as mem:
            scope = mem.scope(tenant, user, actor="cli")
            records = scope.memories.list(status=None if show_all else ("confirmed", "proposed"))
    except ConvmemError as exc:
        _fail(exc)
        return
    if as_json:
        click.echo(json.dumps([r.to_dict() for r in records], indent=2))
        return
    for r in records:
        flag = " CONFLICT" if r.conflicts_with_id else ""
        click.echo(f"{r.id}  {r.status:<10} {r.category:<10} {r.updated_at:%Y-%m-%d}  "
                   f"{r.text}{flag}")  # fmt: skip


@memory.command("export")
@_db
@_tenant
@_user
@click.option("--out", type=click.Path(dir_okay=False), help="Write to a file, not stdout.")
def memory_export(db: str, tenant: str, user: str, out: str | None) -> None:
    """Export all of a user's data as JSON."""
    try:
        with open_memory(db) as mem:
            data = mem.scope(tenant, user, actor="cli").export()
    except ConvmemError as exc:
        _fail(exc)
        return
    text = json.dumps(data, indent=2, ensure_ascii=False, default=str)
    if out:
        with click.open_file(out, "w", encoding="utf-8") as handle:
            handle.write(text + "\n")
    else:
        click.echo(text)


@memory.command("delete")
@_db
@_tenant
@_user
@click.argument("memory_id", required=False)
@click.option("--everything", is_flag=True, help="Delete ALL of the user's data.")
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
def memory_delete(
    db: str, tenant: str, user: str, memory_id: str | None, everything: bool, yes: bool
) -> None:
    """Delete one memory, or with --everything all of the user's data."""
    if bool(memory_id) == everything:
        raise click.UsageError("give a MEMORY_ID or --everything, not both")
    if everything and not yes:
        click.confirm(f"Delete every conversation and memory of {user} in {tenant}?", abort=True)
    try:
        with open_memory(db) as mem:
            scope = mem.scope(tenant, user, actor="cli")
            if everything:
                counts = scope.delete_all()
                click.echo(f"deleted {sum(counts.values())} rows")
            else:
                assert memory_id is not None
                deleted = scope.memories.delete(memory_id)
                click.echo(f"deleted {len(deleted)} record(s): {' '.join(deleted)}")
    except ConvmemError as exc:
        _fail(exc)


if __name__ == "__main__":
    main()
