"""The settings ``serve``, ``worker`` and ``mcp`` share, and ``convmem config show``.

Each of those commands takes ``--config`` (the TOML file, else ``CONVMEM_CONFIG``), ``--db``,
``--embedder`` and ``--reranker``; ``convmem.settings`` resolves every key flag > environment >
file > default, so the three processes, and the library, read one configuration.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

import click

from convmem.cli.common import Command, check_database, fail
from convmem.errors import BackendUnavailable, InvalidConfig

if TYPE_CHECKING:
    from convmem.config import Config
    from convmem.retrieval.rerank import Reranker
    from convmem.retrieval.vector import Embedder
    from convmem.settings import Settings


def settings_options(function: Command) -> Command:
    """``--config``, ``--db``, ``--embedder`` and ``--reranker`` (each None unless given: the
    environment, the file and the defaults are ``convmem.settings``'s to apply)."""
    options = [
        click.option("--config", "config_path", type=click.Path(dir_okay=False), default=None,
                     help="The TOML configuration file [CONVMEM_CONFIG]."),
        click.option("--db", default=None,
                     help="Database path, sqlite:///path or postgresql://… [CONVMEM_DB; the "
                     "file's database].",),
        click.option("--embedder", default=None, metavar="NAME",
                     help="Vectors for search and recall: minilm, minilm-int8, hashing, none, "
                     "st:/path, openai:MODEL, openai+URL:MODEL, azure:DEPLOYMENT "
                     "[CONVMEM_EMBEDDER; the file's; default: none]."),
        click.option("--reranker", default=None, metavar="NAME",
                     help="Reorders the fused best of search and recall: cross-encoder:/path, "
                     "cohere:MODEL, jina:MODEL, tei+URL, none [CONVMEM_RERANKER; the file's; "
                     "default: none]."),
    ]  # fmt: skip
    for option in reversed(options):
        function = option(function)
    return function


@dataclass(frozen=True)
class Setup:
    """What a command opens: the database, its configuration and models."""

    db: str
    config: Config
    embedder: Embedder | None
    reranker: Reranker | None
    # the session tier's Redis URL ("none": without; every process writing the database must
    # use the same, or the others' cached state would miss its writes)
    session: str = "none"


def resolve(
    config_path: str | None,
    flags: Mapping[str, object],
    *,
    defaults: Mapping[str, object] | None = None,
) -> Settings:
    """The effective settings; a bad one ends the command (exit code 2) naming the key."""
    from convmem.settings import load_settings

    try:
        return load_settings(flags=flags, path=config_path, defaults=defaults)
    except InvalidConfig as exc:
        fail(exc)


def setup(
    config_path: str | None,
    flags: Mapping[str, object],
    *,
    creates: bool,
) -> Setup:
    """The database, configuration and models a long-running command opens."""
    settings = resolve(config_path, flags)
    db = settings.database
    if db is None:
        fail("no database: pass --db, set CONVMEM_DB or give database in the config file")
    db = check_database(db, creates=creates)
    try:
        config = settings.config()
        embedder = settings.embedder()
        reranker = settings.reranker()
    except InvalidConfig as exc:
        fail(exc)
    except BackendUnavailable as exc:
        raise click.UsageError(str(exc)) from exc
    return Setup(db, config, embedder, reranker, settings.session or "none")


def flags_of(
    db: str | None, embedder: str | None, reranker: str | None, **more: object
) -> dict[str, object]:
    """The settings' flags from the common options (and more: ``summarizer.model`` …)."""
    return {"database": db, "embedder": embedder, "reranker": reranker, **more}


@click.group("config")
def config_group() -> None:
    """The configuration serve, worker, mcp and the library read."""


@config_group.command("show")
@settings_options
def config_show(
    config_path: str | None, db: str | None, embedder: str | None, reranker: str | None
) -> None:
    """Print the effective configuration, each key with where it came from (flag, environment,
    file, default). Passwords in URLs are masked; keys are never printed, only the name of the
    variable that holds one and whether it is set. An SQLite database that does not exist is
    an error, as for the commands that read one."""
    settings = resolve(config_path, flags_of(db, embedder, reranker))
    if settings.database is not None:  # a mistyped path is said here, not at the first start
        check_database(settings.database, creates=False)
    for line in settings.shown():
        click.echo(line)
