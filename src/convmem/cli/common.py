"""What every ``convmem`` command shares: opening the database and failing cleanly."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import click

from convmem.errors import BackendUnavailable, ConvmemError, InvalidInput
from convmem.retrieval.vector import Embedder, named_embedder

# The engine, its configuration and the summarizer load when a command runs, not when the CLI
# starts: `convmem --help` or a usage error need none of them.
if TYPE_CHECKING:
    from convmem.config import Config
    from convmem.engine import Memory
    from convmem.retrieval.rerank import Reranker

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


def check_database(value: str, *, creates: bool) -> str:
    """``value`` when it names a database the command may open. Only a command that may start a
    database (``creates``: keys create, serve) opens a file that does not exist, and only in a
    folder that does; the others end with "no such database", so a mistyped path is not
    silently a new, empty database (nor a tree of new folders)."""
    path = _sqlite_file(value)
    if path is None or os.path.exists(path):
        return value
    if not creates:
        fail(f"no such database: {value}")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        fail(f"no such folder: {folder} (create it first to start a database there)")
    return value


def db_option(*, creates: bool = False) -> Callable[[Command], Command]:
    """``--db``, or ``CONVMEM_DB``, for every command (see ``check_database``)."""

    def exists(ctx: click.Context, param: click.Parameter, value: str) -> str:
        return check_database(value, creates=creates)

    return click.option(
        "--db", envvar="CONVMEM_DB", required=True, callback=exists,
        help="Database path, sqlite:///path or postgresql://… [CONVMEM_DB].",
    )  # fmt: skip


@contextmanager
def opened(
    db: str,
    config: Config | None = None,
    embedder: Embedder | None = None,
    reranker: Reranker | None = None,
    session: str | None = None,
) -> Iterator[Memory]:
    """The database for one command; a convmem error inside ends the command via ``fail``.
    The command's models are the ones given: none unless the command resolved some (its flags,
    or ``convmem.cli.config.setup``), never the environment's behind its back. The session tier
    is the configuration's (``session``; None: ``CONVMEM_SESSION`` or ``CONVMEM_CONFIG``'s), so
    a command's writes move the generations the service's cached state is checked against."""
    from convmem.engine import open as open_memory

    try:
        with open_memory(
            db,
            config=config,
            embedder=embedder or "none",
            reranker=reranker or "none",
            session=session,
        ) as memory:
            yield memory
    except ConvmemError as exc:
        fail(exc)


def embedder_option(
    default: str, help: str, envvar: str | None = None
) -> Callable[[Command], Command]:
    """``--embedder``: a model name (``minilm``, ``hashing``, ``none``, ``st:/path``,
    ``openai:…``: ``convmem.retrieval.model_names``) that reaches the command as the embedder
    itself (or None); a bad name, or a model that is not installed, is a usage error (exit code
    2) saying why."""

    def chosen(ctx: click.Context, param: click.Parameter, value: str) -> Embedder | None:
        try:
            return named_embedder(value)
        except (BackendUnavailable, InvalidInput) as exc:
            raise click.UsageError(str(exc)) from exc

    return click.option("--embedder", default=default, metavar="NAME", show_default=True,
                        envvar=envvar, callback=chosen, help=help)  # fmt: skip


def device_option(function: Command) -> Command:
    """``--device``: where an in-process model embeds (cpu; cuda or cuda:N when present)."""
    return click.option(
        "--device", default="cpu", show_default=True, metavar="DEVICE",
        help="Where the embedding model runs: cpu, or cuda / cuda:N (when torch sees the "
        "device; asked for and absent, the command stops with the reason).",
    )(function)  # fmt: skip


def placed(embedder: Embedder | None, device: str) -> Embedder | None:
    """``embedder`` on ``device``; a device this process cannot use is a usage error (exit 2)."""
    from convmem.retrieval.vector import on_device

    try:
        return on_device(embedder, device)
    except InvalidInput as exc:
        raise click.UsageError(str(exc)) from exc


def llm_options(function: Command) -> Command:
    """``--llm-base-url``, ``--llm-model``, ``--llm-api-key-env``, ``--llm-timeout``: the
    OpenAI-compatible model summaries come from (see ``llm_config``)."""
    options = [
        click.option("--llm-base-url", help="OpenAI-compatible endpoint, e.g. http://host/v1."),
        click.option("--llm-model", help="Model name; with it, summaries come from the model."),
        click.option(
            "--llm-api-key-env",
            help="Environment variable holding the API key (the key never goes on the line) "
            "[default: OPENAI_API_KEY].",
        ),
        click.option("--llm-timeout", type=float, help="Seconds per call [default: 60]."),
    ]
    for option in reversed(options):
        function = option(function)
    return function


def llm_config(
    base_url: str | None, model: str | None, key_env: str | None, timeout: float | None
) -> Config:
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
        api_key=os.environ.get(key_env or "OPENAI_API_KEY") or "not-needed",
        timeout=timeout or 60.0,
    )
    return Config(summarizer=llm)
