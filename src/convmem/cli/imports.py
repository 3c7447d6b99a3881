"""``convmem import``: a ChatGPT data export or a Mem0 export, through the bulk write path."""

from __future__ import annotations

import time

import click

from convmem.cli.common import db_option, opened

_tenant = click.option("--tenant", required=True, help="Tenant to import into.")
_as_named = click.option(
    "--as-named", is_flag=True,
    help="Administrators: import each record for the user the file names (others: --user). "
    "Without it, a file naming any user but --user is refused and nothing is imported.",
)  # fmt: skip


@click.group("import")
def import_group() -> None:
    """Import conversations or memories from other tools (re-running skips what is there)."""


@import_group.command("openai-chat")
@db_option(creates=True)
@_tenant
@click.option("--user", required=True, help="User the conversations belong to.")
@_as_named
@click.option("--batch-messages", type=click.IntRange(1), default=None,
              help="Messages per transaction (whole conversations; default 5000).")  # fmt: skip
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
def import_openai_chat(
    db: str, tenant: str, user: str, as_named: bool, batch_messages: int | None, file: str
) -> None:
    """A ChatGPT export's conversations.json, every branch kept. A stopped run resumes: the
    conversations already imported are skipped. Run `convmem worker --embedder …` afterwards
    for vectors."""
    from convmem.importers import openai_chat
    from convmem.importers.bulk import (
        MESSAGES_PER_TRANSACTION,
        import_trees,
        import_trees_as_named,
    )

    with opened(db) as memory:  # a convmem error inside ends the command (exit 2)
        trees = openai_chat.read(file)
        started = time.perf_counter()
        with click.progressbar(length=len(trees), label="conversations", file=None) as bar:
            batch = batch_messages or MESSAGES_PER_TRANSACTION
            if as_named:
                report = import_trees_as_named(
                    memory, tenant, user, openai_chat.SOURCE, trees, progress=bar.update,
                    batch_messages=batch,
                )  # fmt: skip
            else:
                report = import_trees(
                    memory.scope(tenant, user), openai_chat.SOURCE, trees, progress=bar.update,
                    batch_messages=batch,
                )  # fmt: skip
        seconds = time.perf_counter() - started
        # the page's "People and things" are derived from the messages: read them now
        facts = memory.scope(tenant, user).entities.rebuild() if report.messages else None
    rate = report.messages / seconds if seconds > 0 else 0.0
    click.echo(f"imported {report.conversations} conversations, {report.messages} messages "
               f"({rate:,.0f} messages/s); {report.already_imported} already imported")  # fmt: skip
    if facts is not None:
        click.echo(f"noted {facts} statements about people and things")
    for reason, count in sorted(report.skipped.items()):
        click.echo(f"skipped {count}: {reason}")


@import_group.command("mem0")
@db_option(creates=True)
@_tenant
@click.option(
    "--user",
    default=None,
    help="User the memories belong to (with --as-named: records naming no user).",
)
@_as_named
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
def import_mem0(db: str, tenant: str, user: str | None, as_named: bool, file: str) -> None:
    """A Mem0 export (get_all results) as confirmed memories of --user, each through the
    never-store policy; blocked records are listed with their reason."""
    from convmem.importers import mem0

    if user is None and not as_named:
        raise click.UsageError("--user is required (or --as-named, for an administrator)")
    with opened(db) as memory:
        report = mem0.import_mem0(memory, tenant, mem0.read(file), user=user, as_named=as_named)
    click.echo(f"saved {report.saved} memories; {report.already_present} already present")
    for ident, reason in report.blocked:
        click.echo(f"blocked {ident}: {reason}")
    for ident, error in report.invalid:
        click.echo(f"invalid {ident}: {error}")
