"""The ``convmem`` command line: thin, it calls the engine and prints."""

from __future__ import annotations

import json
import sys

import click

from convmem.cli_service import keys, serve
from convmem.engine import open as open_memory
from convmem.errors import ConvmemError


def _fail(exc: ConvmemError) -> None:
    click.echo(f"error: {exc}", err=True)
    sys.exit(2)


@click.group()
@click.version_option(package_name="convmem")
def main() -> None:
    """convmem: conversation memory for LLM applications."""


main.add_command(serve)
main.add_command(keys)


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


if __name__ == "__main__":
    main()
