"""``convmem entities rebuild``: derive a user's people and things again from their messages
(after an import, or after an upgrade of the extractor)."""

from __future__ import annotations

import click

from convmem.cli.common import db_option, opened


@click.group("entities")
def entities_group() -> None:
    """The people and things read from the conversations (derived data)."""


@entities_group.command("rebuild")
@db_option()
@click.option("--tenant", required=True, help="The user's tenant.")
@click.option("--user", required=True, help="The user whose entities are derived again.")
def rebuild(db: str, tenant: str, user: str) -> None:
    """Derive the user's entities again from every message, with the deterministic extractor.
    Statements the user confirmed stay confirmed; the messages are not changed."""
    with opened(db) as memory:
        facts = memory.scope(tenant, user).entities.rebuild()
    click.echo(f"rebuilt the entities of {user}: {facts} statements")
