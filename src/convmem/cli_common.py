"""What every ``convmem`` command shares: opening the database and failing cleanly."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import NoReturn

import click

from convmem.config import Config
from convmem.engine import Memory
from convmem.engine import open as open_memory
from convmem.errors import BackendUnavailable, ConvmemError
from convmem.retrieval.vector import Embedder, named_embedder


def fail(exc: ConvmemError) -> NoReturn:
    """End the command with exit code 2 and the error's message (which never holds content)."""
    click.echo(f"error: {exc}", err=True)
    sys.exit(2)


@contextmanager
def opened(
    db: str, config: Config | None = None, embedder: Embedder | None = None
) -> Iterator[Memory]:
    """The database for one command; a convmem error inside ends the command via ``fail``."""
    try:
        with open_memory(db, config=config, embedder=embedder) as memory:
            yield memory
    except ConvmemError as exc:
        fail(exc)


def chosen_embedder(choice: str) -> Embedder | None:
    """The embedder an ``--embedder`` choice names; a model that is not installed is a usage
    error (exit code 2) with the install line."""
    try:
        return named_embedder(choice)
    except BackendUnavailable as exc:
        raise click.UsageError(str(exc)) from exc
