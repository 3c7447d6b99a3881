"""``convmem entities rebuild``: derive a user's (or a whole tenant's) people and things again
from their messages (after an import, or after an upgrade of the extractor)."""

from __future__ import annotations

import click

from convmem.cli.common import db_option, opened
from convmem.cli.index import progress_line


@click.group("entities")
def entities_group() -> None:
    """The people and things read from the conversations (derived data)."""


@entities_group.command("rebuild")
@db_option()
@click.option("--tenant", required=True, help="The user's tenant.")
@click.option(
    "--user", default=None,
    help="The user whose entities are derived again (default: every user of the tenant).",
)  # fmt: skip
def rebuild(db: str, tenant: str, user: str | None) -> None:
    """Derive the entities again from every message, with the deterministic extractor: one
    user's, or every user's of the tenant. Statements a user confirmed stay confirmed; the
    messages are not changed."""
    with opened(db) as memory, progress_line("rebuilt") as progress:
        facts = memory.rebuild_entities(tenant, user, progress=progress)
    whose = user if user is not None else f"every user of {tenant}"
    click.echo(f"rebuilt the entities of {whose}: {facts} statements")
