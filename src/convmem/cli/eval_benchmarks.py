"""``convmem eval locomo|beam|realtalk PATH``: one command per benchmark layout, the same
options and the same report (``convmem.eval.harness``)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

import click

from convmem.cli.common import embedder_option, fail
from convmem.cli.eval import plot_possible, report
from convmem.errors import ConvmemError
from convmem.retrieval.rerank import named_reranker

if TYPE_CHECKING:
    from convmem.eval.harness import Dataset
    from convmem.retrieval.vector import Embedder


def benchmark_command(
    name: str, path_type: click.Path, load: Callable[..., Dataset], doc: str,
    extra: Callable[[Callable[..., None]], Callable[..., None]] | None = None,
) -> click.Command:  # fmt: skip
    """The ``eval NAME PATH`` command: ``load(path, **extra options)`` reads the layout."""

    def command(
        path: str,
        json_out: str | None,
        plot_out: str | None,
        embedder: Embedder | None,
        reranker: str | None,
        questions: int | None,
        samples: str | None,
        split: str | None,
        entity_cross_check: bool,
        no_context: bool,
        **options: object,
    ) -> None:
        from convmem.eval import harness
        from convmem.eval.splits import split_samples

        plot_out = plot_possible(plot_out)
        try:
            chosen = named_reranker(reranker) if reranker else None
            dataset = load(path, **options)
            if split:
                dataset = dataset.only(split_samples(dataset.name, split))
            if samples:
                dataset = dataset.only([s.strip() for s in samples.split(",") if s.strip()])
        except ConvmemError as exc:
            fail(exc)
        total = sum(len(s.questions[:questions]) for s in dataset.samples) + len(dataset.samples)
        with click.progressbar(length=total, label=dataset.name, file=sys.stderr) as bar:
            result = harness.evaluate(
                dataset, embedder=embedder, reranker=chosen, max_questions=questions,
                budgets=() if no_context else harness.BUDGETS,
                progress=lambda n: bar.update(n or 1), entity_cross_check=entity_cross_check,
            )  # fmt: skip
        if split:
            result["split"] = split.upper()
        report(result, harness.table(result), json_out, plot_out, harness.plot)

    command.__doc__ = doc
    decorators = [
        click.command(name),
        click.argument("path", type=path_type),
        click.option("--json", "json_out", type=click.Path(dir_okay=False),
                     help="Write the result here."),
        click.option("--plot", "plot_out", type=click.Path(dir_okay=False),
                     help="Write a PNG plot here."),
        embedder_option(
            "auto",
            "auto: all-MiniLM-L6-v2 when the embeddings extra is installed, else none (lexical "
            "only); minilm-int8: the same model quantized (faster queries); hashing: the "
            "dependency-free test embedder.",
        ),
        click.option("--reranker", metavar="NAME",
                     help="Also rank with this reranker over the hybrid ranking (a row "
                     "'hybrid+rerank'): cross-encoder:/path, cohere:…, tei+URL …"),
        click.option("--questions", type=int, help="Evaluate at most N questions per sample."),
        click.option("--samples", help="Comma-separated sample ids to evaluate (default: all)."),
        click.option("--split", type=click.Choice(["A", "B"], case_sensitive=False),
                     help="Only the samples of this development split (convmem.eval.splits)."),
        click.option("--entity-cross-check", is_flag=True,
                     help="Also tune entity recall's settings on each sample and test them on "
                     "the others."),
        click.option("--no-context", is_flag=True,
                     help="Recall and latency only: no evidence-in-context assemblies."),
    ]  # fmt: skip
    wrapped: Callable[..., None] = command
    if extra is not None:
        wrapped = extra(wrapped)
    for decorator in reversed(decorators[1:]):
        wrapped = decorator(wrapped)
    made: click.Command = decorators[0](wrapped)
    return made


def _locomo(path: str, sessions: int | None) -> Dataset:
    from convmem.eval import locomo

    return locomo.dataset(path, sessions=sessions)


def _beam(path: str) -> Dataset:
    from convmem.eval import beam

    return beam.dataset(path)


def _realtalk(path: str) -> Dataset:
    from convmem.eval import realtalk

    return realtalk.dataset(path)


locomo_command = benchmark_command(
    "locomo", click.Path(exists=True, dir_okay=False), _locomo,
    """Evidence recall@k (with and without entity recall, overall, per category and for the
    questions that name an entity), evidence in context and search latency on a LoCoMo file.""",
    click.option("--sessions", type=int, help="Import only the first N sessions of each sample."),
)  # fmt: skip
beam_command = benchmark_command(
    "beam", click.Path(exists=True, file_okay=False), _beam,
    """The same measures on BEAM's user-assistant chats, per ability: PATH is a folder of chat
    folders (each with chat.json and probing_questions/) or one chat folder.""",
)  # fmt: skip
realtalk_command = benchmark_command(
    "realtalk", click.Path(exists=True), _realtalk,
    """The same measures on REALTALK's messaging chats, per category: PATH is a folder of
    Chat_*.json files or one such file.""",
)  # fmt: skip
