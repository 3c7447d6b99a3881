"""``convmem eval behaviour``: the behaviour suite against a database (or a running service)."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterable
from contextlib import ExitStack
from typing import TYPE_CHECKING, Any

import click

from convmem.cli.common import db_option, embedder_option, fail, llm_config, llm_options, opened
from convmem.errors import ConvmemError

if TYPE_CHECKING:
    from convmem.retrieval.vector import Embedder


@click.command("behaviour")
@db_option()
@click.option("--json", "json_out", type=click.Path(dir_okay=False), help="Write the result here.")
@click.option("--plot", "plot_out", type=click.Path(dir_okay=False), help="Write a PNG plot here.")
@click.option(
    "--cases", "case_files", multiple=True, type=click.Path(exists=True, dir_okay=False),
    help="A case file of your own, played after the shipped ones (repeatable).",
)  # fmt: skip
@click.option(
    "--url", help="Play the cases over the HTTP API of the service at this URL, which must serve "
    "--db (the suite issues its keys there).",
)  # fmt: skip
@click.option("--kind", "kinds", multiple=True, help="Play only cases of this kind (repeatable).")
@click.option("--case", "case_ids", multiple=True, help="Play only the case with this id.")
@embedder_option(
    "none", "The embedder the suite's writes and searches use (hashing: the dependency-free one; "
    "use the one your application uses).",
)  # fmt: skip
@llm_options
def behaviour_command(
    db: str,
    json_out: str | None,
    plot_out: str | None,
    case_files: tuple[str, ...],
    url: str | None,
    kinds: tuple[str, ...],
    case_ids: tuple[str, ...],
    embedder: Embedder | None,
    llm_base_url: str | None,
    llm_model: str | None,
    llm_api_key_env: str | None,
    llm_timeout: float | None,
) -> None:
    """Recall, non-recall, isolation, correction, compaction fidelity, deletion, injection
    resistance and never-store, case by case, in tenants of the run's own (cleaned up
    afterwards). Exits 1 when any case fails; a case that crashes is one failure. With
    --llm-model, summaries come from that model (the suite runs the summary jobs its requests
    queue, as a worker would) and the faithfulness figures are its, measured on what it wrote
    before the summarizer's checks."""
    from convmem.eval import behaviour

    plot_out = plot_possible(plot_out)
    try:
        cases = behaviour.load(case_files)
    except ConvmemError as exc:
        fail(exc)
    if kinds:
        cases = [c for c in cases if c.kind in kinds]
    if case_ids:
        cases = [c for c in cases if c.id in case_ids]
    if not cases:
        fail("no case matches --kind / --case")
    config = llm_config(llm_base_url, llm_model, llm_api_key_env, llm_timeout)
    summarizer = f"llm:{llm_model}" if llm_model else "extractive"
    with opened(db, config=config, embedder=embedder) as memory, ExitStack() as stack:
        driver: behaviour.Driver = behaviour.EngineDriver(memory)
        if url is not None:
            import httpx

            from convmem.eval.behaviour.http import HttpDriver

            client = stack.enter_context(httpx.Client(base_url=url.rstrip("/"), timeout=120))
            driver = HttpDriver(client, memory)
        with click.progressbar(length=len(cases), label="behaviour", file=sys.stderr) as bar:
            try:
                result = behaviour.run_suite(
                    driver, cases, summarizer=summarizer, progress=lambda _: bar.update(1),
                    fatal=httpx_errors(),  # the service unreachable ends the run, not a case
                )  # fmt: skip
            except httpx_errors() as exc:
                fail(f"the service at {url} cannot be reached ({type(exc).__name__})")
    report(result, behaviour.table(result), json_out, plot_out, behaviour.plot)
    if result["failed"]:
        sys.exit(1)


def plot_possible(plot_out: str | None) -> str | None:
    """``plot_out``, or None with a note when matplotlib (the eval extra) is not installed."""
    if plot_out is not None:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            click.echo("note: matplotlib is not installed (pip install convmem[eval]); no plot",
                       err=True)  # fmt: skip
            return None
    return plot_out


def report(
    result: dict[str, Any], lines: Iterable[str], json_out: str | None, plot_out: str | None,
    plot: Callable[[dict[str, Any], str], None],
) -> None:  # fmt: skip
    """An evaluation's tables on the terminal, its result as JSON and its plot where asked."""
    for line in lines:
        click.echo(line)
    if json_out is not None:
        with open(json_out, "w", encoding="utf-8") as f:
            json.dump(result, f, indent=2)
    if plot_out is not None:
        plot(result, plot_out)


def httpx_errors() -> tuple[type[Exception], ...]:
    """The transport errors of a service run (none without httpx: the engine raises none)."""
    try:
        import httpx
    except ImportError:
        return ()
    return (httpx.TransportError,)
