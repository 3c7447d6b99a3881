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
from convmem.errors import ConvmemError


def fail(exc: ConvmemError) -> NoReturn:
    """End the command with exit code 2 and the error's message (which never holds content)."""
    click.echo(f"error: {exc}", err=True)
    sys.exit(2)


@contextmanager
def opened(db: str, config: Config | None = None) -> Iterator[Memory]:
    """The database for one command; a convmem error inside ends the command via ``fail``."""
    try:
        with open_memory(db, config=config) as memory:
            yield memory
    except ConvmemError as exc:
        fail(exc)
