"""``convmem embedder switch`` and ``convmem embedder status``: change a tenant's embedder while
its searches go on (``Memory.embedder_switch``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from convmem.cli.common import db_option, fail, opened
from convmem.cli.index import progress_line
from convmem.errors import ConvmemError, InvalidInput
from convmem.retrieval.vector import named_embedder

if TYPE_CHECKING:
    from convmem.retrieval.vector import Embedder


def _embedder(name: str) -> Embedder:
    try:
        embedder = named_embedder(name)
    except InvalidInput as exc:
        raise click.UsageError(str(exc)) from exc
    if embedder is None:
        raise click.UsageError("a switch needs an embedder to switch to, not 'none'")
    return embedder


@click.group("embedder")
def embedder_group() -> None:
    """Change the embedder a tenant's vectors come from, without downtime."""


@embedder_group.command("switch")
@db_option()
@click.argument("name")
@click.option("--tenant", required=True, help="The tenant to switch.")
@click.option("--batch-size", default=256, show_default=True, type=click.IntRange(1, 100_000))
@click.option(
    "--build-only",
    is_flag=True,
    help="Build the new vectors and stop before the switch (run again without it to finish).",
)
def switch(db: str, name: str, tenant: str, batch_size: int, build_only: bool) -> None:
    """Build NAME's vectors for the tenant while the current ones serve, then switch to them
    at once and erase the old ones (NAME: minilm, hashing, st:/path, openai:…)."""
    embedder = _embedder(name)
    with opened(db) as memory, progress_line("embedded") as progress:
        switches = memory.embedder_switch
        try:
            if build_only:
                if switches.status(tenant).target != embedder.name:
                    switches.begin(tenant, embedder)
                for _ in range(3):  # passes: each catches up with the writes made meanwhile
                    if not sum(switches.build(tenant, embedder, batch_size=batch_size,
                                              progress=progress).values()):  # fmt: skip
                        break
                counts = switches.status(tenant).counts
                click.echo(f"built {embedder.name} for {tenant}: {counts}")
                return
            changed = switches.switch(tenant, embedder, batch_size=batch_size, progress=progress)
        except ConvmemError as exc:
            fail(exc)
    rows = ", ".join(f"{n} {table}" for table, n in sorted(changed.items()))
    click.echo(f"{tenant} now uses {embedder.name} ({rows})")


@embedder_group.command("status")
@db_option()
@click.option("--tenant", required=True, help="The tenant to report.")
def status(db: str, tenant: str) -> None:
    """The tenant's embedder, and the one being built with how far its build is."""
    with opened(db) as memory:
        try:
            state = memory.embedder_switch.status(tenant)
        except ConvmemError as exc:
            fail(exc)
    click.echo(f"active: {state.active or '(as configured: no switch made)'}")
    if state.target is None or state.counts is None:
        click.echo("switch: none under way")
        return
    c = state.counts
    click.echo(f"building: {state.target} ({'ready' if state.ready else 'in progress'})")
    click.echo(f"turns: {c.turns_staged} built, {c.turns_left} left")
    click.echo(f"memories: {c.memories_staged} built, {c.memories_left} left")
    click.echo(f"words left: {c.words_left}")


@embedder_group.command("cancel")
@db_option()
@click.option("--tenant", required=True, help="The tenant whose build to drop.")
def cancel(db: str, tenant: str) -> None:
    """Drop the build under way (the current embedder keeps serving)."""
    with opened(db) as memory:
        try:
            dropped = memory.embedder_switch.cancel(tenant)
        except ConvmemError as exc:
            fail(exc)
    click.echo(f"dropped {dropped} built vectors")
