"""What every ``convmem`` command shares: opening the database and failing cleanly."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import click

from convmem.errors import BackendUnavailable, ConvmemError
from convmem.retrieval.vector import EMBEDDER_CHOICES, Embedder, named_embedder

# The engine, its configuration and the summarizer load when a command runs, not when the CLI
# starts: `convmem --help` or a usage error need none of them.
if TYPE_CHECKING:
    from convmem.config import Config
    from convmem.engine import Memory

Command = TypeVar("Command", bound=Callable[..., Any])


def fail(exc: ConvmemError | str) -> NoReturn:
    """End the command with exit code 2 and the error's message (which never holds content)."""
    click.echo(f"error: {exc}", err=True)
    sys.exit(2)


def echo_rows(rows: Iterable[str]) -> None:
    """A listing, one row a line; an empty one says so instead of printing nothing."""
    empty = True
    for row in rows:
        click.echo(row)
        empty = False
    if empty:
        click.echo("(none)")


def _sqlite_file(db: str) -> str | None:
    """The file ``db`` names, when it names an SQLite file (a server URL: None, the server says)."""
    if "://" in db and not db.startswith("sqlite:///"):
        return None
    path = db.removeprefix("sqlite:///")
    return None if path == ":memory:" else path


def db_option(*, creates: bool = False) -> Callable[[Command], Command]:
    """``--db``, or ``CONVMEM_DB``, for every command. Only a command that may start a database
    (``creates``: keys create, serve) opens a file that does not exist, and only in a folder
    that does; the others end with "no such database", so a mistyped path is not silently a
    new, empty database (nor a tree of new folders)."""

    def exists(ctx: click.Context, param: click.Parameter, value: str) -> str:
        path = _sqlite_file(value)
        if path is None or os.path.exists(path):
            return value
        if not creates:
            fail(f"no such database: {value}")
        folder = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(folder):
            fail(f"no such folder: {folder} (create it first to start a database there)")
        return value

    return click.option(
        "--db", envvar="CONVMEM_DB", required=True, callback=exists,
        help="Database path, sqlite:///path or postgresql://… [CONVMEM_DB].",
    )  # fmt: skip


@contextmanager
def opened(
    db: str, config: Config | None = None, embedder: Embedder | None = None
) -> Iterator[Memory]:
    """The database for one command; a convmem error inside ends the command via ``fail``."""
    from convmem.engine import open as open_memory

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


def llm_options(function: Command) -> Command:
    """``--llm-base-url``, ``--llm-model``, ``--llm-api-key-env``, ``--llm-timeout``: the
    OpenAI-compatible model summaries come from (see ``llm_config``)."""
    options = [
        click.option("--llm-base-url", help="OpenAI-compatible endpoint, e.g. http://host/v1."),
        click.option("--llm-model", help="Model name; with it, summaries come from the model."),
        click.option(
            "--llm-api-key-env",
            default="OPENAI_API_KEY",
            show_default=True,
            help="Environment variable holding the API key (the key never goes on the line).",
        ),
        click.option("--llm-timeout", default=60.0, show_default=True, help="Seconds per call."),
    ]
    for option in reversed(options):
        function = option(function)
    return function


def llm_config(base_url: str | None, model: str | None, key_env: str, timeout: float) -> Config:
    """The configuration the LLM options ask for: the extractive summarizer without a model."""
    from convmem.config import Config
    from convmem.summarize.llm import LLMSummarizerConfig

    if not model:
        return Config()
    if not base_url:
        raise click.UsageError("--llm-model needs --llm-base-url")
    llm = LLMSummarizerConfig(
        base_url=base_url,
        model=model,
        api_key=os.environ.get(key_env) or "not-needed",
        timeout=timeout,
    )
    return Config(summarizer=llm)
