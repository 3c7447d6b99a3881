"""What every ``convmem`` command shares: opening the database and failing cleanly."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, NoReturn, TypeVar

import click

from convmem.config import Config
from convmem.engine import Memory
from convmem.engine import open as open_memory
from convmem.errors import BackendUnavailable, ConvmemError
from convmem.retrieval.vector import EMBEDDER_CHOICES, Embedder, named_embedder

Command = TypeVar("Command", bound=Callable[..., Any])


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


def embedder_option(
    default: str, help: str, envvar: str | None = None
) -> Callable[[Command], Command]:
    """``--embedder``: a choice among ``EMBEDDER_CHOICES`` that reaches the command as the
    embedder itself (or None); a model that is not installed is a usage error (exit code 2)
    with the install line."""

    def chosen(ctx: click.Context, param: click.Parameter, value: str) -> Embedder | None:
        try:
            return named_embedder(value)
        except BackendUnavailable as exc:
            raise click.UsageError(str(exc)) from exc

    return click.option("--embedder", type=click.Choice(EMBEDDER_CHOICES), default=default,
                        show_default=True, envvar=envvar, callback=chosen, help=help)  # fmt: skip
