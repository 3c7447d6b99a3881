"""``convmem reindex`` and ``convmem backfill``: rebuild the derived search data, with progress."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

import click

from convmem.cli.common import db_option, device_option, embedder_option, opened, placed

if TYPE_CHECKING:
    from convmem.domain.indexing import Progress
    from convmem.retrieval.vector import Embedder


@contextmanager
def progress_line(verb: str) -> Iterator[Progress]:
    """A progress display on stderr, fed after each batch: on a terminal one line redrawn in
    place with a bar that moves a notch a batch (the total is not known up front), else a plain
    line a batch so logs stay readable."""
    terminal = sys.stderr.isatty()
    batches = 0

    def update(kind: str, done: int) -> None:
        nonlocal batches
        batches += 1
        if terminal:
            bar = ("=" * (batches % 21)).ljust(20)
            click.echo(f"\r\033[K{verb} {kind} [{bar}] {done:,}", err=True, nl=False)
        else:
            click.echo(f"{verb} {kind}: {done:,}", err=True)

    try:
        yield update
    finally:
        if terminal and batches:
            click.echo("", err=True)


@click.command()
@db_option()
@click.option("--batch-size", default=500, show_default=True, type=click.IntRange(1, 100_000))
def reindex(db: str, batch_size: int) -> None:
    """Index every message the search index lacks (the index is derived from the messages)."""
    with opened(db) as memory, progress_line("indexed") as progress:
        done = memory.reindex(batch_size=batch_size, progress=progress)
    click.echo(f"indexed {done} messages")


@click.command()
@db_option()
@embedder_option("minilm", "The embedder whose vectors are missing (minilm: the embeddings "
                 "extra; hashing: the dependency-free test double).")  # fmt: skip
@click.option("--batch-size", default=256, show_default=True, type=click.IntRange(1, 100_000))
@click.option(
    "--refresh",
    is_flag=True,
    help="Also embed again the turns that already have a vector from this embedder (once, "
    "after an upgrade that changed what a turn's vector is made of: see the CHANGELOG).",
)
@device_option
def backfill(
    db: str, embedder: Embedder | None, batch_size: int, refresh: bool, device: str
) -> None:
    """Embed every turn, word and memory written without a vector from this embedder."""
    if embedder is None:
        raise click.UsageError("backfill needs an embedder: --embedder minilm")
    embedder = placed(embedder, device)
    from convmem.config import Config

    config = Config(embed_on_write=False)  # only the backfill embeds here
    with opened(db, config=config, embedder=embedder) as memory, progress_line("embedded") as pr:
        counts = memory.backfill_embeddings(batch_size=batch_size, progress=pr, refresh=refresh)
    click.echo(", ".join(f"{counts[kind]} {kind}" for kind in ("messages", "terms", "memories")))
